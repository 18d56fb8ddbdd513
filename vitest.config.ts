import { defineConfig } from 'vitest/config'
import { startingWith } from './test/support/sequencer.js'

const include = ['packages/*/test/**/*.test.ts', 'services/*/test/**/*.test.ts', 'test/**/*.test.ts', 'bench/test/**/*.test.ts']

/**
 * Run after the others, three at a time: the suites that start several processes of their own,
 * kill them or cut their connections, and wait for another to take over (worker crashes, the
 * floor's faults, a rolling upgrade, a gateway stopped or cut under requests, webhooks under
 * faults). Four of them side by side, each with its stack of processes, overloaded a 2-core
 * machine until their own waits ran out; two left it a quarter idle.
 */
const heavy = [
  // Longest first (their times in a whole run), so that the last to start are short ones. The two
  // that start whole stacks of processes from sources (a previous release's, after an npm ci of
  // its own; two of a fresh clone under npm start) start apart, not together.
  'test/e2e/webhooks-under-faults.test.ts',
  'test/e2e/rolling-upgrade.test.ts',
  'test/e2e/worker-crash.test.ts',
  'test/e2e/first-hour.test.ts',
  'test/e2e/batch-printing.test.ts',
  'services/production-worker/test/print-once-under-faults.test.ts',
  'services/production-worker/test/floor-prints-once-and-trusts-no-input.test.ts',
  'services/production-worker/test/one-stock-per-batch-print-once.test.ts',
  'packages/startup/test/schema-at-start.test.ts',
  'services/gateway/test/killed-gateway-keyed-retries-store-once.test.ts',
  'test/e2e/floor-connection-drop.test.ts',
  'services/gateway/test/drain-on-sigterm.test.ts',
  'test/e2e/idempotency-crash.test.ts',
]

/**
 * The files side by side that take longest, most of it waiting on processes of their own: started
 * first, so that the group does not end with one of them running alone.
 */
const longSideBySide = [
  'test/e2e/scheduled-sending.test.ts',
  'test/e2e/restore-without-reprints.test.ts',
  'test/e2e/production-build.test.ts',
  'services/gateway/test/cut-commit-answered-with-what-was-stored.test.ts',
  'services/gateway/test/same-key-retries-charge-once.test.ts',
  'test/e2e/npm-start.test.ts',
  'services/gateway/test/keep-alive-outlasts-proxies.test.ts',
  'test/e2e/redis-data-loss.test.ts',
  // A browser each, one waiting out a throttle's window, the other building a realistic account first.
  'test/e2e/dashboard-access.test.ts',
  'test/e2e/dashboard-pages.test.ts',
  // A small file of CPU only (162 pages drawn at 600 dpi and their ink counted): by size it would start among the last.
  'packages/render/test/joins.test.ts',
]

/**
 * Run last, one at a time: the tests whose claim is a latency measured against the same machine
 * idle (a p99 within 2x), where other files beside them would measure the machine, not the
 * service; the proof limits, whose requests get 300 ms in all, so that a loaded machine's slow
 * query is not taken for the service's answer; a gateway process's answers to a client while it
 * refuses a PDF bomb (each under a second); and hostile artwork read within its bounds (a deep
 * PDF in under 5 s, 0.7 s alone, took 11 s beside three other files); and a thousand scheduled
 * letters released within 5 s of their instant (8.6 s beside three other files). They share one
 * module graph, on the side-by-side files' terms (each closes what it opens, sets no process-wide
 * state); what one leaves behind (a larger heap) can only slow the next one's client, never the
 * service it measures.
 */
const timedAlone = [
  'services/gateway/test/proof-load.test.ts',
  'services/gateway/test/proof-limits.test.ts',
  'services/gateway/test/artwork-bomb-process.test.ts',
  'services/gateway/test/hostile-artwork-refused.test.ts',
  'services/webhook-worker/test/fairness.test.ts',
  'test/e2e/scheduled-campaign-release.test.ts',
]

/**
 * A published package (@letters/sdk) exports its compiled dist/ by default, for its users; under
 * this condition it exports its TypeScript sources, which the tests run without a build, as tsc
 * (customConditions) and tsx (--conditions) read them. Vitest adds its own conditions after these
 * (node, development|production), and passes them on to its workers as --conditions.
 */
const conditions = ['letters-source']

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    // Services started as processes, and render threads, run from the build the global setup
    // brings up to date (test/support/processes.ts, packages/render/src/render-pool.ts).
    env: { RUN_FROM_BUILD: process.env.RUN_FROM_BUILD ?? '1' },
    hookTimeout: 60_000,
    sequence: { sequencer: startingWith([...longSideBySide, ...heavy]) },
    // Each file's duration and result, per run (test-results/, read by scripts/slowest-tests.mjs).
    reporters: ['default', ['json', { outputFile: 'test-results/vitest.json' }]],
    projects: [
      {
        extends: true,
        test: {
          name: 'side by side',
          include,
          exclude: [...heavy, ...timedAlone],
          // Four files at a time on the 2-core machine CI runs on (vitest would take one: cores - 1).
          // Most of a file's time is spent waiting (for workers, leases, deadlines, Postgres), so
          // they overlap; each file has its own database or accounts, and its own queue prefix.
          // A worker runs its files one after another in one module graph (isolate: false): the
          // gateway, drizzle and the renderers are imported once per worker instead of once per
          // file, which took a quarter of the run's CPU. What a file sets up is its own: fixture
          // values go in a test API of the file's (test/support/fixtures.ts), a test reads the
          // metrics it moved as the change it made (the registry is the worker's), and processes
          // and pools are closed by the file that opened them.
          maxWorkers: 4,
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        // One module graph per worker, as side by side: each of these files closes what it opens and
        // sets no process-wide state, and a graph of their own cost each some 4 s of CPU to import.
        test: { name: 'processes and faults', include: heavy, maxWorkers: 3, isolate: false, sequence: { groupOrder: 1 } },
      },
      { extends: true, test: { name: 'timed alone', include: timedAlone, maxWorkers: 1, isolate: false, sequence: { groupOrder: 2 } } },
    ],
  },
})
