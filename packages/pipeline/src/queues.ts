import { Queue, type DefaultJobOptions } from 'bullmq'
import { Redis } from 'ioredis'
import type { BaseLogger } from 'pino'

/** What the queues need of a logger: pino's, or Fastify's. */
export type Logger = Pick<BaseLogger, 'info' | 'warn' | 'error'>
import { queueNames, type QueueName } from '@letters/contracts'

/**
 * Retries per queue: exponential backoff with jitter; failed jobs are kept for ops, completed
 * ones trimmed so Redis (noeviction) does not fill up.
 */
export const jobOptions: Record<QueueName, DefaultJobOptions> = {
  address: {
    attempts: 5,
    backoff: { type: 'exponential', delay: 1000, jitter: 0.5 },
    removeOnComplete: { age: 24 * 3600, count: 10_000 },
    removeOnFail: false,
  },
  production: {
    attempts: 4,
    backoff: { type: 'exponential', delay: 5000, jitter: 0.5 },
    removeOnComplete: { age: 7 * 24 * 3600, count: 10_000 },
    removeOnFail: false,
  },
  // These retries are for our own faults (Postgres unreachable): a receiver's failures are
  // retried on WEBHOOK_RETRY_SCHEDULE by the worker itself, which records each attempt.
  webhooks: {
    attempts: 8,
    backoff: { type: 'exponential', delay: 2000, jitter: 0.5 },
    removeOnComplete: { age: 24 * 3600, count: 10_000 },
    removeOnFail: false,
  },
}

/** For producers: fail at once while Redis is down (the outbox keeps the work), never hang. */
export function producerConnection(redisUrl: string, name: string, log: Logger): Redis {
  const redis = new Redis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectionName: name })
  redis.on('error', (err) => log.warn({ err, connection: name }, 'redis connection error'))
  return redis
}

/** For workers: wait for Redis as long as it takes, as BullMQ requires. */
export function workerConnection(redisUrl: string, name: string, log: Logger): Redis {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: null, connectionName: name })
  redis.on('error', (err) => log.warn({ err, connection: name }, 'redis connection error'))
  return redis
}

export type Queues = Record<QueueName, Queue>

export function openQueues(connection: Redis, prefix: string, log: Logger): Queues {
  return Object.fromEntries(
    queueNames.map((name) => {
      const queue = new Queue(name, { connection, prefix, defaultJobOptions: jobOptions[name] })
      queue.on('error', (err) => log.warn({ err, queue: name }, 'queue error'))
      return [name, queue]
    }),
  ) as Queues
}

export async function closeQueues(queues: Queues): Promise<void> {
  await Promise.all(Object.values(queues).map((queue) => queue.close()))
}

/** Failed jobs read at a time while looking for a letter's. */
const FAILED_PAGE = 500

/**
 * Removes a letter's failed jobs from `queue`, once ops sent the letter on with a job of its
 * own: failed jobs are kept for ops to look at, so without this the failed count (and the alert
 * on it) would stay up for letters long since printed. Returns how many it removed.
 */
export async function removeFailedJobsOf(queue: Queue, letterId: string): Promise<number> {
  const ids: string[] = []
  for (let start = 0; ; start += FAILED_PAGE) {
    const page = await queue.getFailed(start, start + FAILED_PAGE - 1)
    for (const job of page) if ((job?.data as { letterId?: unknown } | undefined)?.letterId === letterId && job.id) ids.push(job.id)
    if (page.length < FAILED_PAGE) break
  }
  let removed = 0
  for (const id of ids) {
    // Still failed: one the dashboard's retry button moved back meanwhile is left to run.
    const job = await queue.getJob(id)
    if (job && (await job.isFailed())) {
      await job.remove()
      removed++
    }
  }
  return removed
}
