import autocannon from 'autocannon'

/** What one connection sends, again and again: its own headers (an account's key) and body. */
export interface ConnectionRequest {
  headers?: Record<string, string>
  body?: object
  /** Paths (with their query) the connection sends in turn, in place of the target URL's: one QR code after another. */
  paths?: string[]
}

export interface LoadTarget {
  url: string
  method?: 'GET' | 'POST'
  /** Connection i sends requests[i % length]: with 50 connections and 50 accounts, one account each. */
  requests: ConnectionRequest[]
  /** The answers that count as served: 2xx (the default), or 3xx for a redirect, which is not followed. */
  expect?: '2xx' | '3xx'
}

export interface LoadOptions {
  connections: number
  durationSeconds: number
  /** Seconds of the same load first, not counted: connections opened, pools filled, code warmed. */
  warmUpSeconds: number
}

export interface LoadResult {
  /** Answers as expected (2xx, or the target's `expect`) per second. */
  requestsPerSecond: number
  /** Answers as expected in all (summed over rounds when averaged). */
  answered: number
  p50Ms: number
  p99Ms: number
  /** Answers that were not as expected, by status code, and requests without an answer (errors, timeouts) under "no answer". */
  failures: Record<string, number>
}

function run(target: LoadTarget, connections: number, durationSeconds: number) {
  let next = 0
  return autocannon({
    url: target.url,
    method: target.method ?? 'GET',
    connections,
    duration: durationSeconds,
    timeout: 10,
    setupClient(client) {
      const request = target.requests[next++ % target.requests.length]!
      const headers = { ...request.headers, ...(request.body ? { 'content-type': 'application/json' } : {}) }
      const body = request.body ? JSON.stringify(request.body) : undefined
      if (request.paths) client.setRequests(request.paths.map((path) => ({ path, method: target.method ?? 'GET', headers, body })))
      else client.setHeadersAndBody(headers, body)
    },
  })
}

/** `connections` clients (autocannon, which follows no redirect) send as fast as the server answers, for `durationSeconds`. */
export async function measureLoad(target: LoadTarget, options: LoadOptions): Promise<LoadResult> {
  if (options.warmUpSeconds > 0) await run(target, options.connections, options.warmUpSeconds)
  const result = await run(target, options.connections, options.durationSeconds)
  const expected = target.expect ?? '2xx'
  const failures = Object.fromEntries(
    Object.entries(result.statusCodeStats ?? {})
      .filter(([status]) => !status.startsWith(expected[0]!))
      .map(([status, { count }]) => [status, count ?? 0]),
  )
  if (result.errors > 0) failures['no answer'] = result.errors
  return { requestsPerSecond: result[expected] / result.duration, answered: result[expected], p50Ms: result.latency.p50, p99Ms: result.latency.p99, failures }
}

/** One target's rounds as one figure: rates and percentiles averaged, failures added up. */
export function averaged(rounds: LoadResult[]): LoadResult {
  const mean = (pick: (result: LoadResult) => number) => rounds.reduce((sum, result) => sum + pick(result), 0) / rounds.length
  const failures: Record<string, number> = {}
  for (const round of rounds) for (const [status, count] of Object.entries(round.failures)) failures[status] = (failures[status] ?? 0) + count
  return {
    requestsPerSecond: mean((result) => result.requestsPerSecond),
    answered: rounds.reduce((sum, result) => sum + result.answered, 0),
    p50Ms: mean((result) => result.p50Ms),
    p99Ms: mean((result) => result.p99Ms),
    failures,
  }
}
