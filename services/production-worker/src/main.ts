import closeWithGrace from 'close-with-grace'
import { Redis } from 'ioredis'
import { pino } from 'pino'
import { loadConfigOrExit } from '@letters/config'
import { prepareDatabase } from '@letters/db'
import type { QueueName } from '@letters/contracts'

const queue: QueueName = 'production'
const config = loadConfigOrExit()
const log = pino({ name: 'production-worker', level: config.logLevel })

await prepareDatabase(config.databaseUrl)
// Workers wait for Redis rather than fail: a job left in the queue is picked up when it is back.
const connection = new Redis(config.redisUrl, { maxRetriesPerRequest: null, connectionName: 'production-worker' })
connection.on('error', (err) => log.warn({ err }, 'redis connection error'))
await connection.ping()
log.info({ queue, prefix: config.queuePrefix }, 'production-worker connected to Postgres and Redis')

closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
  if (err) log.error({ err }, 'shutting down after an error')
  else log.info({ signal }, 'shutting down')
  await connection.quit()
})
