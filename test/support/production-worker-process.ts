/**
 * A production worker in a process of its own, for a test to kill: the real worker module,
 * configured from the environment like services/production-worker, with short locks so that
 * another worker takes over its jobs within seconds of its death. Not shorter: rendering blocks
 * the event loop for about a second on a loaded machine, and a lock that lapses while its worker
 * lives hands the job to a second run.
 */
import { pino } from 'pino'
import { loadConfigOrExit } from '@letters/config'
import { createDb } from '@letters/db'
import { startProductionWorker } from '@letters/production-worker/worker'

const config = loadConfigOrExit()
const running = startProductionWorker({
  config,
  db: createDb(config.databaseUrl),
  log: pino({ level: 'silent' }),
  lockDurationMs: 5000,
  stalledIntervalMs: 500,
})
await running.worker.waitUntilReady()
process.stdout.write('consuming\n')
