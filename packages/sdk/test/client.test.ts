import { describe, expect } from 'vitest'
import { count, eq } from 'drizzle-orm'
import { letters } from '@letters/db'
import type { App } from '@letters/gateway/server'
import { adminAccount } from '@letters/test/support/accounts'
import { it as base } from '@letters/test/support/fixtures'
import { adminCampaign, startGateway, type Account } from '@letters/test/support/gateway'
import { singleLetter, spanishRecipient, UNKNOWN_ID } from '@letters/test/support/factories'
import { createClient, LettersApiError, LettersConnectionError } from '../src/index.js'
import { faultProxy } from './fault-proxy.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** The gateway listening on 127.0.0.1, as a client of the SDK reaches it. */
const it = base.extend('baseUrl', { scope: 'file' }, ({ gateway }) => gateway.listen({ host: '127.0.0.1', port: 0 }))

const lettersOf = async (app: App, owner: Account) => (await app.db.select({ n: count() }).from(letters).where(eq(letters.accountId, owner.id)))[0]!.n

describe('createClient', () => {
  it('sends a card and reads it back, typed', async ({ baseUrl, account }) => {
    const client = createClient({ apiKey: account.apiKey, baseUrl })
    const { data: created } = await client.POST('/single', { body: singleLetter(account) })
    expect(created!.cardId).toMatch(UUID)
    const { data: card } = await client.GET('/cards/{cardId}', { params: { path: { cardId: created!.cardId } } })
    expect(card).toMatchObject({ id: created!.cardId, status: expect.any(String), recipient: { name: 'Lucía' } })
    const { data: fonts } = await client.GET('/fonts')
    expect(fonts!.data.length).toBeGreaterThan(0)
  })

  it('sends a fresh UUID Idempotency-Key on every creation, or the one given', async ({ baseUrl, account }) => {
    const proxy = await faultProxy(baseUrl, () => 'forward')
    try {
      const client = createClient({ apiKey: account.apiKey, baseUrl: proxy.url })
      await client.POST('/single', { body: singleLetter(account) })
      await client.POST('/single', { body: singleLetter(account) })
      await client.POST('/single', { body: singleLetter(account), params: { header: { 'idempotency-key': 'pedido-42' } } })
      await client.GET('/campaigns')
      const [first, second, given, read] = proxy.seen.map((request) => request.idempotencyKey)
      expect(first).toMatch(UUID)
      expect(second).toMatch(UUID)
      expect(second).not.toBe(first)
      expect(given).toBe('pedido-42')
      expect(read).toBeUndefined()
    } finally {
      await proxy.close()
    }
  })

  it('takes an idempotencyKey per call and gives back the key it used, its own or the one it made', async ({ gateway: app, baseUrl }) => {
    const owner = await adminAccount(app, 100)
    const client = createClient({ apiKey: owner.apiKey, baseUrl })
    const mine = await client.POST('/single', { body: singleLetter(owner), idempotencyKey: 'pedido-7' })
    expect(mine.idempotencyKey).toBe('pedido-7')
    const made = await client.POST('/single', { body: singleLetter(owner) })
    expect(made.idempotencyKey).toMatch(UUID)
    // The key made for the first call, given again: the same letter, not a second one.
    const again = await client.POST('/single', { body: singleLetter(owner), idempotencyKey: made.idempotencyKey })
    expect(again.data!.cardId).toBe(made.data!.cardId)
    expect(again.response.headers.get('idempotent-replayed')).toBe('true')
    expect(await lettersOf(app, owner)).toBe(2)
  })

  it('gives the key it used on every error: an API error, and no answer at all after its retries', async ({ gateway: app, baseUrl }) => {
    const owner = await adminAccount(app, 1)
    const client = createClient({ apiKey: owner.apiKey, baseUrl, retries: 1, retryDelayMs: 10 })
    const unpaid = await client.POST('/single', { body: singleLetter(owner) }).catch((error: unknown) => error)
    expect(unpaid).toBeInstanceOf(LettersApiError)
    expect((unpaid as LettersApiError).status).toBe(402)
    expect((unpaid as LettersApiError).idempotencyKey).toMatch(UUID)
    const proxy = await faultProxy(baseUrl, () => 'drop')
    try {
      const cut = createClient({ apiKey: owner.apiKey, baseUrl: proxy.url, retries: 2, retryDelayMs: 10 })
      const lost = await cut.POST('/single', { body: singleLetter(owner), idempotencyKey: 'pedido-perdido' }).catch((error: unknown) => error)
      expect(lost).toBeInstanceOf(LettersConnectionError)
      expect((lost as LettersConnectionError).idempotencyKey).toBe('pedido-perdido')
      expect(proxy.seen.map((request) => request.idempotencyKey)).toEqual(['pedido-perdido', 'pedido-perdido', 'pedido-perdido'])
    } finally {
      await proxy.close()
    }
  })

  it('retries a creation whose answer is late with the same key: stored and charged once, answered with it', async ({ gateway: app, baseUrl }) => {
    const owner = await adminAccount(app, 100)
    // The client gives up at 4 s, long before the late answer (8 s) and long after a busy
    // machine's gateway answers (a 1 s limit timed out the retries too, on a loaded CI machine).
    const proxy = await faultProxy(baseUrl, (n) => (n === 1 ? 'late' : 'forward'), 8000)
    try {
      const client = createClient({ apiKey: owner.apiKey, baseUrl: proxy.url, timeoutMs: 4000, retryDelayMs: 10 })
      const { data, idempotencyKey, response } = await client.POST('/single', { body: singleLetter(owner) })
      expect(proxy.seen.map((request) => request.idempotencyKey)).toEqual([idempotencyKey, idempotencyKey])
      expect(response.headers.get('idempotent-replayed')).toBe('true')
      expect(data!.cardId).toMatch(UUID)
      expect(await lettersOf(app, owner)).toBe(1)
    } finally {
      await proxy.close()
    }
  })

  it('retries a creation after a 503 and after a dropped connection with the same key, and charges once', async ({ gateway: app, baseUrl }) => {
    const owner = await adminAccount(app, 100)
    const proxy = await faultProxy(baseUrl, (n) => (n === 1 ? '503' : n === 2 ? 'drop' : 'forward'))
    try {
      const client = createClient({ apiKey: owner.apiKey, baseUrl: proxy.url, retryDelayMs: 10 })
      const { data } = await client.POST('/single', { body: singleLetter(owner) })
      expect(data!.cardId).toMatch(UUID)
      expect(proxy.seen).toHaveLength(3)
      expect(new Set(proxy.seen.map((request) => request.idempotencyKey)).size).toBe(1)
      expect(await lettersOf(app, owner)).toBe(1)
    } finally {
      await proxy.close()
    }
  })

  it('retries a bulk creation after a 503 and after a dropped connection with the same key, and charges once', async ({ gateway: app, baseUrl }) => {
    const owner = await adminAccount(app, 100)
    const campaignId = await adminCampaign(app, owner)
    const proxy = await faultProxy(baseUrl, (n) => (n === 1 ? '503' : n === 2 ? 'drop' : 'forward'))
    try {
      const client = createClient({ apiKey: owner.apiKey, baseUrl: proxy.url, retryDelayMs: 10 })
      const recipient = { ...spanishRecipient, variables: { cupon: 'SDK1' } }
      const { data } = await client.POST('/cards/bulk', { body: { campaignId, recipients: [recipient, recipient] } })
      expect(data).toEqual({ created: 2, cost: 6, cardIds: [expect.stringMatching(UUID), expect.stringMatching(UUID)], errors: [] })
      expect(proxy.seen).toHaveLength(3)
      expect(new Set(proxy.seen.map((request) => request.idempotencyKey)).size).toBe(1)
      expect(await lettersOf(app, owner)).toBe(2)
    } finally {
      await proxy.close()
    }
  })

  it('retries a creation answered 409 because its key is still in flight, but not a 409 of a cancellation', async ({ gateway: app, baseUrl }) => {
    const owner = await adminAccount(app, 100)
    const proxy = await faultProxy(baseUrl, (n) => (n === 1 ? '409-in-flight' : 'forward'))
    try {
      const client = createClient({ apiKey: owner.apiKey, baseUrl: proxy.url, retryDelayMs: 10 })
      const { data } = await client.POST('/single', { body: singleLetter(owner) })
      expect(proxy.seen).toHaveLength(2)
      expect(proxy.seen[1]!.idempotencyKey).toBe(proxy.seen[0]!.idempotencyKey)
      const cardId = data!.cardId
      await client.DELETE('/cards/{cardId}', { params: { path: { cardId } } })
      const again = await client.DELETE('/cards/{cardId}', { params: { path: { cardId } } }).catch((error: unknown) => error)
      expect(again).toMatchObject({ status: 409, error: 'Conflict' })
      expect(proxy.seen).toHaveLength(4)
    } finally {
      await proxy.close()
    }
  })

  it('repeats the first answer to a creation sent again with the same key, and charges once', async ({ gateway: app, baseUrl }) => {
    const owner = await adminAccount(app, 100)
    const client = createClient({ apiKey: owner.apiKey, baseUrl })
    const params = { header: { 'idempotency-key': 'pedido-7' } }
    const first = await client.POST('/single', { body: singleLetter(owner), params })
    const again = await client.POST('/single', { body: singleLetter(owner), params })
    expect(again.response.headers.get('idempotent-replayed')).toBe('true')
    expect(again.data!.cardId).toBe(first.data!.cardId)
    expect(await lettersOf(app, owner)).toBe(1)
  })

  it('does not send a non-idempotent POST again after a 503 or a dropped connection: it may have been done', async ({ baseUrl, account }) => {
    const proxy = await faultProxy(baseUrl, (n) => (n === 1 ? 'drop' : n === 2 ? '503' : 'forward'))
    try {
      const client = createClient({ apiKey: account.apiKey, baseUrl: proxy.url, retryDelayMs: 10 })
      await expect(client.POST('/webhooks', { body: { url: 'https://93.184.216.34/hooks' } })).rejects.toThrow()
      const refused = await client.POST('/webhooks', { body: { url: 'https://93.184.216.34/hooks' } }).catch((error: unknown) => error)
      expect(refused).toBeInstanceOf(LettersApiError)
      expect((refused as LettersApiError).status).toBe(503)
      expect(proxy.seen).toHaveLength(2)
    } finally {
      await proxy.close()
    }
  })

  it('gives a 429 back at once when Retry-After asks for a longer wait than the client makes', async () => {
    const limited = await startGateway({ RATE_LIMIT_MAX: '1', RATE_LIMIT_WINDOW_MS: '60000' })
    try {
      const limitedUrl = await limited.listen({ host: '127.0.0.1', port: 0 })
      const owner = await adminAccount(limited, 10)
      const statuses: number[] = []
      const client = createClient({
        apiKey: owner.apiKey,
        baseUrl: limitedUrl,
        maxRetryDelayMs: 1000,
        fetch: async (request) => {
          const response = await fetch(request)
          statuses.push(response.status)
          return response
        },
      })
      await client.GET('/fonts')
      const refused = await client.GET('/fonts').catch((error: unknown) => error)
      expect(refused).toBeInstanceOf(LettersApiError)
      expect((refused as LettersApiError).status).toBe(429)
      // Sent once, not retried before the minute the server asked for.
      expect(statuses).toEqual([200, 429])
    } finally {
      await limited.close()
    }
  })

  it('waits out a 429 as Retry-After says, then succeeds', async () => {
    const limited = await startGateway({ RATE_LIMIT_MAX: '1', RATE_LIMIT_WINDOW_MS: '1000' })
    try {
      const limitedUrl = await limited.listen({ host: '127.0.0.1', port: 0 })
      const owner = await adminAccount(limited, 10)
      const proxy = await faultProxy(limitedUrl, () => 'forward')
      const statuses: number[] = []
      const client = createClient({
        apiKey: owner.apiKey,
        baseUrl: proxy.url,
        fetch: async (request) => {
          const response = await fetch(request)
          statuses.push(response.status)
          if (response.status === 429) expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0)
          return response
        },
      })
      await client.GET('/fonts')
      const { data } = await client.GET('/fonts')
      expect(data!.data.length).toBeGreaterThan(0)
      expect(statuses).toEqual([200, 429, 200])
      await proxy.close()
    } finally {
      await limited.close()
    }
  })

  it('never retries another 4xx, and throws it typed with the request id', async ({ baseUrl, account }) => {
    const proxy = await faultProxy(baseUrl, () => 'forward')
    try {
      const client = createClient({ apiKey: account.apiKey, baseUrl: proxy.url, retryDelayMs: 10 })
      const failure = await client.GET('/cards/{cardId}', { params: { path: { cardId: UNKNOWN_ID } } }).catch((error: unknown) => error)
      expect(failure).toBeInstanceOf(LettersApiError)
      expect(failure).toMatchObject({ status: 404, error: 'Not Found', requestId: expect.stringMatching(UUID) })
      expect((failure as LettersApiError).message).toMatch(/\S/)
      const invalid = await client.POST('/single', { body: singleLetter(account, { country: 'España' }) }).catch((error: unknown) => error)
      expect(invalid).toMatchObject({ status: 400, error: 'Bad Request' })
      expect(proxy.seen).toHaveLength(2)
    } finally {
      await proxy.close()
    }
  })

  it('throws a 401 for a wrong key without retrying', async ({ baseUrl }) => {
    const client = createClient({ apiKey: 'clave-falsa', baseUrl })
    await expect(client.GET('/campaigns')).rejects.toMatchObject({ status: 401, error: 'Unauthorized' })
  })
})
