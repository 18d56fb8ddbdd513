import { performance } from 'node:perf_hooks'
import { median } from './report.js'

export interface ProofLatency {
  /** p50 of a proof drawn for the request: the letter's first proof since its address was verified. */
  freshP50Ms: number
  /** p50 of a proof served from the artifact store. */
  keptP50Ms: number
  samples: { fresh: number; kept: number }
}

/** Times of the kept proof asked for per letter, after its fresh one. */
const KEPT_REQUESTS_PER_LETTER = 3

async function timedProof(gateway: string, apiKey: string, letterId: string): Promise<number> {
  const started = performance.now()
  const response = await fetch(`${gateway}/cards/${letterId}/proof`, { headers: { 'x-api-key': apiKey } })
  const body = await response.arrayBuffer()
  const elapsed = performance.now() - started
  if (response.status !== 200 || !response.headers.get('content-type')?.startsWith('application/pdf')) {
    throw new Error(`GET /cards/${letterId}/proof answered ${response.status}: ${Buffer.from(body).toString('utf8', 0, 300)}`)
  }
  return elapsed
}

/**
 * One client, one request at a time: the latency a person looking at a proof sees on an idle
 * gateway. `letterIds` are letters whose address is verified and whose proof nobody asked for
 * yet: the first request for each draws it (and keeps it), the next ones read the kept file.
 */
export async function measureProofs(gateway: string, apiKey: string, letterIds: string[]): Promise<ProofLatency> {
  const fresh: number[] = []
  const kept: number[] = []
  for (const letterId of letterIds) fresh.push(await timedProof(gateway, apiKey, letterId))
  for (let round = 0; round < KEPT_REQUESTS_PER_LETTER; round++) {
    for (const letterId of letterIds) kept.push(await timedProof(gateway, apiKey, letterId))
  }
  return { freshP50Ms: median(fresh), keptP50Ms: median(kept), samples: { fresh: fresh.length, kept: kept.length } }
}
