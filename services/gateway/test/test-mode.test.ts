import { describe, expect } from 'vitest'
import { and, eq } from 'drizzle-orm'
import { idempotencyKeys, letters, webhookEndpoints } from '@letters/db'
import type { App } from '../src/app.js'
import { UNKNOWN_ID, adminAccount, adminCampaign, adminClient, expectError, publicClient, sendSingle, singleLetter, spanishRecipient } from './helpers.js'
import { it as base } from '@letters/test/support/fixtures'
import { removeEndpoints } from '@letters/test/support/webhook-receiver'
import { moneyState } from '@letters/test/support/ledger'

/** A public address given as an IP literal: no DNS is asked, and nothing is ever sent to it here. */
const PUBLIC_URL = 'https://93.184.216.34/hooks/letters'

/** An account with its live key (`apiKey`) and a test key of its own (`testKey`). */
async function accountWithTestKey(app: App, credits = 100) {
  const account = await adminAccount(app, credits)
  const issued = await adminClient(app).post(`/admin/accounts/${account.id}/api-keys`, { mode: 'test' })
  expect(issued.statusCode, issued.body).toBe(201)
  const testKey = issued.json<{ apiKey: string }>().apiKey
  return { ...account, testKey, test: { ...account, apiKey: testKey } }
}

type Card = { id: string; livemode: boolean; status: string; cost: number; events: Array<{ status: string; detail: string | null }> }

/**
 * An account with three letters in each mode (`liveIds`, `testIds`, interleaved in time, so a
 * page by creation order would mix them if the filter were missing) and the first of each
 * cancelled, for the status filter.
 */
async function lettersInBothModes(app: App) {
  const account = await accountWithTestKey(app, 100)
  const liveIds: string[] = []
  const testIds: string[] = []
  for (let n = 0; n < 3; n++) {
    liveIds.push(await sendSingle(app, account))
    testIds.push(await sendSingle(app, account.test))
  }
  for (const [key, id] of [
    [account.apiKey, liveIds[0]!],
    [account.testKey, testIds[0]!],
  ] as const)
    expect((await publicClient(app, key).delete(`/cards/${id}`)).statusCode).toBe(200)
  return { account, liveIds, testIds }
}

type Modes = Awaited<ReturnType<typeof lettersInBothModes>>

const it = base.extend('modes', ({ gateway }) => lettersInBothModes(gateway))

describe('letters made with a test key', () => {
  it('are checked and stored like live ones, with livemode false, and charge nothing: balance and ledger untouched', async ({ gateway: app }) => {
    const account = await accountWithTestKey(app, 10)
    const before = await moneyState(app.db, account.id)
    const single = await sendSingle(app, account.test)
    const campaignId = await adminCampaign(app, account)
    const campaign = await publicClient(app, account.testKey).post('/card', { campaignId, ...spanishRecipient, variables: { cupon: 'PRUEBA' } })
    expect(campaign.statusCode, campaign.body).toBe(200)
    const after = await moneyState(app.db, account.id)
    expect(after.balance).toBe(before.balance)
    expect(after.entries).toEqual(before.entries)
    expect(after.letters.map((letter) => [letter.type, letter.livemode, letter.cost, letter.status]).sort()).toEqual([
      ['campaign', false, 3, 'received'],
      ['single', false, 3, 'received'],
    ])
    // They go down the pipeline like any other: each has its address job.
    expect(after.jobs.map((job) => job.payload.letterId).sort()).toEqual([single, campaign.json<{ cardId: string }>().cardId].sort())
    const card = (await publicClient(app, account.testKey).get(`/cards/${single}`)).json<Card>()
    expect(card).toMatchObject({ id: single, livemode: false, status: 'received', cost: 3 })
  })

  it('answer 402 when the balance could not pay, storing nothing', async ({ gateway: app }) => {
    const account = await accountWithTestKey(app, 2)
    const client = publicClient(app, account.testKey)
    expectError(
      await client.post('/single', singleLetter(account), { 'idempotency-key': 'poor-test-1' }),
      402,
      'Payment Required',
      'Créditos insuficientes: la carta cuesta 3 créditos y el saldo de la cuenta es 2',
    )
    const state = await moneyState(app.db, account.id)
    expect(state.letters).toEqual([])
    expect(state.jobs).toEqual([])
    expect(state.balance).toBe(2)
    expect(await app.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.accountId, account.id))).toEqual([])
  })

  it('are each judged against the full balance, since none consumes it', async ({ gateway: app }) => {
    const account = await accountWithTestKey(app, 3)
    for (let n = 0; n < 3; n++) await sendSingle(app, account.test)
    // A live letter is still judged against the real balance, which the test letters left whole.
    await sendSingle(app, account)
    expectError(await publicClient(app, account.apiKey).post('/single', singleLetter(account)), 402, 'Payment Required', /el saldo de la cuenta es 0/)
    const state = await moneyState(app.db, account.id)
    expect(state.letters.filter((letter) => !letter.livemode)).toHaveLength(3)
    expect(state.charges.map((charge) => charge.letterId)).toEqual(state.letters.filter((letter) => letter.livemode).map((letter) => letter.id))
    expect(state.balance).toBe(0)
  })

  it('50 at once on a small balance: none charged, those the balance covers stored, the others 402', async ({ gateway: app }) => {
    // 4 credits: a Spanish letter (3) could be paid for, a Portuguese one (5) could not.
    const account = await accountWithTestKey(app, 4)
    const before = await moneyState(app.db, account.id)
    const client = publicClient(app, account.testKey)
    const portuguese = { zip: '1000-001', city: 'Lisboa', province: '', country: 'PT' }
    const responses = await Promise.all(Array.from({ length: 50 }, (_, n) => client.post('/single', singleLetter(account, n % 2 === 0 ? {} : portuguese))))
    const statuses = responses.map((response) => response.statusCode)
    expect(statuses.filter((_, n) => n % 2 === 0)).toEqual(Array(25).fill(200))
    expect(statuses.filter((_, n) => n % 2 === 1)).toEqual(Array(25).fill(402))
    for (const refused of responses.filter((_, n) => n % 2 === 1))
      expectError(refused, 402, 'Payment Required', 'Créditos insuficientes: la carta cuesta 5 créditos y el saldo de la cuenta es 4')
    const after = await moneyState(app.db, account.id)
    expect(after.balance).toBe(4)
    expect(after.entries).toEqual(before.entries)
    expect(after.letters).toHaveLength(25)
    expect(after.letters.every((letter) => !letter.livemode && letter.recipient.country === 'ES')).toBe(true)
    expect(after.letters.map((letter) => letter.id).sort()).toEqual(
      responses
        .filter((_, n) => n % 2 === 0)
        .map((response) => response.json<{ cardId: string }>().cardId)
        .sort(),
    )
  })

  it('is cancelled without a refund', async ({ gateway: app }) => {
    const account = await accountWithTestKey(app, 10)
    const id = await sendSingle(app, account.test)
    const before = await moneyState(app.db, account.id)
    const response = await publicClient(app, account.testKey).delete(`/cards/${id}`)
    expect(response.statusCode, response.body).toBe(200)
    expect(response.json<Card>()).toMatchObject({ id, livemode: false, status: 'cancelled' })
    expect(response.json<Card>().events.at(-1)).toEqual({
      status: 'cancelled',
      at: expect.any(String),
      detail: 'Cancelada por el cliente; carta de prueba, sin cargo que devolver',
    })
    const after = await moneyState(app.db, account.id)
    expect(after.balance).toBe(before.balance)
    expect(after.entries).toEqual(before.entries)
  })
})

describe('the same Idempotency-Key with a live key and a test key of one account', () => {
  it('makes two separate letters, each replayed only within its own mode', async ({ gateway: app }) => {
    const account = await accountWithTestKey(app, 10)
    const headers = { 'idempotency-key': 'pedido-42' }
    const live = await publicClient(app, account.apiKey).post('/single', singleLetter(account), headers)
    const test = await publicClient(app, account.testKey).post('/single', singleLetter(account), headers)
    expect([live.statusCode, test.statusCode]).toEqual([200, 200])
    const liveId = live.json<{ cardId: string }>().cardId
    const testId = test.json<{ cardId: string }>().cardId
    expect(testId).not.toBe(liveId)
    // Each mode's retry gets its own answer back, creating nothing more.
    expect((await publicClient(app, account.apiKey).post('/single', singleLetter(account), headers)).json<{ cardId: string }>().cardId).toBe(liveId)
    expect((await publicClient(app, account.testKey).post('/single', singleLetter(account), headers)).json<{ cardId: string }>().cardId).toBe(testId)
    const state = await moneyState(app.db, account.id)
    expect(state.letters.map((letter) => [letter.id, letter.livemode]).sort()).toEqual(
      [
        [liveId, true],
        [testId, false],
      ].sort(),
    )
    expect(state.charges.map((charge) => charge.letterId)).toEqual([liveId])
    expect(state.balance).toBe(7)
  })
})

describe('isolation between the modes', () => {
  const sides = ({ account, liveIds, testIds }: Modes) => [
    { name: 'a test key', key: account.testKey, own: testIds, others: liveIds, livemode: false },
    { name: 'a live key', key: account.apiKey, own: liveIds, others: testIds, livemode: true },
  ]

  it('GET /cards/{id}: the other mode’s letter is 404 both ways', async ({ gateway: app, modes }) => {
    for (const side of sides(modes)) {
      for (const id of side.others) expectError(await publicClient(app, side.key).get(`/cards/${id}`), 404, 'Not Found', 'La carta no existe')
      for (const id of side.own) expect((await publicClient(app, side.key).get(`/cards/${id}`)).json<Card>()).toMatchObject({ id, livemode: side.livemode })
    }
  })

  it('GET /cards: a list never mixes them, page by page and with a status filter', async ({ gateway: app, modes }) => {
    for (const side of sides(modes)) {
      const seen: Array<{ id: string; livemode: boolean }> = []
      let cursor: string | null = null
      do {
        const page: { data: Array<{ id: string; livemode: boolean }>; nextCursor: string | null } = (
          await publicClient(app, side.key).get(`/cards?limit=1${cursor ? `&cursor=${cursor}` : ''}`)
        ).json()
        expect(page.data.length).toBeLessThanOrEqual(1)
        seen.push(...page.data)
        cursor = page.nextCursor
      } while (cursor)
      expect(seen.map((card) => card.id)).toEqual([...side.own].reverse())
      expect(seen.every((card) => card.livemode === side.livemode)).toBe(true)

      const cancelled = (await publicClient(app, side.key).get('/cards?status=cancelled')).json<{ data: Array<{ id: string; livemode: boolean }> }>().data
      expect(cancelled.map((card) => [card.id, card.livemode])).toEqual([[side.own[0], side.livemode]])
      const received = (await publicClient(app, side.key).get('/cards?status=received')).json<{ data: Array<{ id: string }> }>().data
      expect(received.map((card) => card.id)).toEqual(side.own.slice(1).reverse())
    }
  })

  it('GET /cards/{id}/proof: the other mode’s letter is 404 both ways; its own is a PDF', async ({ gateway: app, modes }) => {
    for (const side of sides(modes)) {
      expectError(await publicClient(app, side.key).get(`/cards/${side.others[1]}/proof`), 404, 'Not Found', 'La carta no existe')
      const own = await publicClient(app, side.key).get(`/cards/${side.own[1]}/proof`)
      expect(own.statusCode, own.body.slice(0, 200)).toBe(200)
      expect(own.rawPayload.subarray(0, 5).toString()).toBe('%PDF-')
    }
  })

  it('DELETE /cards/{id}: the other mode’s letter is 404 both ways and stays as it was', async ({ gateway: app, modes }) => {
    for (const side of sides(modes)) {
      const target = side.others[2]!
      const before = await moneyState(app.db, modes.account.id)
      expectError(await publicClient(app, side.key).delete(`/cards/${target}`), 404, 'Not Found', 'La carta no existe')
      const [letter] = await app.db.select({ status: letters.status }).from(letters).where(eq(letters.id, target))
      expect(letter?.status).toBe('received')
      expect((await moneyState(app.db, modes.account.id)).entries).toEqual(before.entries)
    }
  })

  it('an unknown id is 404 for a test key as for a live one', async ({ gateway: app, modes }) => {
    for (const side of sides(modes)) expectError(await publicClient(app, side.key).get(`/cards/${UNKNOWN_ID}`), 404, 'Not Found', 'La carta no existe')
  })
})

describe('webhook endpoints in test mode', () => {
  const removeAll = (app: App, owner: { id: string }) => removeEndpoints(app.db, owner.id)
  const create = async (app: App, key: string, url = PUBLIC_URL) => {
    const response = await publicClient(app, key).post('/webhooks', { url })
    expect(response.statusCode, response.body).toBe(201)
    return response.json<{ id: string; livemode: boolean }>()
  }

  it('a test key registers a test endpoint, and each key lists only its own mode’s', async ({ gateway: app }) => {
    const account = await accountWithTestKey(app)
    const test = await create(app, account.testKey, `${PUBLIC_URL}/test`)
    const live = await create(app, account.apiKey, `${PUBLIC_URL}/live`)
    expect([test.livemode, live.livemode]).toEqual([false, true])
    const [stored] = await app.db.select({ livemode: webhookEndpoints.livemode }).from(webhookEndpoints).where(eq(webhookEndpoints.id, test.id))
    expect(stored?.livemode).toBe(false)
    const listed = async (key: string) =>
      (await publicClient(app, key).get('/webhooks')).json<{ data: Array<{ id: string; url: string; livemode: boolean }> }>().data
    expect((await listed(account.testKey)).map((endpoint) => [endpoint.id, endpoint.url, endpoint.livemode])).toEqual([[test.id, `${PUBLIC_URL}/test`, false]])
    expect((await listed(account.apiKey)).map((endpoint) => [endpoint.id, endpoint.url, endpoint.livemode])).toEqual([[live.id, `${PUBLIC_URL}/live`, true]])
    await removeAll(app, account)
  })

  it('the other mode’s endpoint is 404 both ways for DELETE, POST /test and GET /deliveries, and stays', async ({ gateway: app }) => {
    const account = await accountWithTestKey(app)
    const test = await create(app, account.testKey)
    const live = await create(app, account.apiKey)
    for (const [key, theirs] of [
      [account.apiKey, test.id],
      [account.testKey, live.id],
    ] as const) {
      const client = publicClient(app, key)
      expectError(await client.delete(`/webhooks/${theirs}`), 404, 'Not Found', 'El webhook no existe')
      expectError(await client.post(`/webhooks/${theirs}/test`, {}), 404, 'Not Found', 'El webhook no existe')
      expectError(await client.get(`/webhooks/${theirs}/deliveries`), 404, 'Not Found', 'El webhook no existe')
    }
    expect(await app.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.accountId, account.id))).toHaveLength(2)
    // Each key manages its own.
    const queued = await publicClient(app, account.testKey).post(`/webhooks/${test.id}/test`, {})
    expect(queued.statusCode, queued.body).toBe(202)
    expect((await publicClient(app, account.testKey).get(`/webhooks/${test.id}/deliveries`)).statusCode).toBe(200)
    expect((await publicClient(app, account.testKey).delete(`/webhooks/${test.id}`)).statusCode).toBe(204)
    expect((await publicClient(app, account.apiKey).delete(`/webhooks/${live.id}`)).statusCode).toBe(204)
  })

  it('counts the limit of 10 per account and mode: test endpoints do not use up live ones', async ({ gateway: app }) => {
    const account = await accountWithTestKey(app)
    for (let n = 0; n < 10; n++) await create(app, account.testKey, `${PUBLIC_URL}/test-${n}`)
    expectError(
      await publicClient(app, account.testKey).post('/webhooks', { url: PUBLIC_URL }),
      400,
      'Bad Request',
      'Una cuenta puede tener como mucho 10 webhooks de prueba (los reales y los de prueba se cuentan aparte): borra alguno antes de crear otro',
    )
    for (let n = 0; n < 10; n++) await create(app, account.apiKey, `${PUBLIC_URL}/live-${n}`)
    expectError(await publicClient(app, account.apiKey).post('/webhooks', { url: PUBLIC_URL }), 400, 'Bad Request', /como mucho 10 webhooks reales/)
    const counts = await Promise.all(
      [true, false].map(
        async (livemode) =>
          (
            await app.db
              .select()
              .from(webhookEndpoints)
              .where(and(eq(webhookEndpoints.accountId, account.id), eq(webhookEndpoints.livemode, livemode)))
          ).length,
      ),
    )
    expect(counts).toEqual([10, 10])
    await removeAll(app, account)
  })
})
