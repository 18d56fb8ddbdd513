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
/** A round in which no letter got printed for this long has hung: the run fails instead of waiting forever. */
const STALL_TIMEOUT_MS = 60_000
const POLL_MS = 100

/**
 * The whole pipeline, as real processes (services/*\/src/main.ts through the tsx CLI, the
 * production worker printing into the run's spool directory): each round creates `letters`
 * letters of its own account while the workers are held back (both queues paused, so the workers are
 * started and warm but take nothing), then releases them and times until every one is
 * `printed`. Round 1 runs one production worker, round 2 two. The workers stop afterwards, so
 * they take no CPU from the next measurements.
 */
export async function measurePipeline(
  env: BenchEnvironment,
  gateway: string,
  accounts: [BenchAccount, BenchAccount],
  letters: number,
): Promise<{ oneWorker: PipelineRound; twoWorkers: PipelineRound }> {
  const queues = Object.values(env.queues)
  const round = async (account: BenchAccount, productionWorkers: number): Promise<PipelineRound> => {
    await createLetters(gateway, account, letters)
    const released = performance.now()
    await Promise.all(queues.map((queue) => queue.resume()))
    await untilAllPrinted(env, account.id, letters)
    const seconds = (performance.now() - released) / 1000
    await Promise.all(queues.map((queue) => queue.pause()))
    return { productionWorkers, letters, seconds, lettersPerSecond: letters / seconds }
  }

  await Promise.all(queues.map((queue) => queue.pause()))
  const workers: ServiceProcess[] = []
  try {
    workers.push(...(await Promise.all([env.startService('address-worker'), env.startService('production-worker')])))
    const oneWorker = await round(accounts[0], 1)
    workers.push(await env.startService('production-worker'))
    const twoWorkers = await round(accounts[1], 2)
    return { oneWorker, twoWorkers }
  } finally {
    // The queues stay paused: nothing consumes them from here on.
    await Promise.all(workers.map((worker) => worker.kill()))
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
  let printed = 0
  let progressed = performance.now()
  for (;;) {
    const rows = await env.sql<Array<{ status: string; letters: number }>>`
      SELECT status, count(*)::int AS letters FROM letters WHERE account_id = ${accountId} GROUP BY status`
    const byStatus = Object.fromEntries(rows.map((row) => [row.status, row.letters]))
    if (byStatus.printed === count) return
    const lost = (byStatus.failed ?? 0) + (byStatus.address_rejected ?? 0)
    if (lost > 0) throw new Error(`pipeline: ${lost} letters ended failed or address_rejected (${JSON.stringify(byStatus)})`)
    if ((byStatus.printed ?? 0) > printed) {
      printed = byStatus.printed ?? 0
      progressed = performance.now()
    } else if (performance.now() - progressed > STALL_TIMEOUT_MS) {
      throw new Error(`pipeline: no letter printed for ${STALL_TIMEOUT_MS / 1000} s (${JSON.stringify(byStatus)})`)
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
}
