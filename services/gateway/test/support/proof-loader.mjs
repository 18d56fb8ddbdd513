// A load generator of its own process: keeps one proof request in flight for each letter id it is
// given, with the given key, until a line arrives on its stdin (or stdin closes). Writes one line
// per answer, the status, so its parent can count them; exits once the requests in flight are in.
// Its own process, so that reading the proofs' bodies takes no turn from the client that measures.
const [base, apiKey, ...ids] = process.argv.slice(2)
let loading = true
process.stdin.on('data', () => (loading = false))
process.stdin.on('end', () => (loading = false))
await Promise.all(
  ids.map(async (id) => {
    while (loading) {
      const response = await fetch(`${base}/cards/${id}/proof`, { headers: { 'x-api-key': apiKey } })
      await response.arrayBuffer()
      process.stdout.write(`${response.status}\n`)
    }
  }),
)
process.exit(0)
