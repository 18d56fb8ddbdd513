import { DelayedError, UnrecoverableError, Worker, type Job, type WorkerOptions } from 'bullmq'
import { queueOfJob, type JobName, type JobPayloads } from '@letters/contracts'
import { isConnectionError } from '@letters/db'

/**
 * A job whose database was out of reach is put back and runs again after a pause: 2 s at first,
 * growing with the job's age to at most 30 s, with jitter so that workers do not all knock at
 * once. Such a pause does not count against the job's attempts: a database that refuses
 * connections for minutes (every slot taken, a failover) must not use them up and leave a paid
 * letter for the reconciler. Past an hour of age the failure counts as an attempt again, so that
 * a job whose own query keeps breaking its connection still ends, failed, where ops see it.
 */
export const CONNECTION_RETRY_MS = 2000
const CONNECTION_RETRY_MAX_MS = 30_000
export const CONNECTION_RETRY_LIMIT_MS = 3_600_000

/** The pause before a put-back job runs again, by its age. */
export function connectionRetryDelay(ageMs: number): number {
  const base = Math.min(CONNECTION_RETRY_MAX_MS, Math.max(CONNECTION_RETRY_MS, ageMs / 20))
  return Math.round(base * (0.8 + Math.random() * 0.4))
}

/** Whether a job's failure puts it back without spending an attempt: its database out of reach, within the hour. */
export const putsBack = (error: unknown, job: Pick<Job, 'timestamp'>): boolean =>
  isConnectionError(error) && Date.now() - job.timestamp < CONNECTION_RETRY_LIMIT_MS

/**
 * A BullMQ worker for one job of the registry (packages/contracts, jobs.ts), on the queue the
 * registry gives it: no worker names its queue by hand. A job of another name on that queue
 * (a row written by hand, an older version) fails at once, kept for ops, instead of being read
 * with the wrong payload. A job that failed because Postgres could not be reached is put back
 * a moment later without spending an attempt (putsBack): a processor that records its failed
 * attempts records none for such a failure.
 */
export function jobWorker<Name extends JobName>(
  name: Name,
  processor: (job: Job<JobPayloads[Name]>, token?: string) => Promise<unknown>,
  options: WorkerOptions,
): Worker<JobPayloads[Name]> {
  return new Worker<JobPayloads[Name]>(
    queueOfJob[name],
    async (job, token) => {
      if (job.name !== name) throw new UnrecoverableError(`the ${queueOfJob[name]} queue carries ${name} jobs, not ${job.name}`)
      try {
        return await processor(job, token)
      } catch (error) {
        if (!putsBack(error, job) || token === undefined) throw error
        await job.moveToDelayed(Date.now() + connectionRetryDelay(Date.now() - job.timestamp), token)
        throw new DelayedError()
      }
    },
    options,
  )
}
