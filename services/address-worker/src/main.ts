import closeWithGrace from 'close-with-grace'
import { loadConfigOrExit } from '@letters/config'
import { closeDb, createDb, prepareDatabase } from '@letters/db'
import { createLogger, startMetricsServer } from '@letters/observability'
import { startAddressWorker } from './worker.js'

const config = loadConfigOrExit()
const log = createLogger('address-worker', config.logLevel)

await prepareDatabase(config.databaseUrl)
const db = createDb(config.databaseUrl)
const running = startAddressWorker({ config, db, log, dispatchOutbox: true })
log.info({ queue: 'address', prefix: config.queuePrefix }, 'address worker consuming')
// Its own port (9101 unless METRICS_PORT says otherwise): /metrics for Prometheus, /healthz for probes.
const metricsServer = await startMetricsServer({ host: config.host, port: config.metricsPort ?? 9101, log, healthy: () => running.worker.isRunning() })

closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
  if (err) log.error({ err }, 'shutting down after an error')
  else log.info({ signal }, 'shutting down')
  await running.close()
  metricsServer.close()
  await closeDb(db)
})
