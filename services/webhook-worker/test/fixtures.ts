import { OutboxDispatcher } from '@letters/pipeline'
import { it as base } from '@letters/test/support/fixtures'
import { silentLog } from '@letters/test/support/pipeline'
import { startWebhookWorker } from '../src/worker.js'

/**
 * The shared fixtures and `webhookWorker`: the gateway's outbox dispatcher and a webhook worker
 * on the file's gateway, running for the whole file (most tests wait for what they deliver) and
 * stopped after the file's own hooks, so receivers close first.
 */
export const it = base.extend('webhookWorker', { scope: 'file', auto: true }, ({ gateway: app }, { onCleanup }) => {
  const dispatcher = new OutboxDispatcher(app.db, app.queues, silentLog, { idleMs: 50, maxBackoffMs: 500, sendTimeoutMs: 1000 })
  dispatcher.start()
  const worker = startWebhookWorker({ config: app.config, db: app.db, log: silentLog })
  onCleanup(async () => {
    await dispatcher.stop()
    await worker.close()
  })
  return worker
})
