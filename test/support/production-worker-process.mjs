/**
 * A production worker in a process of its own, for a test to kill: the real worker module,
 * configured from the environment like services/production-worker, with short locks so that
 * another worker takes over its jobs within seconds of its death. Not shorter: BullMQ renews a
 * lock at half its duration, and drawing blocks the event loop meanwhile: up to half a second
 * alone while a batch's files are drawn, about 3 s with a sixth of a core (a load of 12 on two
 * cores), more than the 2.5 s a 5 s lock allowed. A lock that lapses while its worker lives hands
 * the job to a second run, and a job found abandoned twice fails.
 *
 * Plain JavaScript, so that with RUN_FROM_BUILD=1 it runs under plain node on the built packages
 * (--conditions=letters-dist), as the services do: tsx's loader, which every module would go
 * through, doubled the CPU a start takes (2 s against 1 s), some twenty starts a run.
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
  lockDurationMs: 10_000,
  stalledIntervalMs: 500,
})
await running.worker.waitUntilReady()
process.stdout.write('consuming\n')
