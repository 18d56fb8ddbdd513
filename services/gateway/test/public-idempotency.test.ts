import { describe, expect } from 'vitest'
import { sql } from 'drizzle-orm'
import type { App } from '../src/app.js'
import { idempotencyLockName } from '@letters/intake'
import { requestFingerprint } from '../src/features/letters/idempotency.js'
import { adminAccount, expectError, publicClient, singleLetter } from './helpers.js'
import { bulkCampaign, bulkRecipient } from './bulk-fixtures.js'
import { holdAccountRow } from '@letters/test/support/account-lock'
import { it as base } from '@letters/test/support/fixtures'
import { expectLedgerMatchesLetters, moneyState } from '@letters/test/support/ledger'

/** Whether a transaction holds the key's claim (its advisory lock) right now. */
async function keyIsHeld(app: App, accountId: string, key: string): Promise<boolean> {
  const [row] = await app.db.execute<{ locked: boolean }>(sql`SELECT EXISTS (SELECT 1 FROM pg_locks l
    WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
      AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended(${idempotencyLockName(accountId, true, key)}, 0)) AS locked`)
  return row?.locked ?? false
}

// Each test's own account (the fixture's) opens with 30 credits.
const it = base.extend({ accountCredits: 30 })

describe('Idempotency-Key on POST /single and POST /card', () => {
  it('replays the stored response for a retry and charges once', async ({ gateway: app, account, client }) => {
    const first = await client.post('/single', singleLetter(account), { 'idempotency-key': 'pedido-1001' })
    const retry = await client.post('/single', singleLetter(account), { 'idempotency-key': 'pedido-1001' })
    expect(first.statusCode).toBe(200)
    expect(first.headers['idempotent-replayed']).toBeUndefined()
    expect(retry.statusCode).toBe(200)
    expect(retry.headers['idempotent-replayed']).toBe('true')
    expect(retry.json()).toEqual(first.json())
    const state = await expectLedgerMatchesLetters(app.db, account.id)
    expect(state).toMatchObject({ balance: 27, letters: [{ id: first.json<{ cardId: string }>().cardId }] })
  })

  it('treats the same body with its keys in another order as the same request', async ({ account, client }) => {
    const body = singleLetter(account)
    const reversed = Object.fromEntries(Object.entries(body).reverse())
    await client.post('/single', body, { 'idempotency-key': 'k-order' })
    expect((await client.post('/single', reversed, { 'idempotency-key': 'k-order' })).headers['idempotent-replayed']).toBe('true')
  })

  it('answers 422 for the same key with another body, and charges nothing more', async ({ gateway: app, account, client }) => {
    await client.post('/single', singleLetter(account), { 'idempotency-key': 'k-422' })
    const response = await client.post('/single', singleLetter(account, { name: 'Marta' }), { 'idempotency-key': 'k-422' })
    expectError(response, 422, 'Unprocessable Entity', 'La Idempotency-Key ya se usó con una petición distinta; usa una clave nueva para cada petición')
    expect((await moneyState(app.db, account.id)).balance).toBe(27)
  })

  it('answers 409 to a copy while the first request is still in its transaction, and replays it once it committed', async ({
    gateway: app,
    account,
    client,
  }) => {
    const body = singleLetter(account)
    const held = await holdAccountRow(app.db, account.id)
    // inject starts the request only when something awaits it.
    const first = client.post('/single', body, { 'idempotency-key': 'k-409' }).then((response) => response)
    await expect.poll(() => keyIsHeld(app, account.id, 'k-409'), { timeout: 3000, interval: 10 }).toBe(true)
    expectError(await client.post('/single', body, { 'idempotency-key': 'k-409' }), 409, 'Conflict', /todavía se está procesando/)
    await held()
    expect((await first).statusCode).toBe(200)
    const late = await client.post('/single', body, { 'idempotency-key': 'k-409' })
    expect(late.headers['idempotent-replayed']).toBe('true')
    expect(late.json()).toEqual((await first).json())
    expect((await expectLedgerMatchesLetters(app.db, account.id)).charges).toHaveLength(1)
  })

  it('answers 409 to a key an older version claimed less than a minute ago (a rolling deploy), and charges nothing', async ({
    gateway: app,
    account,
    client,
  }) => {
    const body = singleLetter(account)
    await app.db.execute(sql`INSERT INTO idempotency_keys (account_id, key, request_hash, expires_at)
      VALUES (${account.id}::uuid, 'k-old-live', ${requestFingerprint('single', body)}, now() + interval '1 day')`)
    expectError(await client.post('/single', body, { 'idempotency-key': 'k-old-live' }), 409, 'Conflict', /todavía se está procesando/)
    expect((await moneyState(app.db, account.id)).balance).toBe(30)
  })

  it('gives way with 409, charging nothing, when an older version claims the key while this request is creating the letter', async ({
    gateway: app,
    account,
    client,
  }) => {
    const body = singleLetter(account)
    const held = await holdAccountRow(app.db, account.id)
    const first = client.post('/single', body, { 'idempotency-key': 'k-mixed' }).then((response) => response)
    await expect.poll(() => keyIsHeld(app, account.id, 'k-mixed'), { timeout: 3000, interval: 10 }).toBe(true)
    // An old replica claims with a committed row and knows nothing of the advisory lock.
    await app.db.execute(sql`INSERT INTO idempotency_keys (account_id, key, request_hash, expires_at)
      VALUES (${account.id}::uuid, 'k-mixed', ${requestFingerprint('single', body)}, now() + interval '1 day')`)
    await held()
    expectError(await first, 409, 'Conflict', /todavía se está procesando/)
    const state = await expectLedgerMatchesLetters(app.db, account.id)
    expect(state).toMatchObject({ balance: 30, letters: [], charges: [] })
  })

  it('replaces a claim without a response that an older version abandoned, instead of answering 409', async ({ gateway: app, account, client }) => {
    const body = singleLetter(account)
    await app.db.execute(sql`INSERT INTO idempotency_keys (account_id, key, request_hash, created_at, expires_at)
      VALUES (${account.id}::uuid, 'k-old-claim', ${requestFingerprint('single', body)}, now() - interval '2 minutes', now() + interval '1 day')`)
    const response = await client.post('/single', body, { 'idempotency-key': 'k-old-claim' })
    expect(response.statusCode).toBe(200)
    expect((await client.post('/single', body, { 'idempotency-key': 'k-old-claim' })).headers['idempotent-replayed']).toBe('true')
    expect((await moneyState(app.db, account.id)).balance).toBe(27)
  })

  it('replays a finished request to every one of 20 copies arriving at once, never 409', async ({ gateway: app, account, client }) => {
    const body = singleLetter(account)
    const first = await client.post('/single', body, { 'idempotency-key': 'k-replays' })
    expect(first.statusCode).toBe(200)
    const copies = await Promise.all(Array.from({ length: 20 }, () => client.post('/single', body, { 'idempotency-key': 'k-replays' })))
    expect(copies.map((response) => [response.statusCode, response.headers['idempotent-replayed']])).toEqual(Array(20).fill([200, 'true']))
    expect(new Set(copies.map((response) => response.json<{ cardId: string }>().cardId))).toEqual(new Set([first.json<{ cardId: string }>().cardId]))
    expect((await expectLedgerMatchesLetters(app.db, account.id)).charges).toHaveLength(1)
  })

  it('lets a key be used again after its request failed', async ({ gateway: app }) => {
    const account = await adminAccount(app, 2)
    const client = publicClient(app, account.apiKey)
    expectError(await client.post('/single', singleLetter(account), { 'idempotency-key': 'k-retry' }), 402, 'Payment Required')
    await app.inject({
      method: 'POST',
      url: `/admin/accounts/${account.id}/credits`,
      headers: { authorization: 'Bearer test-admin-token-0123456789' },
      payload: { amount: 10 },
    })
    const retry = await client.post('/single', singleLetter(account), { 'idempotency-key': 'k-retry' })
    expect(retry.statusCode).toBe(200)
    expect(retry.headers['idempotent-replayed']).toBeUndefined()
    expect((await moneyState(app.db, account.id)).balance).toBe(9)
  })

  it('keeps keys per account: two accounts may use the same key', async ({ gateway: app }) => {
    const first = await adminAccount(app, 10)
    const second = await adminAccount(app, 10)
    const a = await publicClient(app, first.apiKey).post('/single', singleLetter(first), { 'idempotency-key': 'shared-key' })
    const b = await publicClient(app, second.apiKey).post('/single', singleLetter(second), { 'idempotency-key': 'shared-key' })
    expect(b.statusCode).toBe(200)
    expect(b.json<{ cardId: string }>().cardId).not.toBe(a.json<{ cardId: string }>().cardId)
  })

  it('rejects a key longer than 255 characters', async ({ gateway: app }) => {
    const account = await adminAccount(app, 10)
    const response = await publicClient(app, account.apiKey).post('/single', singleLetter(account), { 'idempotency-key': 'k'.repeat(256) })
    expectError(response, 400, 'Bad Request', "La cabecera 'Idempotency-Key' debe tener entre 1 y 255 caracteres")
    expect((await moneyState(app.db, account.id)).balance).toBe(10)
  })

  it('makes 20 parallel copies of one request into one letter and one charge', async ({ gateway: app }) => {
    const account = await adminAccount(app, 100)
    const client = publicClient(app, account.apiKey)
    const body = singleLetter(account)
    const responses = await Promise.all(Array.from({ length: 20 }, () => client.post('/single', body, { 'idempotency-key': 'parallel-1' })))
    const created = responses.filter((response) => response.statusCode === 200)
    const inFlight = responses.filter((response) => response.statusCode === 409)
    expect(created.length + inFlight.length).toBe(20)
    expect(created.length).toBeGreaterThanOrEqual(1)
    expect(new Set(created.map((response) => response.json<{ cardId: string }>().cardId)).size).toBe(1)
    for (const response of inFlight) expectError(response, 409, 'Conflict')
    const state = await expectLedgerMatchesLetters(app.db, account.id)
    expect(state).toMatchObject({ balance: 97 })
    expect(state.letters).toHaveLength(1)
    expect(state.charges).toHaveLength(1)
    // Once the first has finished, every further copy is a replay of the same letter.
    const late = await client.post('/single', body, { 'idempotency-key': 'parallel-1' })
    expect(late.json()).toEqual(created[0]!.json())
  })
})

describe('one Idempotency-Key across POST /single and POST /cards/bulk', () => {
  it('answers 422 to a bulk request under a key a single letter used (and the other way round), while the same bulk body twice is replayed', async ({
    gateway: app,
  }) => {
    const account = await adminAccount(app, 100)
    const client = publicClient(app, account.apiKey)
    const campaignId = await bulkCampaign(app, account)
    const bulk = { campaignId, recipients: [bulkRecipient(), bulkRecipient({ name: 'Eva' })] }
    const reused = 'La Idempotency-Key ya se usó con una petición distinta; usa una clave nueva para cada petición'

    expect((await client.post('/single', singleLetter(account), { 'idempotency-key': 'una-clave' })).statusCode).toBe(200)
    expectError(await client.post('/cards/bulk', bulk, { 'idempotency-key': 'una-clave' }), 422, 'Unprocessable Entity', reused)
    expect((await moneyState(app.db, account.id)).letters).toHaveLength(1)

    const first = await client.post('/cards/bulk', bulk, { 'idempotency-key': 'otra-clave' })
    const again = await client.post('/cards/bulk', bulk, { 'idempotency-key': 'otra-clave' })
    expect(first.statusCode, first.body).toBe(200)
    expect(again.statusCode).toBe(200)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.json()).toEqual(first.json())
    expectError(await client.post('/single', singleLetter(account), { 'idempotency-key': 'otra-clave' }), 422, 'Unprocessable Entity', reused)

    const state = await expectLedgerMatchesLetters(app.db, account.id)
    expect(state).toMatchObject({ balance: 100 - 3 * 3 })
    expect(state.letters).toHaveLength(3)
  })
})
