import { DelayedError } from 'bullmq'
import type { Logger } from 'pino'
import type { Config } from '@letters/config'
import type { Db } from '@letters/db'
import { withoutQueryParameters } from '@letters/observability'
import { jobWorker, workerConnection } from '@letters/queues'
import { deliverEvent } from './deliver.js'

export interface WebhookWorkerOptions {
  config: Config
  db: Db
  log: Logger
}

/**
 * Consumes the `webhooks` queue: config.webhooks.concurrency deliveries in flight at once, each
 * bounded by its timeout, so a slow or dead receiver holds one slot for at most that long and
 * never the others. A failed delivery's job is delayed until its next attempt (same job, same
 * webhook-id); a fault of ours (Postgres down) throws, and BullMQ retries it per the queue's options.
 */
export function startWebhookWorker(options: WebhookWorkerOptions) {
  const { config, db, log } = options
  const connection = workerConnection(config.redisUrl, 'webhook-worker', log)
  const worker = jobWorker(
    'deliver-webhook',
    async (job, token) => {
      const result = await deliverEvent(db, config.webhooks, job.data.eventId).catch((error: unknown) => {
        throw withoutQueryParameters(error)
      })
      log.info({ eventId: job.data.eventId, jobId: job.id, ...result }, 'webhook handled')
      if (result.outcome === 'retrying') {
        await job.moveToDelayed(result.retryAt.getTime(), token)
        throw new DelayedError()
      }
      return result.outcome
    },
    { connection, prefix: config.queuePrefix, concurrency: config.webhooks.concurrency },
  )
  worker.on('error', (err) => log.error({ err }, 'webhook worker error'))
  worker.on('failed', (job, err) => log.warn({ err, jobId: job?.id, attempts: job?.attemptsMade }, 'webhook job failed'))

  return {
    worker,
    async close() {
      await worker.close()
      await connection.quit().catch(() => connection.disconnect())
    },
  }
}
