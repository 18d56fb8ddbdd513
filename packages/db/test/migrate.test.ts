import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { drizzle } from 'drizzle-orm/postgres-js'
import { migrate } from 'drizzle-orm/postgres-js/migrator'
import postgres from 'postgres'
import { testConfig } from '@letters/test/support/context'
import { dropDatabase, ensureDatabase, prepareDatabase } from '../src/index.js'

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
      await sql.end()
      expect(row?.tables).toBe(3)
    } finally {
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
