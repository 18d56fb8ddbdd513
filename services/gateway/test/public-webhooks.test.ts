import { randomUUID } from 'node:crypto'
import { describe, expect } from 'vitest'
import { and, eq, sql } from 'drizzle-orm'
import { letterEventTypes } from '@letters/contracts'
import { events, outbox, webhookAttempts, webhookEndpoints, webhookEvents } from '@letters/db'
import type { App } from '../src/app.js'
import { it as base } from '@letters/test/support/fixtures'
import type { Account } from '@letters/test/support/gateway'
import { removeEndpoints } from '@letters/test/support/webhook-receiver'
import { UNKNOWN_ID, adminAccount, adminClient, expectError, publicClient, singleLetter, startGateway } from './helpers.js'

/** A public address given as an IP literal: no DNS is asked, and nothing is ever sent to it here. */
const PUBLIC_URL = 'https://93.184.216.34/hooks/letters'

/** Another account, whose endpoints and deliveries the test's account must not reach. */
const it = base.extend('other', ({ gateway }) => adminAccount(gateway, 10))
it.override({ accountCredits: 10 })

const client = (app: App, owner: Account) => publicClient(app, owner.apiKey)
const create = async (app: App, owner: Account, body: object = { url: PUBLIC_URL }) => {
  const response = await client(app, owner).post('/webhooks', body)
  expect(response.statusCode, response.body).toBe(201)
  return response.json<{ id: string; url: string; events: string[]; secret: string; createdAt: string }>()
}
const removeAll = (app: App, owner: Account) => removeEndpoints(app.db, owner.id)

describe('POST /webhooks', () => {
  it('registers an endpoint for every event type when none are given, and shows its secret once', async ({ gateway: app, account }) => {
    const created = await create(app, account)
    expect(created).toEqual({
      id: expect.any(String),
      url: PUBLIC_URL,
      events: [...letterEventTypes],
      livemode: true,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      createdAt: expect.any(String),
    })
    expect(Buffer.from(created.secret.slice('whsec_'.length), 'base64')).toHaveLength(32)
    const listed = await client(app, account).get('/webhooks')
    expect(listed.body).not.toContain(created.secret)
    await removeAll(app, account)
  })

  it('keeps the events asked for', async ({ gateway: app, account }) => {
    const created = await create(app, account, { url: PUBLIC_URL, events: ['letter.printed', 'letter.mailed'] })
    expect(created.events).toEqual(['letter.printed', 'letter.mailed'])
    await removeAll(app, account)
  })

  it.for([
    ['a scheme other than http or https', { url: 'ftp://93.184.216.34/x' }, /http:\/\/ o https:\/\//],
    ['something that is not a URL', { url: 'no es una url' }, /no es una URL válida/],
    ['a URL longer than 2,000 characters', { url: `https://93.184.216.34/${'a'.repeat(2000)}` }, /como mucho 2000 caracteres/],
    ['an unknown event type', { url: PUBLIC_URL, events: ['letter.lost'] }, /Tipo de evento desconocido/],
    ['an empty event list', { url: PUBLIC_URL, events: [] }, /lista no vacía/],
    ['a field the route does not know', { url: PUBLIC_URL, secret: 'mine' }, /secret/],
    ['credentials in the URL', { url: 'https://user:pass@93.184.216.34/' }, /usuario ni contraseña/],
    [
      'a URL of 2,000 characters that percent-encoding makes longer',
      { url: `https://93.184.216.34/${'ü'.repeat(1970)}` },
      /codificada, tiene \d+ caracteres: el máximo es 2000/,
    ],
  ] as const)('refuses %s with 400', async ([_, body, message], { gateway: app, account }) => {
    expectError(await client(app, account).post('/webhooks', body), 400, 'Bad Request', message)
    expect(await app.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.accountId, account.id))).toEqual([])
  })

  it.for([
    'http://127.0.0.1:8080/',
    'http://localhost/',
    'http://[::1]/',
    'http://10.0.0.7/',
    'http://192.168.1.20/',
    'http://169.254.169.254/latest/meta-data',
    'http://[fd00:ec2::254]/',
    'http://[fe80::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::127.0.0.1]/',
    'http://2130706433/',
  ])('refuses %s, a loopback, private, link-local, unique-local or metadata address, with 400', async (url, { gateway: app, account }) => {
    expectError(await client(app, account).post('/webhooks', { url }), 400, 'Bad Request', /dirección privada, local o de metadatos/)
  })

  it('accepts a private address when WEBHOOK_ALLOW_PRIVATE_URLS=true', async ({ gateway: app, account }) => {
    const permissive = await startGateway({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' })
    try {
      const response = await publicClient(permissive, account.apiKey).post('/webhooks', { url: 'http://127.0.0.1:8080/hooks' })
      expect(response.statusCode, response.body).toBe(201)
    } finally {
      await permissive.close()
      await removeAll(app, account)
    }
  })

  it('accepts a plain http:// URL outside production', async ({ gateway: app, account }) => {
    const created = await create(app, account, { url: PUBLIC_URL.replace('https:', 'http:') })
    expect(created.url).toBe('http://93.184.216.34/hooks/letters')
    await removeAll(app, account)
  })

  it('refuses a plain http:// URL with 400 when NODE_ENV=production, and accepts it there with WEBHOOK_ALLOW_HTTP=true', async ({ gateway: app, account }) => {
    const production = await startGateway({ NODE_ENV: 'production' })
    const allowing = await startGateway({ NODE_ENV: 'production', WEBHOOK_ALLOW_HTTP: 'true' })
    try {
      const refused = await publicClient(production, account.apiKey).post('/webhooks', { url: 'http://93.184.216.34/hooks/letters' })
      expectError(refused, 400, 'Bad Request', /debe empezar por https:\/\/.*Usa una URL https/)
      expect(await app.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.accountId, account.id))).toEqual([])
      const secure = await publicClient(production, account.apiKey).post('/webhooks', { url: PUBLIC_URL })
      expect(secure.statusCode, secure.body).toBe(201)
      const allowed = await publicClient(allowing, account.apiKey).post('/webhooks', { url: 'http://93.184.216.34/hooks/letters' })
      expect(allowed.statusCode, allowed.body).toBe(201)
    } finally {
      await production.close()
      await allowing.close()
      await removeAll(app, account)
    }
  })

  it('refuses an eleventh endpoint for the account with 400, while another account may still create', async ({ gateway: app, account, other }) => {
    for (let n = 0; n < 10; n++) await create(app, account, { url: `${PUBLIC_URL}/${n}` })
    expectError(await client(app, account).post('/webhooks', { url: PUBLIC_URL }), 400, 'Bad Request', /como mucho 10 webhooks reales/)
    await create(app, other)
    await removeAll(app, account)
    await removeAll(app, other)
  })

  it('answers 401 without a key', async ({ gateway: app }) => {
    expectError(await app.inject({ method: 'POST', url: '/webhooks', payload: { url: PUBLIC_URL } }), 401, 'Unauthorized')
  })
})

describe('GET /webhooks', () => {
  it("lists only the account's endpoints, without secrets", async ({ gateway: app, account, other }) => {
    const mine = await create(app, account)
    await create(app, other)
    const response = await client(app, account).get('/webhooks')
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({
      data: [{ id: mine.id, url: PUBLIC_URL, events: [...letterEventTypes], livemode: true, createdAt: mine.createdAt, disabled: false }],
    })
    await removeAll(app, account)
    await removeAll(app, other)
  })

  it('answers 401 without a key', async ({ gateway: app }) => {
    expectError(await app.inject({ method: 'GET', url: '/webhooks' }), 401, 'Unauthorized')
  })
})

describe('DELETE /webhooks/{id}', () => {
  it('deletes the endpoint with 204', async ({ gateway: app, account }) => {
    const created = await create(app, account)
    const response = await client(app, account).delete(`/webhooks/${created.id}`)
    expect(response.statusCode).toBe(204)
    expect(response.body).toBe('')
    expect((await client(app, account).get('/webhooks')).json()).toEqual({ data: [] })
  })

  it("answers 404 for another account's endpoint, an unknown id and one that is not a UUID, deleting nothing", async ({ gateway: app, account, other }) => {
    const theirs = await create(app, other)
    for (const id of [theirs.id, UNKNOWN_ID, 'no-es-un-id'])
      expectError(await client(app, account).delete(`/webhooks/${id}`), 404, 'Not Found', 'El webhook no existe')
    expect((await client(app, other).get('/webhooks')).json<{ data: unknown[] }>().data).toHaveLength(1)
    await removeAll(app, other)
  })

  it('answers 400 to a body with fields', async ({ gateway: app, account }) => {
    const created = await create(app, account)
    expectError(
      await app.inject({ method: 'DELETE', url: `/webhooks/${created.id}`, headers: { 'x-api-key': account.apiKey }, payload: { force: true } }),
      400,
      'Bad Request',
    )
    await removeAll(app, account)
  })
})

describe('POST /webhooks/{id}/test', () => {
  it('answers 202 and writes a pending webhook.test event, for the webhook worker’s admission to queue', async ({ gateway: app, account }) => {
    const created = await create(app, account)
    const response = await client(app, account).post(`/webhooks/${created.id}/test`, {})
    expect(response.statusCode, response.body).toBe(202)
    const { eventId } = response.json<{ eventId: string; type: string }>()
    const [event] = await app.db.select().from(webhookEvents).where(eq(webhookEvents.id, eventId))
    expect(event).toMatchObject({ endpointId: created.id, type: 'webhook.test', state: 'pending' })
    expect(JSON.parse(event!.body)).toEqual({
      type: 'webhook.test',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      data: { webhookId: created.id },
    })
    expect(event).toMatchObject({ leaseId: null, leasedUntil: null, nextAttemptAt: null })
    // No job yet: the admission queues one when the endpoint has a slot free.
    expect(
      await app.db
        .select()
        .from(outbox)
        .where(sql`${outbox.payload} ->> 'eventId' = ${eventId}`),
    ).toEqual([])
    await removeAll(app, account)
  })

  it("answers 404 for another account's endpoint", async ({ gateway: app, account, other }) => {
    const theirs = await create(app, other)
    expectError(await client(app, account).post(`/webhooks/${theirs.id}/test`, {}), 404, 'Not Found')
    await removeAll(app, other)
  })

  it('answers 409 for a disabled endpoint', async ({ gateway: app, account }) => {
    const created = await create(app, account)
    await app.db.update(webhookEndpoints).set({ disabled: true }).where(eq(webhookEndpoints.id, created.id))
    expectError(await client(app, account).post(`/webhooks/${created.id}/test`, {}), 409, 'Conflict', /desactivado/)
    expect((await client(app, account).get('/webhooks')).json<{ data: Array<{ disabled: boolean }> }>().data[0]!.disabled).toBe(true)
    await removeAll(app, account)
  })
})

describe('GET /webhooks/{id}/deliveries', () => {
  it('lists the attempts newest first, a page at a time', async ({ gateway: app, account }) => {
    const created = await create(app, account)
    const [event] = await app.db.insert(webhookEvents).values({ endpointId: created.id, type: 'letter.printed', body: '{}' }).returning()
    const retryAt = new Date(Date.now() + 5000)
    await app.db.insert(webhookAttempts).values([
      { eventId: event!.id, endpointId: created.id, attempt: 1, statusCode: 500, durationMs: 12, nextAttemptAt: retryAt, outcome: 'retrying' },
      { eventId: event!.id, endpointId: created.id, attempt: 2, error: 'timeout', durationMs: 10_000, nextAttemptAt: retryAt, outcome: 'retrying' },
      { eventId: event!.id, endpointId: created.id, attempt: 3, statusCode: 204, durationMs: 8, outcome: 'delivered' },
    ])
    const first = await client(app, account).get(`/webhooks/${created.id}/deliveries?limit=2`)
    expect(first.statusCode, first.body).toBe(200)
    const page = first.json<{ data: Array<Record<string, unknown>>; nextCursor: string }>()
    expect(page.data).toEqual([
      {
        eventId: event!.id,
        type: 'letter.printed',
        attempt: 3,
        statusCode: 204,
        error: null,
        durationMs: 8,
        at: expect.any(String),
        nextAttemptAt: null,
        outcome: 'delivered',
      },
      {
        eventId: event!.id,
        type: 'letter.printed',
        attempt: 2,
        statusCode: null,
        error: 'timeout',
        durationMs: 10_000,
        at: expect.any(String),
        nextAttemptAt: retryAt.toISOString(),
        outcome: 'retrying',
      },
    ])
    const second = await client(app, account).get(`/webhooks/${created.id}/deliveries?limit=2&cursor=${page.nextCursor}`)
    expect(second.json()).toMatchObject({ data: [{ attempt: 1, statusCode: 500 }], nextCursor: null })
    await removeAll(app, account)
  })

  it('answers 400 to a bad cursor or limit, and 404 for another account’s endpoint', async ({ gateway: app, account, other }) => {
    const created = await create(app, account)
    expectError(await client(app, account).get(`/webhooks/${created.id}/deliveries?cursor=xyz`), 400, 'Bad Request', /cursor/)
    expectError(await client(app, account).get(`/webhooks/${created.id}/deliveries?limit=0`), 400, 'Bad Request', /limit/)
    expectError(await client(app, other).get(`/webhooks/${created.id}/deliveries`), 404, 'Not Found')
    expectError(await client(app, other).get(`/webhooks/${created.id}/deliveries?cursor=xyz`), 404, 'Not Found')
    await removeAll(app, account)
  })
})

describe('POST /webhooks/{id}/deliveries/{deliveryId}/retry', () => {
  /** A delivery of the endpoint as the worker leaves it after its attempts: `state`, 3 attempts, finished a minute ago. */
  async function finishedDelivery(app: App, endpointId: string, state: 'failed' | 'delivered' = 'failed') {
    const [delivery] = await app.db
      .insert(webhookEvents)
      .values({ endpointId, type: 'letter.printed', body: '{}', state, attempts: 3, finishedAt: new Date(Date.now() - 60_000) })
      .returning()
    return delivery!
  }
  const retry = (app: App, owner: Account, endpointId: string, deliveryId: string) =>
    client(app, owner).post(`/webhooks/${endpointId}/deliveries/${deliveryId}/retry`, {})

  it.for(['failed', 'delivered'] as const)(
    'answers 202 and makes a %s delivery pending again, due now, its attempts kept',
    async (state, { gateway: app, account }) => {
      const created = await create(app, account)
      const delivery = await finishedDelivery(app, created.id, state)
      const response = await retry(app, account, created.id, delivery.id)
      expect(response.statusCode, response.body).toBe(202)
      expect(response.json()).toEqual({ deliveryId: delivery.id, type: 'letter.printed', state: 'pending' })
      const [after] = await app.db.select().from(webhookEvents).where(eq(webhookEvents.id, delivery.id))
      expect(after).toMatchObject({ state: 'pending', attempts: 3, finishedAt: null, body: '{}' })
      expect(Math.abs(after!.nextAttemptAt!.getTime() - Date.now())).toBeLessThan(5000)
      await removeAll(app, account)
    },
  )

  it('answers 202 for a delivery still being retried, bringing its next attempt forward', async ({ gateway: app, account }) => {
    const created = await create(app, account)
    const [delivery] = await app.db
      .insert(webhookEvents)
      .values({ endpointId: created.id, type: 'letter.printed', body: '{}', attempts: 1, nextAttemptAt: new Date(Date.now() + 3_600_000) })
      .returning()
    expect((await retry(app, account, created.id, delivery!.id)).statusCode).toBe(202)
    const [after] = await app.db.select().from(webhookEvents).where(eq(webhookEvents.id, delivery!.id))
    expect(after!.nextAttemptAt!.getTime()).toBeLessThan(Date.now() + 5000)
    await removeAll(app, account)
  })

  /** A delivery as the admission leaves it for its job: pending, its first attempt failed, leased to the job until `leasedUntil`. */
  async function leasedDelivery(app: App, endpointId: string, leasedUntil: Date) {
    const [delivery] = await app.db
      .insert(webhookEvents)
      .values({ endpointId, type: 'letter.printed', body: '{}', attempts: 1, leaseId: randomUUID(), leasedUntil })
      .returning()
    return delivery!
  }
  const deliveryRow = async (app: App, id: string) => (await app.db.select().from(webhookEvents).where(eq(webhookEvents.id, id)))[0]!
  const beingSent = 'La entrega se está enviando ahora; espera a su resultado (GET /webhooks/{id}/deliveries) y vuelve a pedirlo'

  it('answers 409 for a delivery queued or being sent (its lease holds), leaving it to the attempt under way', async ({ gateway: app, account }) => {
    const created = await create(app, account)
    const delivery = await leasedDelivery(app, created.id, new Date(Date.now() + 60_000))
    expectError(await retry(app, account, created.id, delivery.id), 409, 'Conflict', beingSent)
    expect(await deliveryRow(app, delivery.id)).toEqual(delivery)
    await removeAll(app, account)
  })

  it('answers 202 for a delivery whose lease has passed, taking the lease back so that the job that held it records nothing over the retry', async ({
    gateway: app,
    account,
  }) => {
    const created = await create(app, account)
    const delivery = await leasedDelivery(app, created.id, new Date(Date.now() - 1000))
    expect((await retry(app, account, created.id, delivery.id)).statusCode).toBe(202)
    const after = await deliveryRow(app, delivery.id)
    expect(after).toMatchObject({ state: 'pending', attempts: 1, leaseId: null, leasedUntil: null })
    expect(Math.abs(after.nextAttemptAt!.getTime() - Date.now())).toBeLessThan(5000)
    await removeAll(app, account)
  })

  it('waits for a worker taking a passed lease at that moment, then answers 409', async ({ gateway: app, account }) => {
    const created = await create(app, account)
    const delivery = await leasedDelivery(app, created.id, new Date(Date.now() - 1000))
    // The job whose lease passed while it waited starts its attempt now: its transaction holds the row.
    let release!: () => void
    let taken!: () => void
    const taking = new Promise<void>((resolve) => (taken = resolve))
    const worker = app.db.transaction(async (tx) => {
      await tx
        .update(webhookEvents)
        .set({ leasedUntil: sql`now() + interval '30 seconds'` })
        .where(and(eq(webhookEvents.id, delivery.id), eq(webhookEvents.leaseId, delivery.leaseId!)))
      taken()
      await new Promise<void>((resolve) => (release = resolve))
    })
    await taking
    const retrying = retry(app, account, created.id, delivery.id)
    await expect
      .poll(
        async () =>
          (
            await app.db.execute<{ n: number }>(
              sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`,
            )
          )[0]!.n,
        { timeout: 5000, interval: 20 },
      )
      .toBeGreaterThan(0)
    release()
    await worker
    expectError(await retrying, 409, 'Conflict', beingSent)
    expect(await deliveryRow(app, delivery.id)).toMatchObject({ state: 'pending', leaseId: delivery.leaseId, nextAttemptAt: null })
    await removeAll(app, account)
  })

  it("answers 404 for another account's webhook or delivery, another endpoint's delivery, the other mode's, and unknown or malformed ids, changing nothing", async ({
    gateway: app,
    account,
    other,
  }) => {
    const mine = await create(app, account)
    const mySecond = await create(app, account, { url: `${PUBLIC_URL}/2` })
    const theirs = await create(app, other)
    const myDelivery = await finishedDelivery(app, mine.id)
    const theirDelivery = await finishedDelivery(app, theirs.id)
    const testKey = await adminClient(app).post(`/admin/accounts/${account.id}/api-keys`, { mode: 'test' })
    const testOwner = { ...account, apiKey: testKey.json<{ apiKey: string }>().apiKey }
    for (const [owner, endpointId, deliveryId, message] of [
      [account, theirs.id, theirDelivery.id, 'El webhook no existe'],
      [account, mine.id, theirDelivery.id, 'La entrega no existe en este webhook'],
      [account, mySecond.id, myDelivery.id, 'La entrega no existe en este webhook'],
      [account, mine.id, UNKNOWN_ID, 'La entrega no existe en este webhook'],
      [account, mine.id, 'no-es-un-id', 'La entrega no existe en este webhook'],
      [account, 'no-es-un-id', myDelivery.id, 'El webhook no existe'],
      [testOwner, mine.id, myDelivery.id, 'El webhook no existe'],
      [other, mine.id, myDelivery.id, 'El webhook no existe'],
    ] as const) {
      expectError(await retry(app, owner, endpointId, deliveryId), 404, 'Not Found', message)
    }
    const unchanged = await app.db.select().from(webhookEvents).where(eq(webhookEvents.endpointId, mine.id))
    expect(unchanged).toMatchObject([{ id: myDelivery.id, state: 'failed', nextAttemptAt: null }])
    await removeAll(app, account)
    await removeAll(app, other)
  })

  it('answers 409 for a disabled endpoint, leaving its delivery as it was', async ({ gateway: app, account }) => {
    const created = await create(app, account)
    const delivery = await finishedDelivery(app, created.id)
    await app.db.update(webhookEndpoints).set({ disabled: true }).where(eq(webhookEndpoints.id, created.id))
    expectError(await retry(app, account, created.id, delivery.id), 409, 'Conflict', /desactivado/)
    expect((await app.db.select().from(webhookEvents).where(eq(webhookEvents.id, delivery.id)))[0]).toMatchObject({ state: 'failed' })
    await removeAll(app, account)
  })

  it('answers 400 to a body with fields and 415 to a body that is not JSON', async ({ gateway: app, account }) => {
    const created = await create(app, account)
    const delivery = await finishedDelivery(app, created.id)
    const url = `/webhooks/${created.id}/deliveries/${delivery.id}/retry`
    expectError(await client(app, account).post(url, { now: true }), 400, 'Bad Request')
    expectError(
      await app.inject({ method: 'POST', url, headers: { 'x-api-key': account.apiKey, 'content-type': 'text/plain' }, payload: 'otra vez' }),
      415,
      'Unsupported Media Type',
    )
    expect((await app.db.select().from(webhookEvents).where(eq(webhookEvents.id, delivery.id)))[0]).toMatchObject({ state: 'failed' })
    await removeAll(app, account)
  })

  it('answers 401 without a key', async ({ gateway: app }) => {
    expectError(await app.inject({ method: 'POST', url: `/webhooks/${UNKNOWN_ID}/deliveries/${UNKNOWN_ID}/retry`, payload: {} }), 401, 'Unauthorized')
  })
})

describe('letter.scheduled', () => {
  it("is written once with the letter's sendAt, and copied for each subscribed endpoint of the letter's own mode", async ({ gateway: app }) => {
    const owner = await adminAccount(app, 10)
    const issued = await adminClient(app).post(`/admin/accounts/${owner.id}/api-keys`, { mode: 'test' })
    expect(issued.statusCode, issued.body).toBe(201)
    const test = { ...owner, apiKey: issued.json<{ apiKey: string }>().apiKey }
    const liveEndpoint = await create(app, owner)
    const testEndpoint = await create(app, test)
    // Subscribed to letter.received only: a scheduled letter does not concern it.
    const receivedOnly = await create(app, owner, { url: PUBLIC_URL, events: ['letter.received'] })
    const sendAt = new Date(Date.now() + 86_400_000).toISOString()

    for (const [key, endpoint, livemode] of [
      [owner, liveEndpoint, true],
      [test, testEndpoint, false],
    ] as const) {
      const created = await client(app, key).post('/single', singleLetter(owner, { sendAt }))
      expect(created.statusCode, created.body).toBe(200)
      const cardId = created.json<{ cardId: string }>().cardId
      const { events: _events, ...card } = (await client(app, key).get(`/cards/${cardId}`)).json<Record<string, unknown>>()
      expect(card).toMatchObject({ status: 'scheduled', livemode, sendAt })

      const written = await app.db
        .select()
        .from(webhookEvents)
        .where(sql`${webhookEvents.body}::jsonb -> 'data' ->> 'id' = ${cardId}`)
      expect(written.map((event) => [event.endpointId, event.type, event.state])).toEqual([[endpoint.id, 'letter.scheduled', 'pending']])
      const stored = await app.db.select().from(events).where(eq(events.letterId, cardId))
      expect(stored).toHaveLength(1)
      expect(written[0]!.body).toBe(stored[0]!.body)
      expect(JSON.parse(written[0]!.body)).toEqual({
        id: stored[0]!.id,
        type: 'letter.scheduled',
        sequence: 1,
        occurredAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        timestamp: expect.any(String),
        data: card,
      })
    }
    expect(await app.db.select().from(webhookEvents).where(eq(webhookEvents.endpointId, receivedOnly.id))).toEqual([])
    await removeAll(app, owner)
  })
})

describe('an endpoint deleted while a letter changes status', () => {
  it('is waited for and left out: the change goes through with its events, none for the deleted endpoint', async ({ gateway: app, account }) => {
    const created = await create(app, account)
    const letter = await client(app, account).post('/single', singleLetter(account))
    expect(letter.statusCode, letter.body).toBe(200)
    const cardId = letter.json<{ cardId: string }>().cardId
    // A deletion under way, as deleteWebhook makes it: its transaction holds the endpoint's row.
    let release!: () => void
    let deleting!: () => void
    const deleted = new Promise<void>((resolve) => (deleting = resolve))
    const holder = app.db.transaction(async (tx) => {
      await tx.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, created.id)).for('update')
      await tx
        .update(webhookEndpoints)
        .set({ deletedAt: sql`now()`, disabled: true })
        .where(eq(webhookEndpoints.id, created.id))
      deleting()
      await new Promise<void>((resolve) => (release = resolve))
    })
    await deleted
    const cancelling = client(app, account)
      .delete(`/cards/${cardId}`)
      .then((response) => response)
    await expect
      .poll(
        async () =>
          (
            await app.db.execute<{ n: number }>(
              sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`,
            )
          )[0]!.n,
        { timeout: 5000, interval: 20 },
      )
      .toBeGreaterThan(0)
    release()
    await holder
    const cancelled = await cancelling
    expect(cancelled.statusCode, cancelled.body).toBe(200)
    expect(cancelled.json<{ status: string }>().status).toBe('cancelled')
    // Only what was written before the deletion (the history retention removes it later): no letter.cancelled.
    const written = await app.db.select({ type: webhookEvents.type }).from(webhookEvents).where(eq(webhookEvents.endpointId, created.id))
    expect(written.map((event) => event.type)).toEqual(['letter.received'])
  })
})
