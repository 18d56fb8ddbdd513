import { UnrecoverableError, type Job } from 'bullmq'
import type { Logger } from 'pino'
import { withoutQueryParameters } from '@letters/observability'
import type { Config } from '@letters/config'
import type { JobPayloads } from '@letters/contracts'
import type { Db } from '@letters/db'
import { jobWorker, putsBack, workerConnection } from '@letters/pipeline'
import { LocalArtifactStore, type ArtifactStore } from '@letters/artifacts'
import { BatchCloser } from './batch-closer.js'
import { CommandPrinter, SpoolPrinter, type Printer } from './printer.js'
import { markFailed, produceLetter, recordFailedAttempt } from './produce-letter.js'
import type { Floor } from './floor.js'

export interface ProductionWorkerOptions {
  config: Config
  db: Db
  log: Logger
  store?: ArtifactStore
  printer?: Printer
  concurrency?: number
  /** How long a claimed job stays ours without a heartbeat; after it, another worker takes it over. */
  lockDurationMs?: number
  /** How often this worker looks for jobs whose worker died. */
  stalledIntervalMs?: number
  /** How many times a job may be found abandoned before it fails for good (BullMQ's default: 1). */
  maxStalledCount?: number
}

/** The printer the configuration asks for: the operator's command, or the spool directory. */
export function configuredPrinter(config: Config): Printer {
  return config.printCommand ? new CommandPrinter(config.printCommand, config.printTimeoutMs) : new SpoolPrinter(config.spoolDir)
}

type ProduceJob = Job<JobPayloads['produce-letter']>

const attemptsOf = (job: ProduceJob) => job.opts.attempts ?? 1

/** Consumes the `production` queue: the floor. Returns the worker and a graceful stop. */
export function startProductionWorker(options: ProductionWorkerOptions) {
  const { config, db, log } = options
  const floor: Floor = {
    db,
    log,
    printTimeoutMs: config.printTimeoutMs,
    floorCountry: config.floorCountry,
    publicBaseUrl: config.publicBaseUrl,
    store: options.store ?? new LocalArtifactStore(config.artifactsDir),
    printer: options.printer ?? configuredPrinter(config),
    // A letter is made for what the worker producing it prints with (README, Pen plotter).
    output: config.printer === 'plotter' ? { kind: 'plotter', settings: config.plotter } : { kind: 'pdf' },
  }
  // PRINTER=batch: letters go into a tray, and this worker's closer hands the batches over.
  let closer: BatchCloser | undefined
  if (config.printer === 'batch') {
    closer = new BatchCloser(floor, config.batch)
    const batchCloser = closer
    floor.batching = { rules: config.batch, poke: () => batchCloser.poke() }
    closer.start()
  }
  const connection = workerConnection(config.redisUrl, 'production-worker', log)

  async function produce(job: ProduceJob) {
    const { letterId } = job.data
    let claim: number | undefined
    try {
      const outcome = await produceLetter(floor, letterId, (taken) => {
        claim = taken
      })
      log.info({ letterId, jobId: job.id, claim, outcome }, 'production handled')
      return outcome
    } catch (error) {
      // Put back without spending an attempt (jobWorker): no attempt to record, and above all no
      // `failed` for a letter that will run again in a moment.
      if (putsBack(error, job)) throw withoutQueryParameters(error)
      const attempt = job.attemptsMade + 1
      const last = error instanceof UnrecoverableError || attempt >= attemptsOf(job)
      // Recorded before rethrowing: BullMQ then retries, or keeps the job as failed for ops. An
      // attempt that failed before taking a claim leaves no trace, unless it was the last one.
      const recorded = last
        ? markFailed(db, letterId, attempt, claim ?? 'any')
        : claim === undefined
          ? Promise.resolve()
          : recordFailedAttempt(db, letterId, claim, attempt, attemptsOf(job))
      await recorded.catch((err: unknown) => log.error({ err, letterId }, 'could not record the failed attempt'))
      throw withoutQueryParameters(error)
    }
  }

  const worker = jobWorker('produce-letter', produce, {
    connection,
    prefix: config.queuePrefix,
    // Rendering is CPU work: a few at a time per process; scale with more processes.
    concurrency: options.concurrency ?? 2,
    lockDuration: options.lockDurationMs ?? 30_000,
    stalledInterval: options.stalledIntervalMs ?? 30_000,
    ...(options.maxStalledCount === undefined ? {} : { maxStalledCount: options.maxStalledCount }),
  })
  worker.on('error', (err) => log.error({ err }, 'production worker error'))
  worker.on('failed', (job, err) => {
    log.warn({ err, jobId: job?.id, letterId: job?.data.letterId, attempts: job?.attemptsMade }, 'production job failed')
    // A job abandoned too often (its workers died) fails with an UnrecoverableError without
    // reaching the processor, so no claim of its own is known here: mark the letter whoever
    // holds it (a second mark changes nothing; the job is over, so no run of it goes on).
    if (job && (err.name === 'UnrecoverableError' || job.attemptsMade >= attemptsOf(job))) {
      markFailed(db, job.data.letterId, job.attemptsMade, 'any').catch((error: unknown) =>
        log.error({ err: error, letterId: job.data.letterId }, 'could not mark the letter failed'),
      )
    }
  })

  return {
    worker,
    closer,
    async close() {
      await worker.close()
      await closer?.stop()
      await connection.quit().catch(() => connection.disconnect())
    },
  }
}
