import { drainTimeMs, loadConfigOrExit } from '@letters/config'
import { closeDb, createDb, guardProcess, prepareDatabase } from '@letters/db'
import { createLogger, startMetricsServer } from '@letters/observability'
import { startAddressWorker } from './worker.js'

const config = loadConfigOrExit()
const log = createLogger('address-worker', config.logLevel)

await prepareDatabase(config.databaseUrl)
const db = createDb(config.databaseUrl, { statementTimeoutMs: config.databaseStatementTimeoutMs })
let running: ReturnType<typeof startAddressWorker> | undefined
// Its own port (9101 unless METRICS_PORT says otherwise): /metrics for Prometheus, /healthz for
// probes. Opened before consuming, so a port already taken never stops a worker mid-job.
const metricsServer = await startMetricsServer({
  host: config.host,
  port: config.metricsPort ?? 9101,
  log,
  healthy: () => running?.worker.isRunning() ?? false,
})
// The reconciler runs here, beside a dispatcher, on every replica (they share the work); not in
// the gateway, which serves clients, nor on the floor, which may sit on another network.
running = startAddressWorker({ config, db, log, dispatchOutbox: true, reconcile: true })
log.info({ queue: 'address', prefix: config.queuePrefix }, 'address worker consuming')

guardProcess({ log, delay: drainTimeMs('address-worker', config) }, async ({ signal, err }) => {
  if (err) log.error({ err }, 'shutting down after an error')
  else log.info({ signal }, 'shutting down')
  await running?.close()
  metricsServer?.close()
  await closeDb(db)
})
