/**
 * The job registry: every queue, every job on it and its payload. Payloads carry ids only; a
 * worker reloads the rows it needs.
 */
export const queueNames = ['address', 'production', 'webhooks'] as const
export type QueueName = (typeof queueNames)[number]

export interface JobPayloads {
  'normalize-address': { letterId: string }
  'produce-letter': { letterId: string }
  /**
   * One attempt at one webhook event for one endpoint (its id is the `webhook-id` header), admitted
   * by the webhook worker: the job's id is the event's lease, and a job whose lease passed sends nothing.
   */
  'deliver-webhook': { eventId: string }
}
export type JobName = keyof JobPayloads

/** Which queue carries each job: a job without a queue does not compile. */
export const queueOfJob: Record<JobName, QueueName> = {
  'normalize-address': 'address',
  'produce-letter': 'production',
  'deliver-webhook': 'webhooks',
}

export const jobNames = Object.keys(queueOfJob) as JobName[]
