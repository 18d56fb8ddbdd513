import { performance } from 'node:perf_hooks'
import type { ServiceProcess } from '@letters/test/support/processes'
import type { BenchAccount } from './accounts.js'
import type { BenchEnvironment } from './environment.js'
import { singleLetter } from './letter.js'

export interface PipelineRound {
  productionWorkers: number
  letters: number
  /** From the release of the queued letters until the last one is `printed`. */
  seconds: number
  lettersPerSecond: number
}

/** Letters created at once while filling the queues: enough to be quick, few enough not to be a load test. */
const CREATION_CONCURRENCY = 10
/** A round that takes longer than this has hung: the run fails instead of waiting forever. */
const ROUND_TIMEOUT_MS = 150_000
const POLL_MS = 100

/**
 * The whole pipeline, as real processes (services/*\/src/main.ts through the tsx CLI, the
 * production worker printing into the run's spool directory): round r creates `letters` letters
 * of its own account while the workers are held back (both queues paused, so the workers are
 * started and warm but take nothing), then releases them and times until every one is
 * `printed`. Round 1 runs one production worker, round 2 two. The workers stop afterwards, so
 * they take no CPU from the next measurements.
 */
export async function measurePipeline(env: BenchEnvironment, gateway: string, accounts: BenchAccount[], letters: number): Promise<PipelineRound[]> {
  const queues = Object.values(env.queues)
  await Promise.all(queues.map((queue) => queue.pause()))
  const workers: ServiceProcess[] = []
  try {
    workers.push(...(await Promise.all([env.startService('address-worker'), env.startService('production-worker')])))
    const rounds: PipelineRound[] = []
    for (const [index, account] of accounts.entries()) {
      if (index > 0) workers.push(await env.startService('production-worker'))
      await createLetters(gateway, account, letters)
      const released = performance.now()
      await Promise.all(queues.map((queue) => queue.resume()))
      await untilAllPrinted(env, account.id, letters)
      const seconds = (performance.now() - released) / 1000
      await Promise.all(queues.map((queue) => queue.pause()))
      rounds.push({ productionWorkers: index + 1, letters, seconds, lettersPerSecond: letters / seconds })
    }
    return rounds
  } finally {
    await Promise.all(workers.map((worker) => worker.kill()))
    await Promise.all(queues.map((queue) => queue.resume()))
  }
}

async function createLetters(gateway: string, account: BenchAccount, count: number): Promise<void> {
  let remaining = count
  const body = JSON.stringify(singleLetter(account))
  const sender = async () => {
    while (remaining > 0) {
      remaining--
      const response = await fetch(`${gateway}/single`, { method: 'POST', headers: { 'x-api-key': account.apiKey, 'content-type': 'application/json' }, body })
      if (response.status !== 200) throw new Error(`POST /single answered ${response.status}: ${await response.text()}`)
    }
  }
  await Promise.all(Array.from({ length: CREATION_CONCURRENCY }, sender))
}

async function untilAllPrinted(env: BenchEnvironment, accountId: string, count: number): Promise<void> {
  const deadline = performance.now() + ROUND_TIMEOUT_MS
  for (;;) {
    const rows = await env.sql<Array<{ status: string; letters: number }>>`
      SELECT status, count(*)::int AS letters FROM letters WHERE account_id = ${accountId} GROUP BY status`
    const byStatus = Object.fromEntries(rows.map((row) => [row.status, row.letters]))
    if (byStatus.printed === count) return
    const lost = (byStatus.failed ?? 0) + (byStatus.address_rejected ?? 0)
    if (lost > 0) throw new Error(`pipeline: ${lost} letters ended failed or address_rejected (${JSON.stringify(byStatus)})`)
    if (performance.now() > deadline) throw new Error(`pipeline: not all ${count} letters printed within ${ROUND_TIMEOUT_MS / 1000} s (${JSON.stringify(byStatus)})`)
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
}
