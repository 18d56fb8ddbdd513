import { once } from 'node:events'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LettersApiError, createClient, newIdempotencyKey } from '../src/index.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const CARD_ID = '6f1c2b7e-3d4a-4c5b-9e8f-1a2b3c4d5e6f'

interface Seen {
  method: string
  url: string
  headers: IncomingHttpHeaders
}

/**
 * An HTTP server that writes down each request it gets and answers as the API would, in shape
 * only: what is under test is what the client sends, on a real connection.
 */
const seen: Seen[] = []
const server = createServer((request, response) => {
  seen.push({ method: request.method!, url: request.url!, headers: request.headers })
  request.resume()
  request.on('end', () => {
    const json = (status: number, body: unknown) => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
    if (request.url === '/campaigns') return json(401, { error: 'Unauthorized', message: 'Inicia sesión de nuevo.' })
    if (request.method === 'POST') return json(200, { success: true, cardId: CARD_ID })
    if (request.method === 'DELETE') return json(200, { success: true })
    json(200, { data: [] })
  })
})
let baseUrl = ''

beforeAll(async () => {
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

/** The requests a call sent, from now on. */
async function sentBy(call: () => Promise<unknown>): Promise<Seen[]> {
  const from = seen.length
  await call()
  return seen.slice(from)
}

const body = {
  cardDesignId: CARD_ID,
  envelopeDesignId: CARD_ID,
  senderId: CARD_ID,
  message: 'Querida Lucía, gracias por tu compra.',
  name: 'Lucía',
  surname: 'García',
  address: 'Calle Mayor 1',
  zip: '28013',
  city: 'Madrid',
  province: 'Madrid',
  country: 'ES' as const,
}

describe('createClient in session mode (no apiKey, a csrfToken)', () => {
  it('sends no X-API-KEY, on reads and on changes alike', async () => {
    const client = createClient({ baseUrl, csrfToken: () => 'token-1' })
    const requests = await sentBy(async () => {
      await client.GET('/company-data')
      await client.POST('/single', { body })
    })
    expect(requests.map((request) => request.method)).toEqual(['GET', 'POST'])
    for (const request of requests) expect(request.headers).not.toHaveProperty('x-api-key')
  })

  it('sends X-CSRF-Token on every request but GET and HEAD, read when each request is made', async () => {
    let token = 'token-1'
    const client = createClient({ baseUrl, csrfToken: () => token })
    const requests = await sentBy(async () => {
      await client.GET('/company-data')
      await client.POST('/single', { body })
      token = 'token-2'
      await client.DELETE('/cards/{cardId}', { params: { path: { cardId: CARD_ID } } })
      await client.GET('/cards/{cardId}', { params: { path: { cardId: CARD_ID } } })
    })
    expect(requests.map((request) => [request.method, request.headers['x-csrf-token']])).toEqual([
      ['GET', undefined],
      ['POST', 'token-1'],
      ['DELETE', 'token-2'],
      ['GET', undefined],
    ])
  })

  it('sends no X-CSRF-Token while the token is unknown', async () => {
    const client = createClient({ baseUrl, csrfToken: () => undefined })
    const [request] = await sentBy(() => client.POST('/single', { body }))
    expect(request!.headers).not.toHaveProperty('x-csrf-token')
    expect(request!.headers).not.toHaveProperty('x-api-key')
  })

  it('keeps the Idempotency-Key of every creation and the typed errors', async () => {
    const client = createClient({ baseUrl, csrfToken: () => 'token-1' })
    const [request] = await sentBy(async () => {
      const { data, idempotencyKey } = await client.POST('/single', { body })
      expect(data!.cardId).toBe(CARD_ID)
      expect(idempotencyKey).toMatch(UUID)
    })
    expect(request!.headers['idempotency-key']).toMatch(UUID)
    const expired = await client.GET('/campaigns').catch((error: unknown) => error)
    expect(expired).toBeInstanceOf(LettersApiError)
    expect(expired).toMatchObject({ status: 401, error: 'Unauthorized', message: 'Inicia sesión de nuevo.' })
  })
})

describe('createClient with an apiKey', () => {
  it('sends X-API-KEY on every request, and a CSRF token only when given one', async () => {
    const withKey = createClient({ baseUrl, apiKey: 'clave-1' })
    const both = createClient({ baseUrl, apiKey: 'clave-1', csrfToken: () => 'token-1' })
    const requests = await sentBy(async () => {
      await withKey.GET('/company-data')
      await withKey.POST('/single', { body })
      await both.POST('/single', { body })
    })
    expect(requests.map((request) => [request.headers['x-api-key'], request.headers['x-csrf-token']])).toEqual([
      ['clave-1', undefined],
      ['clave-1', undefined],
      ['clave-1', 'token-1'],
    ])
  })
})

describe('without crypto.randomUUID, as in a browser page served over plain http', () => {
  it('still sends every creation with a UUID v4 Idempotency-Key, a new one each time', async () => {
    const prototype = Object.getPrototypeOf(crypto) as object
    const own = Object.getOwnPropertyDescriptor(prototype, 'randomUUID')!
    Object.defineProperty(prototype, 'randomUUID', { value: undefined, configurable: true })
    try {
      expect(typeof crypto.randomUUID).toBe('undefined')
      const client = createClient({ baseUrl, csrfToken: () => 'token-1' })
      const sent = await sentBy(async () => {
        for (let i = 0; i < 3; i++) expect((await client.POST('/single', { body })).idempotencyKey).toMatch(UUID)
      })
      const keys = sent.map((request) => request.headers['idempotency-key'])
      for (const key of keys) expect(key).toMatch(UUID)
      expect(new Set(keys).size).toBe(3)
      const many = Array.from({ length: 200 }, () => newIdempotencyKey())
      for (const key of many) expect(key).toMatch(UUID)
      expect(new Set(many).size).toBe(200)
    } finally {
      Object.defineProperty(prototype, 'randomUUID', own)
    }
  })
})
