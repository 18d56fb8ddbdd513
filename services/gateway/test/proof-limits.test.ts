import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sql } from 'drizzle-orm'
import { proofKey } from '../src/features/letters/proofs.js'
import type { App } from '../src/app.js'
import { adminAccount, expectError, publicClient, sendSingle, startGateway } from './helpers.js'

const longMessage = 'Querida Lucía, gracias por venir a la inauguración de la tienda. '.repeat(15)

describe('the proof rate limit', () => {
  let app: App
  beforeAll(async () => {
    app = await startGateway({ PROOF_RATE_LIMIT_MAX: '2', PROOF_RATE_LIMIT_WINDOW_MS: '60000', RATE_LIMIT_MAX: '50', RATE_LIMIT_WINDOW_MS: '60000' })
  })
  afterAll(() => app.close())

  it('answers 429 with Retry-After past its own limit, while the same key keeps using the other routes', async () => {
    const account = await adminAccount(app)
    const client = publicClient(app, account.apiKey)
    const id = await sendSingle(app, account)
    for (let i = 0; i < 2; i++) {
      const proof = await client.get(`/cards/${id}/proof`)
      expect(proof.statusCode).toBe(200)
      expect(proof.headers['x-ratelimit-limit']).toBe('2')
    }
    const limited = await client.get(`/cards/${id}/proof`)
    expectError(limited, 429, 'Too Many Requests', /Se ha superado el límite de 2 pruebas cada 60 segundos; inténtalo de nuevo en \d+ s/)
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)

    // Counted apart: the proofs used none of the general limit, and the general limit still applies.
    const campaigns = await client.get('/campaigns')
    expect(campaigns.statusCode).toBe(200)
    expect(campaigns.headers['x-ratelimit-limit']).toBe('50')
    expect(campaigns.headers['x-ratelimit-remaining']).toBe('48')
    expect((await client.get(`/cards/${id}`)).statusCode).toBe(200)
  })

  it("limits each key on its own: another account's proofs go through", async () => {
    const busy = await adminAccount(app)
    const quiet = await adminAccount(app)
    const busyId = await sendSingle(app, busy)
    for (let i = 0; i < 2; i++) await publicClient(app, busy.apiKey).get(`/cards/${busyId}/proof`)
    expect((await publicClient(app, busy.apiKey).get(`/cards/${busyId}/proof`)).statusCode).toBe(429)
    expect((await publicClient(app, quiet.apiKey).get(`/cards/${await sendSingle(app, quiet)}/proof`)).statusCode).toBe(200)
  })
})

describe('the render queue', () => {
  let app: App
  beforeAll(async () => {
    app = await startGateway({ RENDER_THREADS: '1', RENDER_QUEUE_MAX: '1', PROOF_RATE_LIMIT_MAX: '1000' })
  })
  afterAll(() => app.close())

  it('answers 503 with Retry-After once every thread is busy and the queue is full, and every request ends', async () => {
    const account = await adminAccount(app)
    // Many more than one in hand and one waiting, arriving together: even with renders of a few
    // milliseconds, most find the queue full.
    const ids = await Promise.all(Array.from({ length: 30 }, () => sendSingle(app, account, { message: longMessage.slice(0, 1000) })))
    const started = Date.now()
    const responses = await Promise.all(ids.map((id) => publicClient(app, account.apiKey).get(`/cards/${id}/proof`)))
    // Nothing waits without bound: one render in hand, one waiting, the rest refused at once.
    expect(Date.now() - started).toBeLessThan(25_000)
    const refused = responses.filter((response) => response.statusCode === 503)
    const drawn = responses.filter((response) => response.statusCode === 200)
    expect(refused.length + drawn.length).toBe(ids.length)
    expect(refused.length).toBeGreaterThanOrEqual(1)
    expect(drawn.length).toBeGreaterThanOrEqual(1)
    for (const response of refused) {
      expectError(response, 503, 'Service Unavailable', 'Hay demasiadas pruebas en preparación; inténtalo de nuevo en unos segundos')
      expect(Number(response.headers['retry-after'])).toBeGreaterThan(0)
    }
    for (const response of drawn) expect(response.rawPayload.subarray(0, 5).toString()).toBe('%PDF-')

    // Refusals leave nothing behind: with the queue drained, the next proof is drawn.
    expect((await publicClient(app, account.apiKey).get(`/cards/${ids[0]}/proof`)).statusCode).toBe(200)
  })
})

describe('a proof that takes longer than the client may wait', () => {
  let app: App
  /** Makes the account and its letters: a creation may take longer than the 300 ms this gateway gives a request. */
  let maker: App
  beforeAll(async () => {
    maker = await startGateway()
    // Half of a 300 ms request timeout: one thread, so sixteen long proofs queued behind each other
    // (some 10-20 ms each once the thread has its fonts, its first one several times that) run past it.
    app = await startGateway({ RENDER_THREADS: '1', RENDER_QUEUE_MAX: '16', PROOF_RATE_LIMIT_MAX: '1000', HTTP_REQUEST_TIMEOUT_MS: '300' })
  })
  afterAll(async () => {
    await app.close()
    await maker.close()
  })

  it('answers 503 with Retry-After before the server would drop the socket, and the render it waited for is kept for the next request', async () => {
    const account = await adminAccount(maker)
    const ids = await Promise.all(Array.from({ length: 16 }, () => sendSingle(maker, account, { message: longMessage.slice(0, 1000) })))
    // Verified addresses: their proofs are final and kept once drawn.
    await app.db.execute(sql`UPDATE letters SET address = recipient WHERE id IN ${ids}`)
    const started = Date.now()
    const responses = await Promise.all(ids.map((id) => publicClient(app, account.apiKey).get(`/cards/${id}/proof`)))
    const late = responses.filter((response) => response.statusCode === 503)
    expect(late.length).toBeGreaterThan(0)
    for (const response of late) {
      // The proof's own deadline, or on a loaded machine the request's, a little later.
      expectError(
        response,
        503,
        'Service Unavailable',
        /La prueba está tardando más de lo normal; vuelve a pedirla en unos segundos|No hemos podido atender la petición a tiempo/,
      )
      expect(response.headers['retry-after']).toMatch(/^[1-9][0-9]*$/)
    }
    expect(responses.every((response) => [200, 503].includes(response.statusCode))).toBe(true)
    // Every answer went out near the deadline, long before the renders queued could all be waited for.
    expect(Date.now() - started).toBeLessThan(12 * 1000)
    // The renders went on: once the queue has drained, each late proof is served from the store.
    const lateIds = ids.filter((_, i) => responses[i]!.statusCode === 503)
    await expect
      .poll(async () => (await Promise.all(lateIds.map((id) => app.artifacts.get(proofKey(id))))).every(Boolean), { timeout: 60_000, interval: 200 })
      .toBe(true)
    const completed = app.renderPool.completed
    for (const id of lateIds) expect((await publicClient(app, account.apiKey).get(`/cards/${id}/proof`)).statusCode).toBe(200)
    expect(app.renderPool.completed).toBe(completed)
  }, 90_000)
})
