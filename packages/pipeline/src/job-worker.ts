import { UnrecoverableError, Worker, type Job, type WorkerOptions } from 'bullmq'
import { queueOfJob, type JobName, type JobPayloads } from '@letters/contracts'

/**
 * A BullMQ worker for one job of the registry (packages/contracts, jobs.ts), on the queue the
 * registry gives it: no worker names its queue by hand. A job of another name on that queue
 * (a row written by hand, an older version) fails at once, kept for ops, instead of being read
 * with the wrong payload.
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
      return processor(job, token)
    },
    options,
  )
}
