import { afterAll, describe, expect } from 'vitest'
import { sql } from 'drizzle-orm'
import { sampleRecipient } from '../support/factories.js'
import { it as base } from '../support/fixtures.js'
import { freePort, startGatewayProcess, type ServiceProcess } from '../support/processes.js'

// The in-process gateway sets up the account and checks the outcome; the one that dies is a child process.
const it = base.extend({ gatewayOptions: { checkContract: false }, accountCredits: 30 })

let gateway: ServiceProcess | undefined
afterAll(async () => {
  await gateway?.kill()
})

const { company: _company, ...recipient } = sampleRecipient

describe('a gateway that dies in the middle of a creation with an Idempotency-Key', () => {
  it('leaves the key free at once: the client’s retry creates the letter, charged once', async ({ gateway: app, account }) => {
    const body = { cardDesignId: account.cardDesignId, envelopeDesignId: account.envelopeDesignId, senderId: account.senderId, message: 'Hola', ...recipient }
    const port = await freePort()
    gateway = await startGatewayProcess(app.config, port)

    // A slow concurrent charge holds the account: the request waits inside its transaction.
    let release!: () => void
    let locked!: (pid: number) => void
    const taken = new Promise<number>((resolve) => (locked = resolve))
    const holder = app.db.transaction(async (tx) => {
      const [row] = await tx.execute<{ pid: number }>(sql`SELECT pg_backend_pid() AS pid FROM accounts WHERE id = ${account.id}::uuid FOR NO KEY UPDATE`)
      locked(row!.pid)
      await new Promise<void>((resolve) => (release = resolve))
    })
    const holderPid = await taken
    const first = fetch(`http://127.0.0.1:${port}/single`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': account.apiKey, 'idempotency-key': 'pedido-crash' },
      body: JSON.stringify(body),
    }).then(
      (response) => response.status,
      () => 'connection lost' as const,
    )
    // The request is in the creation, waiting for the account's row.
    await expect
      .poll(
        async () =>
          (await app.db.execute<{ n: number }>(sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE ${holderPid}::int = ANY (pg_blocking_pids(pid))`))[0]
            ?.n,
        { timeout: 10_000, interval: 20 },
      )
      .toBe(1)

    await gateway.kill()
    gateway = undefined
    expect(await first).toBe('connection lost')
    // Its transaction never commits: Postgres notices the closed socket within a second
    // (client_connection_check_interval), even while the statement waits for the lock.
    await expect
      .poll(
        async () =>
          (await app.db.execute<{ n: number }>(sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE ${holderPid}::int = ANY (pg_blocking_pids(pid))`))[0]
            ?.n,
        { timeout: 3000, interval: 50 },
      )
      .toBe(0)
    release()
    await holder

    // The client retries at once with the same key, on another replica.
    const retry = await app.inject({
      method: 'POST',
      url: '/single',
      headers: { 'x-api-key': account.apiKey, 'idempotency-key': 'pedido-crash' },
      payload: body,
    })
    expect(retry.statusCode, retry.body).toBe(200)
    expect(retry.headers['idempotent-replayed']).toBeUndefined()

    const cardId = retry.json<{ cardId: string }>().cardId
    const letters = await app.db.execute<{ id: string }>(sql`SELECT id FROM letters WHERE account_id = ${account.id}::uuid`)
    const entries = await app.db.execute<{ kind: string; amount: number; letter_id: string }>(
      sql`SELECT kind, amount, letter_id FROM ledger_entries WHERE account_id = ${account.id}::uuid AND kind = 'charge'`,
    )
    expect(letters.map((row) => row.id)).toEqual([cardId])
    expect(entries.map((row) => [row.kind, row.amount, row.letter_id])).toEqual([['charge', -3, cardId]])
    const [balance] = await app.db.execute<{ balance: number }>(sql`SELECT balance FROM accounts WHERE id = ${account.id}::uuid`)
    expect(balance?.balance).toBe(27)
  })
})
