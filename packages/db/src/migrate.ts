import { fileURLToPath } from 'node:url'
import { migrate } from 'drizzle-orm/postgres-js/migrator'
import { drizzle } from 'drizzle-orm/postgres-js'
import postgres from 'postgres'
import { SQLSTATE } from './errors.js'

const migrationsFolder = fileURLToPath(new URL('../migrations', import.meta.url))

/** Any constant: every process that migrates takes the same lock, so only one migrates at a time. */
const MIGRATION_LOCK_ID = 727_001

function databaseName(url: string): string {
  const name = decodeURIComponent(new URL(url).pathname.slice(1))
  if (!name) throw new Error(`DATABASE_URL has no database name: ${url}`)
  return name
}

/** Runs `work` on a connection to the server's `postgres` database, beside the one in `url`. */
async function onMaintenanceDb<T>(url: string, work: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const maintenanceUrl = new URL(url)
  maintenanceUrl.pathname = '/postgres'
  const sql = postgres(maintenanceUrl.toString(), { max: 1, onnotice: () => {} })
  try {
    return await work(sql)
  } finally {
    await sql.end()
  }
}

/** Creates the database named in `url` when it does not exist yet. */
export async function ensureDatabase(url: string): Promise<void> {
  const name = databaseName(url)
  await onMaintenanceDb(url, async (sql) => {
    const [row] = await sql`SELECT 1 AS present FROM pg_database WHERE datname = ${name}`
    if (row) return
    await sql`CREATE DATABASE ${sql(name)}`.catch((error: { code?: string; constraint_name?: string }) => {
      // Another process created it between the look-up and the CREATE: 42P04 when it had
      // committed, a unique violation on pg_database when both CREATEs ran at once.
      const createdElsewhere =
        error.code === SQLSTATE.duplicateDatabase || (error.code === SQLSTATE.uniqueViolation && error.constraint_name === 'pg_database_datname_index')
      if (!createdElsewhere) throw error
    })
  })
}

/**
 * Creates the database if needed and applies the pending migrations. Safe to call from every
 * process at start: an advisory lock lets one of them migrate while the others wait.
 */
export async function prepareDatabase(url: string): Promise<void> {
  await ensureDatabase(url)
  const sql = postgres(url, { max: 1, onnotice: () => {} })
  try {
    await sql`SELECT pg_advisory_lock(${MIGRATION_LOCK_ID})`
    try {
      await migrate(drizzle(sql), { migrationsFolder })
    } finally {
      await sql`SELECT pg_advisory_unlock(${MIGRATION_LOCK_ID})`
    }
  } finally {
    await sql.end()
  }
}

/** Drops a database, closing its connections first. Tests use it to clean up. */
export async function dropDatabase(url: string): Promise<void> {
  const name = databaseName(url)
  await onMaintenanceDb(url, (sql) => sql`DROP DATABASE IF EXISTS ${sql(name)} WITH (FORCE)`)
}
