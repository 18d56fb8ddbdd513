import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { inject } from 'vitest'
import { loadConfig, type Config } from '@letters/config'

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string
    /** This run's migrated database that isolatedDatabase copies; no one connects to it. */
    templateDatabaseUrl: string
    redisUrl: string
    queuePrefix: string
  }
}

import { ADMIN_TOKEN } from './admin-token.js'

export { ADMIN_TOKEN }

/** This run's scratch directory (artifact stores, spools); global setup removes it at the end. */
export const runDirectory = (queuePrefix: string) => join(tmpdir(), queuePrefix)

/** The configuration every test process runs with: this run's database, Redis, queue prefix and artifact store. */
export function testConfig(overrides: Record<string, string> = {}): Config {
  return loadConfig({
    DATABASE_URL: inject('databaseUrl'),
    REDIS_URL: inject('redisUrl'),
    QUEUE_PREFIX: inject('queuePrefix'),
    ARTIFACTS_DIR: join(runDirectory(inject('queuePrefix')), 'artifacts'),
    ADMIN_TOKEN,
    LOG_LEVEL: 'silent',
    SEED_DEMO: 'false',
    // Every in-process request comes from 127.0.0.1 and test files run side by side: the default
    // 10 failed authentications a minute would turn other files' 401 tests into 429s.
    AUTH_FAILURES_MAX: '1000',
    // Tests that render in their own process (the floor in-process) block the event loop for
    // seconds on a loaded machine: load shedding would answer their gateway calls 503. The
    // shedding tests set their own threshold.
    EVENT_LOOP_MAX_DELAY_MS: '60000',
    // Test files run side by side, each with gateways, workers and pools of its own, on one
    // Postgres with the stock 100 connections: 4 per pool keeps the run well inside them. A test
    // of pool pressure sets its own.
    DATABASE_POOL_MAX: '4',
    // Each gateway's render threads would start with it and draw two dozen sample proofs, about
    // 3 s of CPU, for a hundred gateways in a run, most of which draw nothing. And below the normal
    // priority, on a machine the other test files keep busy, a render thread gets a sliver of a
    // core: a test's first proof waited past its deadline. The tests of the production setting
    // (proof load) set both.
    RENDER_WARM_UP: 'false',
    RENDER_PRIORITY: 'normal',
    ...overrides,
  })
}

/**
 * A database of its own for a test file whose workers or dispatcher would otherwise pick up
 * rows other test files create in the shared one. Drop it in afterAll.
 */
export async function isolatedDatabase(label: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const { dropDatabase } = await import('@letters/db')
  const url = inject('databaseUrl').replace(/\/([^/]*)$/, (_, name: string) => `/${name}_${label}_${Math.random().toString(36).slice(2, 8)}`)
  await copyDatabase(inject('templateDatabaseUrl'), url)
  return { url, drop: () => dropDatabase(url) }
}

/** A copy slower than this is reported. */
const SLOW_COPY_MS = 5_000

/**
 * Creates the database of `url` as a copy of the one of `templateUrl`, a database migrated by
 * prepareDatabase that no session is connected to (CREATE DATABASE … TEMPLATE): the schema, the
 * migrations' rows and their record, as migrating it would leave them, for a fraction of the
 * Postgres CPU that running the migrations takes (a run makes some two hundred databases).
 */
export async function copyDatabase(templateUrl: string, url: string): Promise<void> {
  const name = (of: string) => decodeURIComponent(new URL(of).pathname.slice(1))
  const maintenanceUrl = new URL(url)
  maintenanceUrl.pathname = '/postgres'
  const sql = postgres(maintenanceUrl.toString(), { max: 1, onnotice: () => {} })
  const started = performance.now()
  try {
    // FILE_COPY copies the template's files as they are; the default (WAL_LOG) writes every block
    // of them to the WAL, which took six times the Postgres CPU for a database of 9 MB.
    await sql`CREATE DATABASE ${sql(name(url))} TEMPLATE ${sql(name(templateUrl))} STRATEGY FILE_COPY`
  } finally {
    await sql.end()
  }
  // It counts in the time of a file's first test: a slow one is said, so a timeout can be read.
  const ms = performance.now() - started
  if (ms > SLOW_COPY_MS) console.warn(`copying the template database to ${name(url)} took ${Math.round(ms)} ms`)
}

/** Terminates every client backend of the database at `databaseUrl` but its own: a failover, a pooler restart. Returns how many. */
export async function terminateClientBackends(databaseUrl: string): Promise<number> {
  const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} })
  try {
    const [row] = await admin<Array<{ n: number }>>`SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`
    return row?.n ?? 0
  } finally {
    await admin.end()
  }
}
