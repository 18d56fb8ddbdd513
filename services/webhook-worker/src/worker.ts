import type { Logger } from 'pino'
import type { Config } from '@letters/config'
import { UUID_PATTERN } from '@letters/contracts'
import type { Db } from '@letters/db'
import { withoutQueryParameters } from '@letters/observability'
import { closeQueues, jobWorker, openQueues, OutboxDispatcher, producerConnection, workerConnection } from '@letters/pipeline'
import { DeliveryAdmission } from './admission.js'
import { deliverEvent } from './deliver.js'
import { HistoryRetention } from './history-retention.js'

export interface WebhookWorkerOptions {
  config: Config
  db: Db
  log: Logger
  /** Pause between admission rounds when no delivery ended meanwhile (tests shorten it). */
  admissionIntervalMs?: number
}

/**
 * The webhook worker: the admission (DeliveryAdmission) queues each endpoint's deliveries, at
 * most config.webhooks.maxInFlightPerEndpoint at a time, through the outbox, whose rows this
 * process moves to BullMQ at once; the `webhooks` queue's consumer sends them,
 * config.webhooks.concurrency at once, each bounded by its timeout. A slow or dead receiver thus
 * holds a few of the slots, never all of them, and only its own events wait. A failed delivery is
 * recorded with its next attempt's time and admitted again then; a fault of ours (Postgres down)
 * throws, and BullMQ retries the job per the queue's options. Also runs the events' retention.
 */
export function startWebhookWorker(options: WebhookWorkerOptions) {
  const { config, db, log } = options
  const connection = workerConnection(config.redisUrl, 'webhook-worker', log)
  const producer = producerConnection(config.redisUrl, 'webhook-worker-outbox', log)
  const queues = openQueues(producer, config.queuePrefix, log)
  const dispatcher = new OutboxDispatcher(db, queues, log)
  const admission = new DeliveryAdmission(db, log.child({ component: 'admission' }), {
    maxInFlightPerEndpoint: config.webhooks.maxInFlightPerEndpoint,
    maxInFlightPerAccount: config.webhooks.maxInFlightPerAccount,
    queuedLeaseMs: config.webhooks.queuedLeaseMs,
    intervalMs: options.admissionIntervalMs,
    onAdmitted: () => dispatcher.poke(),
  })
  const retention = new HistoryRetention(db, log.child({ component: 'history-retention' }))

  const worker = jobWorker(
    'deliver-webhook',
    async (job) => {
      const { eventId } = job.data
      // A job added by hand (the dashboard) holds no lease; it never reaches the database's uuid columns.
      if (!job.id || !UUID_PATTERN.test(job.id) || !UUID_PATTERN.test(eventId)) return 'superseded'
      const result = await deliverEvent(db, config.webhooks, { eventId, leaseId: job.id }).catch((error: unknown) => {
        throw withoutQueryParameters(error)
      })
      log.info({ eventId, jobId: job.id, ...result }, 'webhook handled')
      // Its slot is free again (or was never this job's): the next admission round runs now.
      admission.poke()
      return result.outcome
    },
    { connection, prefix: config.queuePrefix, concurrency: config.webhooks.concurrency },
  )
  worker.on('error', (err) => log.error({ err }, 'webhook worker error'))
  worker.on('failed', (job, err) => log.warn({ err, jobId: job?.id, attempts: job?.attemptsMade }, 'webhook job failed'))
  dispatcher.start()
  admission.start()
  retention.start()

  return {
    worker,
    admission,
    retention,
    async close() {
      await admission.stop()
      await retention.stop()
      await worker.close()
      await dispatcher.stop()
      await closeQueues(queues)
      producer.disconnect()
      await connection.quit().catch(() => connection.disconnect())
    },
  }
}
