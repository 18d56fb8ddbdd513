import { drainTimeMs, loadConfigOrExit } from '@letters/config'
import { closeDb, createDb, guardProcess, prepareDatabase } from '@letters/db'
import { createLogger, startMetricsServer } from '@letters/observability'
import { CommandPrinter } from './printer.js'
import { configuredPrinter, startProductionWorker } from './worker.js'

const config = loadConfigOrExit()
const log = createLogger('production-worker', config.logLevel)

await prepareDatabase(config.databaseUrl)
const db = createDb(config.databaseUrl, { statementTimeoutMs: config.databaseStatementTimeoutMs })
const printer = configuredPrinter(config)
let running: ReturnType<typeof startProductionWorker> | undefined
// Its own port (9102 unless METRICS_PORT says otherwise): /metrics for Prometheus, /healthz for
// probes. Opened before consuming, so a port already taken never stops a worker mid-job.
const metricsServer = await startMetricsServer({
  host: config.host,
  port: config.metricsPort ?? 9102,
  log,
  healthy: () => running?.worker.isRunning() ?? false,
})
running = startProductionWorker({ config, db, log, printer })
log.info(
  {
    queue: 'production',
    prefix: config.queuePrefix,
    artifacts: config.artifactsDir,
    printer: printer.name,
    spool: config.printCommand ? undefined : config.spoolDir,
  },
  'production worker consuming',
)

// A print command cut off by a forced exit would go on printing while the job runs again elsewhere.
if (printer instanceof CommandPrinter) process.once('exit', () => printer.stopAll())

// Long enough for the letters in hand to finish, their print commands included.
guardProcess({ log, delay: drainTimeMs('production-worker', config) }, async ({ signal, err }) => {
  if (err) log.error({ err }, 'shutting down after an error')
  else log.info({ signal }, 'shutting down: finishing the letters in hand')
  await running?.close()
  metricsServer?.close()
  await closeDb(db)
})
