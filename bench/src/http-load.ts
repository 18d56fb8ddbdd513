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
  p50Ms: number
  p99Ms: number
  /** Answers that were not 2xx, and requests without an answer (errors, timeouts). */
  failed: number
  /** Status code of the failures, with how many, e.g. "503×12". */
  failures: string
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
  const failures = Object.entries(result.statusCodeStats ?? {})
    .filter(([status]) => !status.startsWith('2'))
    .map(([status, { count }]) => `${status}×${count ?? 0}`)
  if (result.errors > 0) failures.push(`no answer×${result.errors}`)
  return {
    requestsPerSecond: result['2xx'] / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    failed: result.non2xx + result.errors,
    failures: failures.join(' '),
  }
}
