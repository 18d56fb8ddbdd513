import { drainTimeMs, loadConfigOrExit, type Config, type ProcessName } from '@letters/config'
import { closeDb, createDb, type Db } from '@letters/db'
import { createLogger, startMetricsServer } from '@letters/observability'
import type { Logger } from 'pino'
import { awaitSchema } from './database.js'
import { guardProcess } from './guard.js'

/** What a worker's start gives back: its BullMQ worker (for /healthz) and how to stop it. */
export interface RunningWorker {
  worker: { isRunning(): boolean }
  close(): Promise<void>
}

export interface WorkerProcess<Running extends RunningWorker> {
  name: Exclude<ProcessName, 'gateway'>
  /** The metrics port unless METRICS_PORT says otherwise. */
  metricsPort: number
  start(context: { config: Config; db: Db; log: Logger }): Running
  /** The line logged once it consumes: its message and what an operator wants beside it. */
  consuming(config: Config): { message: string; details: Record<string, unknown> }
  /** What it says on SIGTERM, when that is more than "shutting down". */
  shuttingDown?: string
}

/**
 * The life of a worker process, the same for each: configuration (or exit with what is wrong),
 * a schema it can run on (awaitSchema), the pool, its own /metrics and /healthz port opened before it consumes (a port
 * already taken never stops it mid-job), then the guard: on SIGTERM or a fatal error it stops
 * consuming, lets the jobs in hand finish within the process's drain time, and closes the pool.
 */
export async function runWorkerProcess<Running extends RunningWorker>(spec: WorkerProcess<Running>): Promise<Running> {
  const config = loadConfigOrExit()
  const log = createLogger(spec.name, config.logLevel)
  await awaitSchema(config, log)
  const db = createDb(config.databaseUrl, { max: config.databasePoolMax, statementTimeoutMs: config.databaseStatementTimeoutMs })
  let running: Running | undefined
  const metricsServer = await startMetricsServer({
    host: config.host,
    port: config.metricsPort ?? spec.metricsPort,
    log,
    healthy: () => running?.worker.isRunning() ?? false,
    token: config.metricsToken,
  })
  running = spec.start({ config, db, log })
  const { message, details } = spec.consuming(config)
  log.info(details, message)

  guardProcess({ log, delay: drainTimeMs(spec.name, config) }, async ({ signal, err }) => {
    if (err) log.error({ err }, 'shutting down after an error')
    else log.info({ signal }, spec.shuttingDown ?? 'shutting down')
    await running?.close()
    metricsServer?.close()
    await closeDb(db)
  })
  return running
}
