// A creation held up longer than the request timeout (an account's row locked by a slow
// transaction): every request is answered 503 with Retry-After before its connection is cut, and
// nothing of it is ever written, not even once the lock is gone.
import type { AddressInfo } from 'node:net'
import { describe, expect } from 'vitest'
import { eq, sql } from 'drizzle-orm'
import { accounts, ledgerEntries, letters } from '@letters/db'
import type { App } from '../src/app.js'
import { bulkCampaign, bulkRecipient } from './bulk-fixtures.js'
import { holdAccountRow } from '@letters/test/support/account-lock'
import { ADMIN_TOKEN } from '@letters/test/support/context'
import { it as test } from '@letters/test/support/fixtures'
import { OrderDeadline } from '@letters/intake'
import { outcomeUnknownMessage } from '../src/common/deadline-messages.js'
import { Unavailable } from '../src/common/errors.js'
import { submitOrder } from '../src/features/letters/create-letter.js'
import { adminAccount, singleLetter, startGateway } from './helpers.js'

const REQUEST_TIMEOUT_MS = 3000

/** The file's gateway listens: its requests come over HTTP, to `base`, so a deadline can answer before the connection is cut. */
const it = test.extend('base', { scope: 'file' }, async ({ gateway }) => {
  await gateway.listen({ host: '127.0.0.1', port: 0 })
  return `http://127.0.0.1:${(gateway.server.address() as AddressInfo).port}`
})
it.override({ gatewayOptions: { env: { HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS) } }, accountCredits: 100 })

async function post(base: string, path: string, apiKey: string, body: unknown, headers: Record<string, string> = {}) {
  const started = Date.now()
  try {
    const response = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    })
    return { status: response.status, retryAfter: response.headers.get('retry-after'), body: await response.text(), ms: Date.now() - started }
  } catch (error) {
    // The connection cut without an answer: what must never happen.
    return { status: 0, retryAfter: null, body: String(error), ms: Date.now() - started }
  }
}

async function moneyOf(app: App, accountId: string) {
  const [account] = await app.db.select({ balance: accounts.balance }).from(accounts).where(eq(accounts.id, accountId))
  const written = await app.db.select({ id: letters.id }).from(letters).where(eq(letters.accountId, accountId))
  const charges = await app.db.select({ id: ledgerEntries.id }).from(ledgerEntries).where(eq(ledgerEntries.accountId, accountId))
  return { balance: account!.balance, letters: written.length, ledgerEntries: charges.length }
}

describe('a creation whose account row is held past the request timeout', () => {
  it('answers /single, /card and /cards/bulk 503 with Retry-After in time, and writes and charges nothing, then or later', async ({ gateway: app, base }) => {
    const account = await adminAccount(app, 5000)
    const campaignId = await bulkCampaign(app, account)
    const before = await moneyOf(app, account.id)
    const release = await holdAccountRow(app.db, account.id)
    let answers: Awaited<ReturnType<typeof post>>[]
    try {
      answers = await Promise.all([
        ...Array.from({ length: 6 }, (_, i) => post(base, '/single', account.apiKey, singleLetter(account, { name: `Lucía ${i}` }))),
        post(base, '/single', account.apiKey, singleLetter(account), { 'idempotency-key': 'deadline-single' }),
        post(base, '/card', account.apiKey, { campaignId, ...bulkRecipient() }),
        post(base, '/cards/bulk', account.apiKey, { campaignId, recipients: Array.from({ length: 1000 }, (_, i) => bulkRecipient({ name: `Cliente ${i}` })) }),
      ])
      // The lock outlives every request by seconds: a request still at work would write now.
      await new Promise((resolve) => setTimeout(resolve, 1500))
    } finally {
      await release()
    }
    await app.intake.drained()
    await new Promise((resolve) => setTimeout(resolve, 500))
    for (const answer of answers) {
      expect(answer.status, answer.body).toBe(503)
      // The deadline's own answer (whether its timer or the intake's wait gave up first), not
      // another failure's that reached the error handler with its default of 5.
      expect(answer.retryAfter).toBe('2')
      // An answer at all is what proves it came before the cut (a cut connection is status 0);
      // its time is bounded loosely, since a loaded machine delays every timer alike.
      expect(answer.ms).toBeLessThan(REQUEST_TIMEOUT_MS + 1500)
      expect(JSON.parse(answer.body).message).toMatch(/no se ha guardado ni cobrado nada/)
    }
    expect(await moneyOf(app, account.id)).toEqual(before)

    // The key was left free: the retry is stored, once.
    const retry = await post(base, '/single', account.apiKey, singleLetter(account), { 'idempotency-key': 'deadline-single' })
    expect(retry.status, retry.body).toBe(200)
    expect((await moneyOf(app, account.id)).letters).toBe(1)
  }, 30_000)

  it('stores a creation whose lock is released before its deadline, answered once', async ({ gateway: app, account, base }) => {
    const release = await holdAccountRow(app.db, account.id)
    const pending = post(base, '/single', account.apiKey, singleLetter(account))
    await new Promise((resolve) => setTimeout(resolve, 800))
    await release()
    const answer = await pending
    expect(answer.status, answer.body).toBe(200)
    expect((await moneyOf(app, account.id)).letters).toBe(1)
  }, 30_000)

  it('answers a creation still waiting when the gateway stops 503, and never stores it', async ({ gateway: app }) => {
    const stopping = await startGateway({ HTTP_REQUEST_TIMEOUT_MS: '20000' })
    await stopping.listen({ host: '127.0.0.1', port: 0 })
    const url = `http://127.0.0.1:${(stopping.server.address() as AddressInfo).port}`
    const account = await adminAccount(stopping, 100)
    const release = await holdAccountRow(app.db, account.id)
    try {
      const started = Date.now()
      const pending = fetch(`${url}/single`, {
        method: 'POST',
        headers: { 'x-api-key': account.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify(singleLetter(account)),
      })
      await new Promise((resolve) => setTimeout(resolve, 300))
      const closed = stopping.close()
      const answer = await pending
      expect(answer.status).toBe(503)
      expect(answer.headers.get('retry-after')).toMatch(/^[1-9]/)
      expect(Date.now() - started).toBeLessThan(8000)
      await release()
      await closed
    } finally {
      await release().catch(() => undefined)
    }
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect((await moneyOf(app, account.id)).letters).toBe(0)
  }, 30_000)

  it('writes nothing for a client that went away while its creation waited', async ({ gateway: app, account, base }) => {
    const release = await holdAccountRow(app.db, account.id)
    try {
      const gone = new AbortController()
      const pending = fetch(`${base}/single`, {
        method: 'POST',
        headers: { 'x-api-key': account.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify(singleLetter(account)),
        signal: gone.signal,
      }).catch(() => 'aborted')
      await new Promise((resolve) => setTimeout(resolve, 400))
      gone.abort()
      expect(await pending).toBe('aborted')
      await new Promise((resolve) => setTimeout(resolve, 300))
    } finally {
      await release()
    }
    await app.intake.drained()
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(await moneyOf(app, account.id)).toEqual({ balance: 100, letters: 0, ledgerEntries: 1 })
  }, 30_000)

  it('never answers 503 for a creation whose write is held past the deadline: a 503 leaves nothing written', async ({ gateway: app, account, base }) => {
    // The write statement inserts the charge: with the ledger locked, the order passes every
    // check and starts writing, then waits.
    let release!: () => void
    let locked!: () => void
    const taken = new Promise<void>((resolve) => (locked = resolve))
    const holder = app.db.transaction(async (tx) => {
      await tx.execute(sql`LOCK TABLE ledger_entries IN EXCLUSIVE MODE`)
      locked()
      await new Promise<void>((resolve) => (release = resolve))
    })
    await taken
    let answer: Awaited<ReturnType<typeof post>>
    try {
      const pending = post(base, '/single', account.apiKey, singleLetter(account), { 'idempotency-key': 'held-write' })
      await new Promise((resolve) => setTimeout(resolve, REQUEST_TIMEOUT_MS + 500))
      release()
      answer = await pending
    } finally {
      release()
      await holder
    }
    await app.intake.drained()
    await new Promise((resolve) => setTimeout(resolve, 500))
    const stored = (await moneyOf(app, account.id)).letters
    console.log(`### write held past the deadline: ${answer.status} after ${answer.ms} ms, letters stored ${stored}`)
    expect([200, 500, 503]).toContain(answer.status)
    if (answer.status === 503) expect(stored).toBe(0)
    if (answer.status === 200) expect(stored).toBe(1)
    // Whatever it was told, the same key finds out: one letter at most.
    const retry = await post(base, '/single', account.apiKey, singleLetter(account), { 'idempotency-key': 'held-write' })
    expect(retry.status, retry.body).toBe(200)
    expect((await moneyOf(app, account.id)).letters).toBe(1)
  }, 30_000)

  it('answers an admin credit grant behind a held account in time, and a 503 only when nothing was granted', async ({ gateway: app, account, base }) => {
    const release = await holdAccountRow(app.db, account.id)
    let answer: Awaited<ReturnType<typeof post>>
    try {
      const started = Date.now()
      const response = await fetch(`${base}/admin/accounts/${account.id}/credits`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ amount: 50, reason: 'regalo' }),
      }).catch(() => undefined)
      answer = { status: response?.status ?? 0, retryAfter: null, body: (await response?.text()) ?? '', ms: Date.now() - started }
    } finally {
      await release()
    }
    await new Promise((resolve) => setTimeout(resolve, 500))
    console.log(`### credit grant behind a held account: ${answer.status} after ${answer.ms} ms, balance then ${(await moneyOf(app, account.id)).balance}`)
    expect([200, 500, 503]).toContain(answer.status)
    // Its statement gives up within half the request's decide time: rolled back, nothing granted.
    if (answer.status === 503) expect((await moneyOf(app, account.id)).balance).toBe(100)
    if (answer.status === 200) expect((await moneyOf(app, account.id)).balance).toBe(150)
    if (answer.status === 500) expect(JSON.parse(answer.body).message).toBe(outcomeUnknownMessage(false))
  }, 30_000)
})

describe('a creation the intake refuses at its deadline', () => {
  // On a busy machine the intake's own wait (an account's row, its lock timeout cut to the time
  // left) can run out before the deadline's timer fires: the intake refuses the order, and the
  // client must be told what the timer would have told it. An order already past its time is
  // refused by the intake the same way, before any wait.
  it("is told the deadline timer's 503 and Retry-After", async ({ gateway: app, account }) => {
    const decided = Date.now() - 1
    const refusal = await submitOrder(app.intake, {
      accountId: account.id,
      livemode: true,
      letters: [],
      deadline: new OrderDeadline(decided, decided + 500),
    }).catch((error: unknown) => error)
    expect(refusal).toBeInstanceOf(Unavailable)
    expect(refusal).toMatchObject({ statusCode: 503, retryAfterSeconds: 2, message: expect.stringMatching(/no se ha guardado ni cobrado nada/) })
  })
})
