import autocannon from 'autocannon'

/** What one connection sends, again and again: its own headers (an account's key) and body. */
export interface ConnectionRequest {
  headers?: Record<string, string>
  body?: object
}

export interface LoadTarget {
  url: string
  method?: 'GET' | 'POST'
  /** Connection i sends requests[i % length]: with 50 connections and 50 accounts, one account each. */
  requests: ConnectionRequest[]
}

export interface LoadOptions {
  connections: number
  durationSeconds: number
  /** Seconds of the same load first, not counted: connections opened, pools filled, code warmed. */
  warmUpSeconds: number
}

export interface LoadResult {
  /** Successful (2xx) answers per second. */
  requestsPerSecond: number
  /** Successful (2xx) answers in all (summed over rounds when averaged). */
  answered: number
  p50Ms: number
  p99Ms: number
  /** Answers that were not 2xx by status code, and requests without an answer (errors, timeouts) under "no answer". */
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
      client.setHeadersAndBody(headers, request.body ? JSON.stringify(request.body) : undefined)
    },
  })
}

/** `connections` clients (autocannon) send as fast as the server answers, for `durationSeconds`. */
export async function measureLoad(target: LoadTarget, options: LoadOptions): Promise<LoadResult> {
  if (options.warmUpSeconds > 0) await run(target, options.connections, options.warmUpSeconds)
  const result = await run(target, options.connections, options.durationSeconds)
  const failures = Object.fromEntries(
    Object.entries(result.statusCodeStats ?? {})
      .filter(([status]) => !status.startsWith('2'))
      .map(([status, { count }]) => [status, count ?? 0]),
  )
  if (result.errors > 0) failures['no answer'] = result.errors
  return { requestsPerSecond: result['2xx'] / result.duration, answered: result['2xx'], p50Ms: result.latency.p50, p99Ms: result.latency.p99, failures }
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
