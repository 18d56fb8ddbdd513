import { queueOfJob, type JobName, type JobPayloads } from '@letters/contracts'
import type { Executor } from './client.js'
import { outbox } from './schema.js'

/** A job of the registry as the outbox takes it; `id` (also BullMQ's jobId) when the job is named after a row of its own. */
export type OutboxJob = { [Name in JobName]: { name: Name; data: JobPayloads[Name]; id?: string } }[JobName]

/**
 * The one way to queue a job: its outbox row, written in the caller's transaction, on the queue
 * the registry gives its name (packages/contracts, jobs.ts). The dispatcher hands it to BullMQ.
 */
export async function enqueue(ex: Executor, jobs: OutboxJob | readonly OutboxJob[]): Promise<void> {
  const rows = (Array.isArray(jobs) ? jobs : [jobs]) as readonly OutboxJob[]
  if (rows.length === 0) return
  await ex
    .insert(outbox)
    .values(rows.map((job) => ({ ...(job.id === undefined ? {} : { id: job.id }), queue: queueOfJob[job.name], jobName: job.name, payload: job.data })))
}

/**
 * For a statement that queues jobs in SQL, a batch at a time (the intake's address jobs, the
 * webhook events of a status change): the `queue, job_name` values of a job of `name`, as SQL
 * literals from the registry. The payload is the statement's to build, with the keys of
 * JobPayloads[name].
 */
export function outboxTargetSql(name: JobName): string {
  return `'${queueOfJob[name]}', '${name}'`
}
