import type { Logger } from 'pino'
import { LocalArtifactStore, PrintJournal, type ArtifactStore } from '@letters/artifacts'
import { withoutQueryParameters } from '@letters/observability'
import { offlineVerifier, type AddressVerifier } from '@letters/address'
import type { Config } from '@letters/config'
import type { Db } from '@letters/db'
import { closeQueues, jobWorker, OutboxDispatcher, openQueues, producerConnection, Reconciler, workerConnection } from '@letters/pipeline'
import { normalizeLetter } from './normalize-letter.js'

export interface AddressWorkerOptions {
  config: Config
  db: Db
  log: Logger
  verifier?: AddressVerifier
  concurrency?: number
  /** Also move outbox rows to BullMQ (the production jobs this worker writes). */
  dispatchOutbox?: boolean
  /** Also queue again the jobs Redis lost (config.reconcileAfterMs, config.reconcileIntervalMs). */
  reconcile?: boolean
  /** Where the floor keeps its files and print journal (default: config.artifactsDir). */
  store?: ArtifactStore
}

/** Consumes the `address` queue; returns a function that stops it gracefully. */
export function startAddressWorker(options: AddressWorkerOptions) {
  const { config, db, log } = options
  const verifier = options.verifier ?? offlineVerifier
  const connection = workerConnection(config.redisUrl, 'address-worker', log)
  const worker = jobWorker(
    'normalize-address',
    async (job) => {
      // A failed query's message carries its parameters (the address): kept out of Redis, where the job's failure is stored.
      const outcome = await normalizeLetter(db, verifier, job.data.letterId, config.floorCountry).catch((error: unknown) => {
        throw withoutQueryParameters(error)
      })
      log.info({ letterId: job.data.letterId, jobId: job.id, outcome }, 'address handled')
      return outcome
    },
    { connection, prefix: config.queuePrefix, concurrency: options.concurrency ?? 8 },
  )
  worker.on('error', (err) => log.error({ err }, 'address worker error'))
  worker.on('failed', (job, err) => log.warn({ err, jobId: job?.id, attempts: job?.attemptsMade }, 'address job failed'))

  const producer = options.dispatchOutbox || options.reconcile ? producerConnection(config.redisUrl, 'address-worker-outbox', log) : undefined
  const queues = producer ? openQueues(producer, config.queuePrefix, log) : undefined
  const dispatcher = queues && options.dispatchOutbox ? new OutboxDispatcher(db, queues, log) : undefined
  dispatcher?.start()
  const reconciler =
    queues && options.reconcile
      ? new Reconciler(db, queues, log.child({ component: 'reconciler' }), {
          afterMs: config.reconcileAfterMs,
          intervalMs: config.reconcileIntervalMs,
          // The floor's artifact store: its print journal tells what reached paper.
          journal: new PrintJournal(options.store ?? new LocalArtifactStore(config.artifactsDir)),
        })
      : undefined
  reconciler?.start()

  return {
    worker,
    async close() {
      await reconciler?.stop()
      await dispatcher?.stop()
      await worker.close()
      if (queues) await closeQueues(queues)
      producer?.disconnect()
      await connection.quit().catch(() => connection.disconnect())
    },
  }
}
