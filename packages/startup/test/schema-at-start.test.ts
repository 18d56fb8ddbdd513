import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it, vi } from 'vitest'
import { drizzle } from 'drizzle-orm/postgres-js'
import { migrate } from 'drizzle-orm/postgres-js/migrator'
import postgres from 'postgres'
import { dropDatabase, ensureDatabase, knownMigrations, prepareDatabase, requiredMigration } from '@letters/db'
import { limitedRole } from '@letters/test/support/connection-budget'
import { testConfig } from '@letters/test/support/context'
import { freePort, startServiceProcess, type ServiceProcess } from '@letters/test/support/processes'

const migrationsFolder = fileURLToPath(new URL('../../db/migrations', import.meta.url))

const freshUrl = (label: string) =>
  testConfig().databaseUrl.replace(/\/([^/]*)$/, (_, name: string) => `/${name}_${label}_${Math.random().toString(36).slice(2, 8)}`)

/** A database as the release whose newest migration is `lastTag` left it, migrated by drizzle's own migrator as that release did. */
async function databaseAt(lastTag: string): Promise<string> {
  const url = freshUrl('older')
  const journal = JSON.parse(await readFile(join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as { entries: Array<{ tag: string }> }
  const entries = journal.entries.slice(0, journal.entries.findIndex((entry) => entry.tag === lastTag) + 1)
  expect(entries.at(-1)?.tag).toBe(lastTag)
  const folder = await mkdtemp(join(tmpdir(), 'migrations-'))
  await mkdir(join(folder, 'meta'))
  await writeFile(join(folder, 'meta', '_journal.json'), JSON.stringify({ ...journal, entries }))
  for (const { tag } of entries) await copyFile(join(migrationsFolder, `${tag}.sql`), join(folder, `${tag}.sql`))
  await ensureDatabase(url)
  const sql = postgres(url, { max: 1, onnotice: () => {} })
  try {
    await migrate(drizzle(sql), { migrationsFolder: folder })
  } finally {
    await sql.end()
    await rm(folder, { recursive: true, force: true })
  }
  return url
}

/** What a newer release's migrate step leaves: one migration this code does not know, and the oldest code it still accepts. */
async function migrateAsNewerRelease(url: string, compatibleFrom: string) {
  const sql = postgres(url, { max: 1, onnotice: () => {} })
  try {
    await sql`INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ('a-newer-release', ${knownMigrations().at(-1)!.when + 86_400_000})`
    await sql`UPDATE schema_compatibility SET oldest_code_migration = ${compatibleFrom}`
  } finally {
    await sql.end()
  }
}

const configOn = (url: string, label: string) => testConfig({ DATABASE_URL: url, QUEUE_PREFIX: `${testConfig().queuePrefix}-${label}` })

describe('the schema a process starts on (it never migrates by itself)', () => {
  it.each(['address-worker', 'gateway'] as const)(
    '%s refuses a database older than it needs: exit 1, one line naming the schema and the command to run, nothing migrated',
    async (name) => {
      const url = await databaseAt('0010_letter_status_check')
      try {
        const env: Record<string, string> = name === 'gateway' ? { PORT: String(await freePort()) } : {}
        const started = startServiceProcess(name, configOn(url, `older-${name}`), { LOG_LEVEL: 'info', ...env })
        await expect(started).rejects.toThrow(/exited with 1 before it was ready/)
        const message = ((await started.catch((error: Error) => error)) as Error).message
        expect(message).toContain(`it is at 0010_letter_status_check and this version needs ${requiredMigration()}`)
        expect(message).toContain('npm run migrate')
        // Refused, not migrated: the database is as it was.
        const sql = postgres(url, { max: 1, onnotice: () => {} })
        const [row] = await sql<Array<{ n: number }>>`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`
        await sql.end()
        expect(row?.n).toBe(knownMigrations().findIndex((migration) => migration.tag === '0010_letter_status_check') + 1)
      } finally {
        await dropDatabase(url)
      }
    },
    60_000,
  )

  it('refuses a database that does not exist yet, saying that the migrations create it', async () => {
    const refused = await startServiceProcess('address-worker', configOn(freshUrl('missing'), 'missing'), { LOG_LEVEL: 'info' }).catch((error: Error) => error)
    expect(refused).toBeInstanceOf(Error)
    expect((refused as Error).message).toMatch(/exited with 1 before it was ready/)
    expect((refused as Error).message).toContain(
      'The database in DATABASE_URL does not exist. Run the migrations first: npm run migrate (it creates the database).',
    )
  }, 60_000)

  it('runs on a schema one release newer that still accepts it, and refuses one that dropped what this version used', async () => {
    const url = freshUrl('newer')
    await prepareDatabase(url)
    try {
      await migrateAsNewerRelease(url, requiredMigration())
      const worker = await startServiceProcess('address-worker', configOn(url, 'newer'), { LOG_LEVEL: 'info' })
      await worker.kill()
      expect(worker.output()).toMatch(/the database schema is newer than this version and still compatible with it/)

      await migrateAsNewerRelease(url, '0099_a_later_contraction')
      const refused = await startServiceProcess('address-worker', configOn(url, 'newer-refused'), { LOG_LEVEL: 'info' }).catch((error: Error) => error)
      expect(refused).toBeInstanceOf(Error)
      expect((refused as Error).message).toMatch(/exited with 1 before it was ready/)
      expect((refused as Error).message).toContain('more than one release newer than this version: it needs code written against 0099_a_later_contraction')
    } finally {
      await dropDatabase(url)
    }
  }, 60_000)

  it('waits while Postgres has no connection slot for it (53300), instead of dying, and starts once one frees', async () => {
    const url = freshUrl('budget')
    await prepareDatabase(url)
    const role = await limitedRole(url, 2)
    let release = await role.hold(2)
    try {
      let spawned: ServiceProcess | undefined
      const starting = startServiceProcess(
        'address-worker',
        configOn(role.url, 'budget'),
        { LOG_LEVEL: 'info' },
        { timeoutMs: 60_000, onSpawn: (process) => (spawned = process) },
      )
      let failedEarly: unknown
      starting.catch((error: unknown) => (failedEarly = error))
      // It keeps trying for as long as the slots stay taken: refused three times, still running.
      const refusals = () => spawned?.output().match(/Postgres cannot be reached yet; trying again/g)?.length ?? 0
      await vi.waitFor(() => expect(refusals() >= 3 || failedEarly !== undefined).toBe(true), { timeout: 45_000, interval: 100 })
      expect(failedEarly).toBeUndefined()
      expect(spawned!.alive()).toBe(true)
      await release()
      release = async () => {}
      const worker = await starting
      await worker.kill()
      expect(worker.output()).toMatch(/Postgres cannot be reached yet; trying again/)
      expect(worker.output()).toMatch(/53300/)
    } finally {
      await release()
      await role.drop()
      await dropDatabase(url)
    }
  }, 90_000)
})
