import { randomUUID } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect } from 'vitest'
import { eq, inArray, sql } from 'drizzle-orm'
import postgres from 'postgres'
import { ledgerEntries, letterEvents, letters } from '@letters/db'
import { adminAccount, overHttp } from '../support/accounts.js'
import { testConfig } from '../support/context.js'
import { it as base } from '../support/fixtures.js'
import { loggingCommand, printsIn } from '../support/floor-processes.js'
import { freePort, startGatewayProcess, startServiceProcess, type ServiceProcess } from '../support/processes.js'
import { singleLetter } from '../support/factories.js'

/**
 * The gateway and both workers as real processes while every backend of their database is
 * terminated, again and again, as a failover or a pooler restart does. Bounded: 10 rounds, two
 * clients, 127.0.0.1 only.
 */
const ROUNDS = 10
const CLIENTS = 2

/** The gateway, address and production processes on the file's database, and where the floor prints. */
const it = base.extend('floor', { scope: 'file' }, async ({ databaseUrl }, { onCleanup }) => {
  const floorDir = await mkdtemp(join(tmpdir(), 'letters-drops-'))
  const port = await freePort()
  const config = testConfig({
    DATABASE_URL: databaseUrl,
    QUEUE_PREFIX: `${testConfig().queuePrefix}-drops`,
    ARTIFACTS_DIR: join(floorDir, 'artifacts'),
    SPOOL_DIR: join(floorDir, 'spool'),
  })
  // Errors only: what the guard logs, and any crash. A print command that logs every file it
  // prints: a second print of any file, whatever drop caused it, shows in the log.
  const printLog = join(floorDir, 'prints.log')
  const env = { LOG_LEVEL: 'error', PRINT_COMMAND: loggingCommand(printLog) }
  /** Each added as soon as it runs, so that stopping stops whichever started. */
  const services: Record<string, ServiceProcess> = {}
  const stop = async () => {
    await Promise.all(Object.values(services).map((service) => service.kill()))
    await rm(floorDir, { recursive: true, force: true })
  }
  try {
    // One after the other.
    services.gateway = await startGatewayProcess(config, port, env)
    services.address = await startServiceProcess('address-worker', config, env)
    services.production = await startServiceProcess('production-worker', config, env)
  } catch (error) {
    await stop()
    throw error
  }
  onCleanup(stop)
  return { baseUrl: `http://127.0.0.1:${port}`, services, printLog }
})
it.override({ databaseLabel: 'drops' })

type Account = Awaited<ReturnType<typeof adminAccount>>

/** POST /single as a careful client: one Idempotency-Key per letter, retried on 503, 409 (still running), a 500 that asks for it, and dropped connections. */
async function sendLetter(baseUrl: string, account: Account, n: number): Promise<string> {
  const key = randomUUID()
  const body = JSON.stringify(singleLetter(account, { message: `Carta ${n}`, address: 'C/ Mayor 1', province: '' }))
  let last = ''
  for (let attempt = 1; attempt <= 60; attempt++) {
    const response = await fetch(`${baseUrl}/single`, {
      method: 'POST',
      headers: { 'x-api-key': account.apiKey, 'content-type': 'application/json', 'idempotency-key': key },
      body,
      signal: AbortSignal.timeout(15_000),
    }).catch(() => undefined)
    if (response?.status === 200) return ((await response.json()) as { cardId: string }).cardId
    const text = await response?.text()
    last = `${response?.status ?? 'no response'} ${text ?? ''}`
    // A 500 that says so (the commit's outcome unknown) asks for the same request with the same key.
    const retryable = [503, 409].includes(response?.status ?? 0) || (response?.status === 500 && /misma Idempotency-Key/.test(text ?? ''))
    if (response && !retryable) throw new Error(`letter ${n} answered ${response.status}: ${text}`)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  throw new Error(`letter ${n} was never accepted; last answer: ${last}`)
}

/** Terminates every backend of the test database but this connection's; returns how many. */
async function terminateEveryBackend(killer: postgres.Sql): Promise<number> {
  const rows = await killer`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`
  return rows.length
}

describe('every Postgres backend terminated, ten times, while letters flow', () => {
  // Its timeout includes the processes' start.
  it('crashes no process and loses nothing: every accepted letter printed once and charged once, every balance equal to its ledger', async ({
    database: db,
    databaseUrl,
    floor: { baseUrl, services, printLog },
  }) => {
    const account = await adminAccount(overHttp(baseUrl), 1000)
    const accepted: string[] = []
    let sending = true
    const clients = Array.from({ length: CLIENTS }, async (_, client) => {
      // About three letters a second in all: as many as a loaded floor prints, so the drain stays short.
      for (let n = 0; sending; n++) {
        accepted.push(await sendLetter(baseUrl, account, client * 1000 + n))
        await new Promise((resolve) => setTimeout(resolve, 600))
      }
    })

    const killer = postgres(databaseUrl, { max: 1, onnotice: () => {} })
    const terminated: number[] = []
    try {
      for (let round = 0; round < ROUNDS; round++) {
        await new Promise((resolve) => setTimeout(resolve, 700 + Math.random() * 600))
        terminated.push(await terminateEveryBackend(killer))
      }
    } finally {
      sending = false
      await killer.end()
    }
    await Promise.all(clients)
    // Every round found the services connected again, and took their connections down.
    expect(
      terminated.every((count) => count > 0),
      `backends terminated per round: ${terminated}`,
    ).toBe(true)
    expect(accepted.length).toBeGreaterThan(ROUNDS)

    const everyServiceAlive = () => {
      for (const [name, service] of Object.entries(services)) expect(service.alive(), `${name} exited:\n${service.output()}`).toBe(true)
    }
    everyServiceAlive()
    const drainStarted = Date.now()
    const notPrinted = async () =>
      (
        await db
          .select({ id: letters.id })
          .from(letters)
          .where(sql`${letters.status} <> 'printed'`)
      ).length
    // Production retries wait 5, 10 and 20 s: a letter hit by a drop on several attempts takes a while.
    await expect
      .poll(notPrinted, { timeout: 120_000, interval: 500 })
      .toBe(0)
      .catch(async (error: Error) => {
        const stuck = await db.execute(sql`
        SELECT l.id, l.status, l.updated_at, (SELECT json_agg(json_build_object('status', e.status, 'detail', e.detail, 'at', e.at) ORDER BY e.id) FROM letter_events e WHERE e.letter_id = l.id) AS events,
          (SELECT json_agg(json_build_object('id', o.id, 'job', o.job_name, 'sent', o.sent_at) ORDER BY o.created_at) FROM outbox o WHERE o.payload ->> 'letterId' = l.id::text) AS jobs
        FROM letters l WHERE l.status <> 'printed'`)
        throw new Error(`${error.message}; not printed: ${JSON.stringify(stuck, null, 1)}`)
      })

    everyServiceAlive()
    // The patched driver never gets that far; the guard would log it and carry on.
    for (const service of Object.values(services)) expect(service.output()).not.toContain('Cannot read properties of null')

    const stored = await db.select({ id: letters.id, accountId: letters.accountId }).from(letters)
    expect(stored.map((letter) => letter.id).sort()).toEqual([...accepted].sort())
    const charges = await db
      .select({ letterId: ledgerEntries.letterId, amount: ledgerEntries.amount })
      .from(ledgerEntries)
      .where(eq(ledgerEntries.kind, 'charge'))
    expect(charges.map((charge) => charge.letterId).sort()).toEqual([...accepted].sort())
    const printedEvents = await db.select({ letterId: letterEvents.letterId }).from(letterEvents).where(eq(letterEvents.status, 'printed'))
    expect(printedEvents.map((event) => event.letterId).sort()).toEqual([...accepted].sort())
    // Each file handed to the printer once: the floor's fencing held through every drop.
    const prints = await printsIn(printLog)
    expect([...prints.keys()].map((path) => path.split('/').slice(-2).join('.')).sort()).toEqual(
      accepted.flatMap((id) => [`${id}.card.pdf`, `${id}.envelope.pdf`]).sort(),
    )
    expect([...prints.entries()].filter(([, count]) => count !== 1)).toEqual([])
    console.info(
      'dropped connections figures',
      JSON.stringify({
        rounds: ROUNDS,
        backendsTerminatedPerRound: terminated,
        lettersAccepted: accepted.length,
        filesPrinted: prints.size,
        drainMs: Date.now() - drainStarted,
      }),
    )

    const balances = await db.execute<{ id: string; balance: number; ledger: number }>(sql`
      SELECT a.id, a.balance, COALESCE(SUM(e.amount), 0)::int AS ledger
      FROM accounts a LEFT JOIN ledger_entries e ON e.account_id = a.id GROUP BY a.id, a.balance`)
    for (const row of balances) expect(row.balance).toBe(row.ledger)
    expect(balances.find((row) => row.id === account.id)?.balance).toBe(1000 - 3 * accepted.length)
    expect(
      await db
        .select({ id: letters.id })
        .from(letters)
        .where(inArray(letters.status, ['failed'])),
    ).toEqual([])
  }, 330_000)
})
