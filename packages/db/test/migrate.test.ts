import { execFile } from 'node:child_process'
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { drizzle } from 'drizzle-orm/postgres-js'
import { migrate } from 'drizzle-orm/postgres-js/migrator'
import postgres from 'postgres'
import { testConfig } from '@letters/test/support/context'
import { dropDatabase, ensureDatabase, knownMigrations, prepareDatabase } from '../src/index.js'

/** A database of its own, named after `label`, on the tests' server. */
const freshUrl = (label: string) =>
  testConfig().databaseUrl.replace(/\/([^/]*)$/, (_, name: string) => `/${name}_${label}_${Math.random().toString(36).slice(2, 8)}`)

const migrationsFolder = fileURLToPath(new URL('../migrations', import.meta.url))

/** A copy of the migrations folder that ends with `lastTag`: a database as the release that shipped it left it. */
async function migrationsUpTo(lastTag: string): Promise<string> {
  const journal = JSON.parse(await readFile(join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as { entries: Array<{ tag: string }> }
  const end = journal.entries.findIndex((entry) => entry.tag === lastTag)
  expect(end).toBeGreaterThanOrEqual(0)
  const entries = journal.entries.slice(0, end + 1)
  const folder = await mkdtemp(join(tmpdir(), 'migrations-'))
  await mkdir(join(folder, 'meta'))
  await writeFile(join(folder, 'meta', '_journal.json'), JSON.stringify({ ...journal, entries }))
  for (const { tag } of entries) await copyFile(join(migrationsFolder, `${tag}.sql`), join(folder, `${tag}.sql`))
  return folder
}

describe('prepareDatabase', () => {
  it('lets several processes start at once on a database that does not exist yet', async () => {
    const url = freshUrl('start')
    try {
      await Promise.all(Array.from({ length: 6 }, () => prepareDatabase(url)))
      const sql = postgres(url, { max: 1 })
      const [row] = await sql<
        Array<{ tables: number }>
      >`SELECT count(*)::int AS tables FROM information_schema.tables WHERE table_name IN ('letters', 'outbox', 'ledger_entries')`
      // Each migration applied and recorded once, whichever run took the lock.
      const recorded = await sql<
        Array<{ createdAt: string; n: number }>
      >`SELECT created_at::text AS "createdAt", count(*)::int AS n FROM drizzle.__drizzle_migrations GROUP BY 1`
      await sql.end()
      expect(row?.tables).toBe(3)
      expect(recorded.map((migration) => migration.n)).toEqual(knownMigrations().map(() => 1))
      expect(recorded.map((migration) => Number(migration.createdAt)).sort((a, b) => a - b)).toEqual(knownMigrations().map((migration) => migration.when))
    } finally {
      await dropDatabase(url)
    }
  })
})

describe('a migration outside a transaction (an index built CONCURRENTLY)', () => {
  it('builds the index, and builds it again when an interrupted run left it invalid', async () => {
    const url = freshUrl('concurrently')
    const sql = postgres(url, { max: 1, onnotice: () => {} })
    const validity = async () =>
      (
        await sql<
          Array<{ valid: boolean }>
        >`SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = 'webhook_attempts_event_idx'`
      ).map((row) => row.valid)
    try {
      await prepareDatabase(url)
      expect(await validity()).toEqual([true])
      // What a build cut short leaves: the index there but invalid, the migration not recorded.
      const migration = knownMigrations().find((known) => known.tag === '0012_webhook_attempts_event_index')!
      expect(migration.inTransaction).toBe(false)
      await sql`UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'webhook_attempts_event_idx'::regclass`
      await sql`DELETE FROM drizzle.__drizzle_migrations WHERE created_at = ${migration.when}`
      expect(await validity()).toEqual([false])

      expect(await prepareDatabase(url)).toEqual(['0012_webhook_attempts_event_index'])
      expect(await validity()).toEqual([true])
    } finally {
      await sql.end()
      await dropDatabase(url)
    }
  })
})

describe('migration 0008 (webhook admission)', () => {
  it('keeps the backoff of deliveries pending from the release before: due when their last attempt said, now when none did, since written when never tried', async () => {
    const url = freshUrl('webhooks')
    const before = await migrationsUpTo('0007_personal_data_erasure')
    const sql = postgres(url, { max: 1, onnotice: () => {} })
    try {
      await ensureDatabase(url)
      await migrate(drizzle(sql), { migrationsFolder: before })
      const [account] = await sql<Array<{ id: string }>>`INSERT INTO accounts (name) VALUES ('Antes de la admisión') RETURNING id`
      const [endpoint] = await sql<Array<{ id: string }>>`
        INSERT INTO webhook_endpoints (account_id, url, events, secret)
        VALUES (${account!.id}, 'https://93.184.216.34/hooks', '{letter.printed}', 'whsec_x') RETURNING id`
      const event = async (state: string, attempts: number) =>
        (
          await sql<Array<{ id: string }>>`
            INSERT INTO webhook_events (endpoint_id, type, body, state, attempts) VALUES (${endpoint!.id}, 'letter.printed', '{}', ${state}, ${attempts})
            RETURNING id`
        )[0]!.id
      const attempt = (eventId: string, n: number, nextAttemptAt: Date | null, outcome: string) =>
        sql`INSERT INTO webhook_attempts (event_id, endpoint_id, attempt, status_code, duration_ms, next_attempt_at, outcome)
            VALUES (${eventId}, ${endpoint!.id}, ${n}, 500, 12, ${nextAttemptAt?.toISOString() ?? null}::timestamptz, ${outcome})`
      const retryAt = new Date(Math.floor(Date.now() / 1000) * 1000 + 3_600_000)
      const retrying = await event('pending', 2)
      await attempt(retrying, 1, new Date(Date.now() - 60_000), 'retrying')
      await attempt(retrying, 2, retryAt, 'retrying')
      const unrecorded = await event('pending', 1)
      const neverTried = await event('pending', 0)
      const failed = await event('failed', 1)
      await attempt(failed, 1, null, 'failed')

      await prepareDatabase(url)
      const rows = await sql<Array<{ id: string; nextMs: number | null; dueNow: boolean | null }>>`
        SELECT id, (extract(epoch FROM next_attempt_at) * 1000)::float8 AS "nextMs",
               next_attempt_at BETWEEN now() - interval '1 minute' AND now() AS "dueNow"
        FROM webhook_events`
      const byId = new Map(rows.map((row) => [row.id, row]))
      expect(byId.get(retrying)?.nextMs).toBe(retryAt.getTime())
      expect(byId.get(unrecorded)?.dueNow).toBe(true)
      expect(byId.get(neverTried)?.nextMs).toBeNull()
      expect(byId.get(failed)?.nextMs).toBeNull()
    } finally {
      await sql.end()
      await dropDatabase(url)
      await rm(before, { recursive: true, force: true })
    }
  })
})

describe('squawk, the migration linter npm run lint runs', () => {
  const repositoryRoot = fileURLToPath(new URL('../../..', import.meta.url))
  const squawk = (args: string[]) =>
    promisify(execFile)(join(repositoryRoot, 'node_modules/.bin/squawk'), args, { cwd: repositoryRoot }).then(
      ({ stdout }) => ({ code: 0, out: stdout }),
      (error: { code: number; stdout: string }) => ({ code: error.code, out: error.stdout }),
    )

  it('passes every migration since it came, and checks each new one', async () => {
    const result = await squawk(['packages/db/migrations/*.sql'])
    expect(result, result.out).toMatchObject({ code: 0 })
    const linted = knownMigrations().filter((migration) => migration.when > knownMigrations().find((m) => m.tag === '0010_letter_status_check')!.when)
    expect(result.out).toMatch(new RegExp(`Found 0 issues in ${linted.length} files`))
  })

  it.each([
    ['an index built while writes wait', 'CREATE INDEX "letters_probe_idx" ON "letters" ("updated_at");', 'require-concurrent-index-creation'],
    [
      'a column whose volatile default rewrites the table',
      'ALTER TABLE "letters" ADD COLUMN "probe" uuid DEFAULT gen_random_uuid();',
      'adding-field-with-default',
    ],
    ['a column dropped at once', 'ALTER TABLE "letters" DROP COLUMN "code";', 'ban-drop-column'],
    ['a check validated under the table lock', 'ALTER TABLE "letters" ADD CONSTRAINT "probe" CHECK (cost < 1000);', 'constraint-missing-not-valid'],
  ])('refuses %s', async (_what, statement, rule) => {
    const folder = await mkdtemp(join(tmpdir(), 'squawk-'))
    try {
      await writeFile(join(folder, '0099_probe.sql'), `${statement}\n`)
      const result = await squawk(['--reporter', 'gcc', join(folder, '0099_probe.sql')])
      expect(result.code).not.toBe(0)
      expect(result.out).toContain(rule)
    } finally {
      await rm(folder, { recursive: true, force: true })
    }
  })
})
