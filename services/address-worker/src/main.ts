import { loadConfigOrExit } from '@letters/config'
import { closeDb, createDb, guardProcess, prepareDatabase } from '@letters/db'
import { createLogger } from '@letters/observability'
import { startAddressWorker } from './worker.js'

const config = loadConfigOrExit()
const log = createLogger('address-worker', config.logLevel)

await prepareDatabase(config.databaseUrl)
const db = createDb(config.databaseUrl)
const running = startAddressWorker({ config, db, log, dispatchOutbox: true })
log.info({ queue: 'address', prefix: config.queuePrefix }, 'address worker consuming')

guardProcess({ log, delay: 10_000 }, async ({ signal, err }) => {
  if (err) log.error({ err }, 'shutting down after an error')
  else log.info({ signal }, 'shutting down')
  await running.close()
  await closeDb(db)
})
