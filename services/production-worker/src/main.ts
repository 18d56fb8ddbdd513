import { runWorkerProcess } from '@letters/startup'
import { CommandPrinter, type Printer } from './printer.js'
import { configuredPrinter, startProductionWorker } from './worker.js'

let printer: Printer | undefined
await runWorkerProcess({
  name: 'production-worker',
  metricsPort: 9102,
  start: ({ config, db, log }) => {
    const chosen = configuredPrinter(config)
    printer = chosen
    // A print command cut off by a forced exit would go on printing while the job runs again elsewhere.
    if (chosen instanceof CommandPrinter) process.once('exit', () => chosen.stopAll())
    return startProductionWorker({ config, db, log, printer: chosen })
  },
  consuming: (config) => ({
    message: 'production worker consuming',
    details: {
      queue: 'production',
      prefix: config.queuePrefix,
      artifacts: config.artifactsDir,
      printer: printer?.name,
      spool: config.printCommand ? undefined : config.spoolDir,
    },
  }),
  // Long enough for the letters in hand to finish, their print commands included (drainTimeMs).
  shuttingDown: 'shutting down: finishing the letters in hand',
})
