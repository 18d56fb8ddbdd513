import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import postgres from 'postgres'
import { SQLSTATE, isConnectionError, sqlState } from './errors.js'

const migrationsFolder = fileURLToPath(new URL('../migrations', import.meta.url))

/** Any constant: every migration run takes the same lock, so only one migrates at a time. */
const MIGRATION_LOCK_ID = 727_001

/**
 * A migration file whose first line is this marker runs statement by statement outside a
 * transaction: `CREATE INDEX CONCURRENTLY` cannot run inside one. Its statements must be safe to
 * run again (`IF NOT EXISTS`), since a run cut short part-way starts the file over.
 */
const NO_TRANSACTION_MARKER = '-- migrate: no-transaction'

/**
 * How long a migration statement may wait for a lock. While it waits, every query behind it on
 * the same table waits too; failing fast and trying again later keeps a busy table serving.
 */
const LOCK_TIMEOUT_MS = 1000
const LOCK_ATTEMPTS = 20

export interface Migration {
  tag: string
  /** drizzle-kit's timestamp of the file, which orders the migrations and names them in the database. */
  when: number
  /** The same hash drizzle's migrator records, so a database it migrated carries on here. */
  hash: string
  statements: string[]
  inTransaction: boolean
}

interface Journal {
  entries: Array<{ tag: string; when: number }>
}

let known: Migration[] | undefined

/** The migrations this code knows, oldest first, from the journal drizzle-kit writes. */
export function knownMigrations(): Migration[] {
  known ??= (JSON.parse(readFileSync(`${migrationsFolder}/meta/_journal.json`, 'utf8')) as Journal).entries.map(({ tag, when }) => {
    const text = readFileSync(`${migrationsFolder}/${tag}.sql`, 'utf8')
    return {
      tag,
      when,
      hash: createHash('sha256').update(text).digest('hex'),
      statements: text.split('--> statement-breakpoint').filter((statement) => statement.trim() !== ''),
      inTransaction: !text.startsWith(NO_TRANSACTION_MARKER),
    }
  })
  return known
}

/** The newest migration this code was written against. */
export const requiredMigration = (): string => knownMigrations().at(-1)!.tag

/** Where a database stands against this code. */
export interface SchemaStatus {
  /** The newest migration of this code's that the database has, or null for an empty database. */
  current: string | null
  /** This code's migrations that the database lacks, oldest first. */
  pending: string[]
  /** Migrations the database has that this code does not know: a newer release migrated it. */
  newer: number
  /**
   * The oldest migration a process may have been written against and still run on this schema
   * (set by the migration that last dropped something), or null where no migration set it.
   */
  compatibleFrom: string | null
}

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

async function onDatabase<T>(url: string, work: (sql: postgres.Sql) => Promise<T>, connection: Record<string, string | number> = {}): Promise<T> {
  // One session for the whole run, never recycled (postgres.js would end a connection after
  // 30 to 60 minutes): the migration lock and the lock timeout are that session's.
  const sql = postgres(url, { max: 1, onnotice: () => {}, connection, max_lifetime: null })
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

async function appliedMigrations(sql: postgres.Sql): Promise<number[]> {
  const [table] = await sql<Array<{ present: string | null }>>`SELECT to_regclass('drizzle.__drizzle_migrations')::text AS present`
  if (!table?.present) return []
  const rows = await sql<Array<{ createdAt: string }>>`SELECT created_at::text AS "createdAt" FROM drizzle.__drizzle_migrations`
  return rows.map((row) => Number(row.createdAt))
}

async function compatibleFrom(sql: postgres.Sql): Promise<string | null> {
  const [table] = await sql<Array<{ present: string | null }>>`SELECT to_regclass('public.schema_compatibility')::text AS present`
  if (!table?.present) return null
  const [row] = await sql<Array<{ oldest: string }>>`SELECT oldest_code_migration AS oldest FROM schema_compatibility`
  return row?.oldest ?? null
}

function statusOf(applied: number[], compatible: string | null): SchemaStatus {
  const migrations = knownMigrations()
  const have = new Set(applied)
  const mine = new Set(migrations.map((migration) => migration.when))
  const present = migrations.filter((migration) => have.has(migration.when))
  return {
    current: present.at(-1)?.tag ?? null,
    pending: migrations.filter((migration) => !have.has(migration.when)).map((migration) => migration.tag),
    newer: applied.filter((when) => !mine.has(when)).length,
    compatibleFrom: compatible,
  }
}

/** Where the database at `url` stands against this code; it reads, never writes. */
export async function schemaStatus(url: string): Promise<SchemaStatus> {
  return onDatabase(url, async (sql) => statusOf(await appliedMigrations(sql), await compatibleFrom(sql)))
}

/** The schema does not fit this code: the message says which way and what to run. */
export class SchemaMismatch extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'SchemaMismatch'
  }
}

/**
 * What a process checks at start instead of migrating: the database must have every migration
 * this code needs, and anything newer must still accept this code (a release only adds what the
 * one before tolerates, and drops only what that one no longer used).
 */
export function checkSchema(status: SchemaStatus): void {
  if (status.pending.length > 0) {
    const at = status.current ?? 'no migration'
    throw new SchemaMismatch(
      `The database schema is older than this version: it is at ${at} and this version needs ${requiredMigration()} ` +
        `(${status.pending.length} pending). Run the migrations first: npm run migrate (or the migrate Job / compose service).`,
    )
  }
  if (status.newer > 0 && status.compatibleFrom !== null && !knownMigrations().some((migration) => migration.tag === status.compatibleFrom)) {
    throw new SchemaMismatch(
      `The database schema is more than one release newer than this version: it needs code written against ${status.compatibleFrom} or later, ` +
        `and this version knows up to ${requiredMigration()}. Deploy the newer release.`,
    )
  }
}

/** Reads the schema's status and refuses (SchemaMismatch) a database this code cannot run on. */
export async function requireSchema(url: string): Promise<SchemaStatus> {
  const status = await schemaStatus(url)
  checkSchema(status)
  return status
}

/** Invalid indexes an interrupted `CREATE INDEX CONCURRENTLY` left behind, among those the migration builds. */
async function dropInvalidIndexes(sql: postgres.Sql, migration: Migration): Promise<void> {
  const names = migration.statements.flatMap((statement) =>
    [...statement.matchAll(/CREATE\s+(?:UNIQUE\s+)?INDEX\s+CONCURRENTLY\s+IF\s+NOT\s+EXISTS\s+"([^"]+)"/gi)].map((match) => match[1]!),
  )
  if (names.length === 0) return
  const invalid = await sql<Array<{ name: string }>>`SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
    WHERE NOT i.indisvalid AND c.relname IN ${sql(names)}`
  for (const { name } of invalid) await sql`DROP INDEX CONCURRENTLY IF EXISTS ${sql(name)}`
}

/** Whether this session still holds the migration lock: a connection dropped and silently reopened would not. */
async function holdsMigrationLock(sql: postgres.Sql): Promise<boolean> {
  const [row] = await sql<Array<{ held: boolean }>>`SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND classid = 0
    AND objid = ${MIGRATION_LOCK_ID} AND pid = pg_backend_pid() AND granted) AS held`
  return row?.held ?? false
}

/** Raw postgres.js: the migration's statements as its file holds them, on the migrator's own connection. */
async function applyMigration(sql: postgres.Sql, migration: Migration): Promise<void> {
  const record = (run: postgres.Sql | postgres.TransactionSql) =>
    run`INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES (${migration.hash}, ${migration.when})`
  if (migration.inTransaction) {
    await sql.begin(async (tx) => {
      for (const statement of migration.statements) await tx.unsafe(statement)
      await record(tx)
    })
    return
  }
  // A build CONCURRENTLY blocks no reads or writes while it waits for the transactions under way,
  // and those waits are lock waits: under the 1 s limit any longer transaction would cancel it.
  await sql`SELECT set_config('lock_timeout', '0', false)`
  try {
    await dropInvalidIndexes(sql, migration)
    for (const statement of migration.statements) await sql.unsafe(statement)
    await record(sql)
  } finally {
    await sql`SELECT set_config('lock_timeout', ${String(LOCK_TIMEOUT_MS)}, false)`
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * The lock that lets one run migrate at a time, waited for as long as another run takes. Asked
 * again every quarter second rather than waited for inside a statement: a run building an index
 * CONCURRENTLY waits for every transaction under way, a waiting statement included, and the two
 * would wait for each other.
 */
async function takeMigrationLock(sql: postgres.Sql, onProgress?: (message: string) => void): Promise<void> {
  for (let tries = 0; ; tries++) {
    const [row] = await sql<Array<{ locked: boolean }>>`SELECT pg_try_advisory_lock(${MIGRATION_LOCK_ID}) AS locked`
    if (row?.locked) return
    if (tries % 40 === 0) onProgress?.('another run is migrating this database; waiting for it')
    await sleep(250)
  }
}

export interface MigrateOptions {
  /** Told of each migration as it is applied, and of each lock it had to wait for. */
  onProgress?: (message: string) => void
}

/**
 * Creates the database if needed and applies the pending migrations, each in its own transaction
 * (or statement by statement, for a file marked no-transaction), under an advisory lock so that
 * two runs never migrate at once. A statement that cannot get its table's lock within a second
 * gives up and its migration is tried again after a pause, so that a migration never queues the
 * table's reads and writes behind it for long. Returns the migrations it applied.
 */
export async function prepareDatabase(url: string, options: MigrateOptions = {}): Promise<string[]> {
  await ensureDatabase(url)
  // The migration SQL is the project's own files, run as they are written: postgres.js's
  // `unsafe` is the one way to run a file's statements verbatim.
  return onDatabase(
    url,
    async (sql) => {
      await takeMigrationLock(sql, options.onProgress)
      await sql`SELECT set_config('lock_timeout', ${String(LOCK_TIMEOUT_MS)}, false)`
      try {
        await sql`CREATE SCHEMA IF NOT EXISTS drizzle`
        await sql`CREATE TABLE IF NOT EXISTS drizzle.__drizzle_migrations (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`
        const applied: string[] = []
        for (const migration of knownMigrations()) {
          if ((await appliedMigrations(sql)).includes(migration.when)) continue
          for (let attempt = 1; ; attempt++) {
            if (!(await holdsMigrationLock(sql)))
              throw new Error('the migration lock was lost with its connection; nothing more was applied: run the migrations again')
            try {
              await applyMigration(sql, migration)
              break
            } catch (error) {
              const code = sqlState(error)
              if ((code !== SQLSTATE.lockNotAvailable && code !== SQLSTATE.deadlockDetected) || attempt >= LOCK_ATTEMPTS) throw error
              const why = code === SQLSTATE.deadlockDetected ? 'a deadlock with another session' : `a table is busy (lock wait over ${LOCK_TIMEOUT_MS} ms)`
              options.onProgress?.(`${migration.tag}: ${why}; trying again (${attempt}/${LOCK_ATTEMPTS})`)
              await sleep(Math.min(500 * attempt, 5000))
            }
          }
          applied.push(migration.tag)
          options.onProgress?.(`${migration.tag}: applied`)
        }
        return applied
      } finally {
        await sql`SELECT pg_advisory_unlock(${MIGRATION_LOCK_ID})`.catch((error: unknown) => {
          // The lock goes with the connection, which closes right after.
          if (!isConnectionError(error)) throw error
        })
      }
    },
    { statement_timeout: 0 },
  )
}

/** Drops a database, closing its connections first. Tests use it to clean up. */
export async function dropDatabase(url: string): Promise<void> {
  const name = databaseName(url)
  await onMaintenanceDb(url, (sql) => sql`DROP DATABASE IF EXISTS ${sql(name)} WITH (FORCE)`)
}
