import { runWorkerProcess } from '@letters/startup'
import { startAddressWorker } from './worker.js'

await runWorkerProcess({
  name: 'address-worker',
  metricsPort: 9101,
  // The reconciler runs here, beside a dispatcher, on every replica (they share the work); not in
  // the gateway, which serves clients, nor on the floor, which may sit on another network.
  start: ({ config, db, log }) => startAddressWorker({ config, db, log, dispatchOutbox: true, reconcile: true }),
  consuming: (config) => ({ message: 'address worker consuming', details: { queue: 'address', prefix: config.queuePrefix } }),
})
