import { runWorkerProcess } from '@letters/startup'
import { startWebhookWorker } from './worker.js'

await runWorkerProcess({
  name: 'webhook-worker',
  metricsPort: 9103,
  start: ({ config, db, log }) => startWebhookWorker({ config, db, log }),
  consuming: (config) => ({
    message: 'webhook worker consuming',
    details: { queue: 'webhooks', prefix: config.queuePrefix, concurrency: config.webhooks.concurrency },
  }),
})
