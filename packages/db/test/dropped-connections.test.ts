import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import postgres from 'postgres'
import { testConfig } from '@letters/test/support/context'

/**
 * postgres.js 3.4.9 as patched by patches/postgres+3.4.9.patch (applied on install): a write
 * that lands after the socket closed fails its queries with CONNECTION_CLOSED instead of
 * throwing from a timer, a closed socket's buffered bytes never delay the next connection, and
 * a transaction whose connection closed cannot reach the connection the pool reconnected.
 */

const packageDir = fileURLToPath(new URL('..', import.meta.url))

/**
 * Run in a process of its own, since unpatched it dies: the backend of a transaction (or of a
 * reserved connection) is terminated mid-query, then the pool is used again. Upstream: issues
 * porsager/postgres#1154 and #1208 (the ROLLBACK, or the next query, is written on a null socket).
 */
const terminateMidQuery = `
import postgres from 'postgres'
const url = process.env.DATABASE_URL
const sql = postgres(url, { max: 2, onnotice() {} })
const killer = postgres(url, { max: 1, onnotice() {} })
let pid
const reserved = process.argv[1] === 'reserve' ? await sql.reserve() : undefined
const work = reserved
  ? (async () => { pid = (await reserved\`SELECT pg_backend_pid() AS pid\`)[0].pid; await reserved\`SELECT pg_sleep(5)\` })()
  : sql.begin(async (tx) => { pid = (await tx\`SELECT pg_backend_pid() AS pid\`)[0].pid; await tx\`SELECT pg_sleep(5)\` })
// Its outcome is taken now: the backend's end may be read before the killer's answer, and a
// rejection nobody handles yet would end the process for the wrong reason.
const outcome = work.then(() => 'resolved', (error) => error.code)
while (pid === undefined) await new Promise((resolve) => setTimeout(resolve, 10))
await killer\`SELECT pg_terminate_backend(\${pid})\`
console.log('work:', await outcome)
if (reserved) console.log('next on the reserved connection:', await reserved\`SELECT 1\`.then(() => 'resolved', (error) => error.code))
console.log('pool afterwards:', (await sql\`SELECT 1 AS one\`)[0].one)
await Promise.all([sql.end({ timeout: 1 }), killer.end({ timeout: 1 })])
`

/**
 * The red team's hang (test/e2e/scheduled-letters-under-faults.test.ts): a transaction's backend is
 * terminated mid-query; its callback goes on (a ROLLBACK after the failure) while the pool
 * reconnects the connection for the next query, and the ROLLBACK's bytes reach the new socket
 * before its startup message. Unpatched, the ROLLBACK stays on the connection as a query
 * awaiting an answer, takes the answers of the next backend's queries, and the connection (here
 * the whole pool) waits forever; the next query also fails with the old backend's 57P01. The
 * socket is held back (postgres.js's `socket` option) so the reconnect and the ROLLBACK meet in
 * one turn, as they did on a loaded machine.
 */
const zombieTransaction = `
import { connect } from 'node:net'
import postgres from 'postgres'
const url = process.env.DATABASE_URL
const { hostname, port } = new URL(url)
let hold
const socket = () => new Promise((resolve, reject) => {
  const opened = connect(Number(port || 5432), hostname)
  opened.once('error', reject).once('connect', () => (hold ? hold.then(() => resolve(opened)) : resolve(opened)))
})
const sql = postgres(url, { max: 1, onnotice() {}, socket, backoff: 0 })
const killer = postgres(url, { max: 1, onnotice() {} })
let pid, release
const gate = new Promise((resolve) => (release = resolve))
const transaction = sql.begin(async (tx) => {
  pid = (await tx\`SELECT pg_backend_pid() AS pid\`)[0].pid
  await tx\`SELECT pg_sleep(5)\`.catch(() => {})
  await gate
  throw new Error('the callback goes on after its connection closed')
})
const outcome = transaction.then(() => 'resolved', (error) => error.code)
while (pid === undefined) await new Promise((resolve) => setTimeout(resolve, 10))
await killer\`SELECT pg_terminate_backend(\${pid})\`
console.log('transaction:', await outcome)
let letGo
hold = new Promise((resolve) => (letGo = resolve))
const next = sql\`SELECT 2 AS two\`.then((rows) => rows[0].two, (error) => error.code)
await new Promise((resolve) => setTimeout(resolve, 100))
await new Promise((resolve) => setImmediate(async () => {
  release()
  for (let tick = 0; tick < 20; tick++) await Promise.resolve()
  letGo()
  resolve()
}))
const within = (work) => Promise.race([work, new Promise((resolve) => setTimeout(resolve, 3000, 'no answer after 3 s').unref())])
console.log('next query:', await within(next))
console.log('pool afterwards:', await within(sql\`SELECT \${3}::int AS three\`.then((rows) => rows[0].three, (error) => error.code)))
await Promise.all([sql.end({ timeout: 1 }), killer.end({ timeout: 1 })])
`

/**
 * A transaction's backend is terminated while its callback waits on something else; the pool
 * reconnects and a second transaction takes the connection. Unpatched, the first callback's
 * next query, then its COMMIT, run in the second transaction's session: the COMMIT ends the
 * second transaction early, so its later ROLLBACK undoes nothing.
 */
const lateTransaction = `
import postgres from 'postgres'
const url = process.env.DATABASE_URL
const sql = postgres(url, { max: 1, onnotice() {}, backoff: 0 })
const killer = postgres(url, { max: 1, onnotice() {} })
let pid, release, late
const gate = new Promise((resolve) => (release = resolve))
const first = sql.begin(async (tx) => {
  pid = (await tx\`SELECT pg_backend_pid() AS pid\`)[0].pid
  await gate
  late = tx\`SELECT 1\`.then(() => 'ran', (error) => error.code)
  await late
})
const outcome = first.then(() => 'resolved', (error) => error.code)
while (pid === undefined) await new Promise((resolve) => setTimeout(resolve, 10))
await killer\`SELECT pg_terminate_backend(\${pid})\`
console.log('first transaction:', await outcome)
const second = await sql.begin(async (tx) => {
  await tx\`CREATE TEMP TABLE marks (n int)\`
  release()
  await new Promise((resolve) => setTimeout(resolve, 300))
  throw new Error('rolled back')
}).catch((error) => error.message)
console.log('second transaction:', second)
console.log('late query of the first:', await late)
console.log('second transaction undone:', (await sql\`SELECT to_regclass('pg_temp.marks') IS NULL AS undone\`)[0].undone)
await Promise.all([sql.end({ timeout: 1 }), killer.end({ timeout: 1 })])
`

async function runTerminateMidQuery(mode: 'begin' | 'reserve' | 'zombie' | 'late') {
  const script = mode === 'zombie' ? zombieTransaction : mode === 'late' ? lateTransaction : terminateMidQuery
  const child = spawn(process.execPath, ['--input-type=module', '-e', script, mode], {
    cwd: packageDir,
    env: { ...process.env, DATABASE_URL: testConfig().databaseUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000)
  const [code] = (await once(child, 'exit')) as [number | null]
  clearTimeout(timer)
  return { code, output }
}

describe('postgres.js when the backend of a busy connection is terminated', () => {
  it('fails the transaction with CONNECTION_CLOSED, keeps the process alive and the pool usable', async () => {
    const { code, output } = await runTerminateMidQuery('begin')
    // The in-flight query may also fail with Postgres's own "terminating connection" (57P01).
    expect(output).toMatch(/^work: (CONNECTION_CLOSED|57P01)\npool afterwards: 1\n$/)
    expect(code).toBe(0)
  })

  it('fails the next query on a reserved connection with CONNECTION_CLOSED instead of ending the process', async () => {
    const { code, output } = await runTerminateMidQuery('reserve')
    expect(output).toMatch(/^work: (CONNECTION_CLOSED|57P01)\nnext on the reserved connection: CONNECTION_CLOSED\npool afterwards: 1\n$/)
    expect(code).toBe(0)
  })

  it('keeps a transaction whose connection closed off the reconnected connection: the pool answers the next queries', async () => {
    const { code, output } = await runTerminateMidQuery('zombie')
    expect(output).toBe('transaction: CONNECTION_CLOSED\nnext query: 2\npool afterwards: 3\n')
    expect(code).toBe(0)
  })

  it('fails the queries a transaction sends after its connection closed, so they never run in the next transaction on that connection', async () => {
    const { code, output } = await runTerminateMidQuery('late')
    expect(output).toBe(
      'first transaction: CONNECTION_CLOSED\nsecond transaction: rolled back\nlate query of the first: CONNECTION_CLOSED\nsecond transaction undone: true\n',
    )
    expect(code).toBe(0)
  })
})

describe('postgres.js when a socket closes with a write still buffered', () => {
  it('sends nothing stale to the next connection: the pool answers again at once', async () => {
    const url = testConfig().databaseUrl
    const { hostname, port } = new URL(url)
    let socket: Socket | undefined
    // postgres.js's documented `socket` option (missing from its types) hands us the socket to close.
    const options = {
      max: 1,
      onnotice: () => {},
      socket: () =>
        new Promise<Socket>((resolve, reject) => {
          const opened = connect(Number(port || 5432), hostname)
          opened.once('connect', () => resolve(opened)).once('error', reject)
          socket = opened
        }),
    }
    const sql = postgres(url, options)
    try {
      await sql`SELECT 1`
      // The query is written in a check-phase callback and flushed on the next one; the socket's
      // close callback runs in between, as when a backend dies while the process is busy.
      const first = await new Promise<string>((resolve) =>
        setImmediate(() => {
          const query = sql`SELECT 2`.then(
            () => 'resolved',
            (error: { code?: string }) => String(error.code),
          )
          // A few microtask turns, still within this check phase, then the socket goes.
          void (async () => {
            for (let tick = 0; tick < 3; tick++) await Promise.resolve()
            socket!.destroy()
            resolve(query)
          })()
        }),
      )
      expect(first).toBe('CONNECTION_CLOSED')
      // Unpatched, the next connection's startup message waits behind a stale timer until
      // connect_timeout (30 s by default).
      const next = await Promise.race([
        sql`SELECT 3 AS three`.then((rows) => rows[0]?.three),
        new Promise((resolve) => setTimeout(resolve, 5000, 'still waiting after 5 s')),
      ])
      expect(next).toBe(3)
    } finally {
      await sql.end({ timeout: 1 })
    }
  })
})
