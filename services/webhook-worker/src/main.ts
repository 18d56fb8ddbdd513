import { drainTimeMs, loadConfigOrExit } from '@letters/config'
import { closeDb, createDb, guardProcess, prepareDatabase } from '@letters/db'
import { createLogger, startMetricsServer } from '@letters/observability'
import { startWebhookWorker } from './worker.js'

const config = loadConfigOrExit()
const log = createLogger('webhook-worker', config.logLevel)

await prepareDatabase(config.databaseUrl)
const db = createDb(config.databaseUrl, { statementTimeoutMs: config.databaseStatementTimeoutMs })
let running: ReturnType<typeof startWebhookWorker> | undefined
// Its own port (9103 unless METRICS_PORT says otherwise): /metrics for Prometheus, /healthz for probes.
const metricsServer = await startMetricsServer({
  host: config.host,
  port: config.metricsPort ?? 9103,
  log,
  healthy: () => running?.worker.isRunning() ?? false,
})
running = startWebhookWorker({ config, db, log })
log.info({ queue: 'webhooks', prefix: config.queuePrefix, concurrency: config.webhooks.concurrency }, 'webhook worker consuming')

guardProcess({ log, delay: drainTimeMs('webhook-worker', config) }, async ({ signal, err }) => {
  if (err) log.error({ err }, 'shutting down after an error')
  else log.info({ signal }, 'shutting down')
  await running?.close()
  metricsServer?.close()
  await closeDb(db)
})
