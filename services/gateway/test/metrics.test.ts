import { describe, expect } from 'vitest'
import { sql } from 'drizzle-orm'
import { closeDb, createDb } from '@letters/db'
import { testConfig } from '@letters/test/support/context'
import { it as base } from '@letters/test/support/fixtures'
import { samplesIn, scrapeMetrics } from '@letters/test/support/metrics'
import { buildGateway, type App } from '../src/server.js'
import { adminAccount, expectError, sendSingle } from './helpers.js'
import { ADMIN_TOKEN } from '@letters/test/support/context'

// Its own database and queue prefix: the pipeline gauges count everything in them.
const METRICS_TOKEN = 'a-read-only-token-for-prometheus'

const it = base.extend({ gatewayOptions: { isolate: 'metrics', env: { RECONCILE_AFTER_MS: '60000', METRICS_TOKEN, AUTH_FAILURES_MAX: '10' } } })

it.afterAll(async ({ gateway }) => {
  await Promise.all(Object.values(gateway.queues).map((queue) => queue.obliterate({ force: true })))
})

const scrape = async (app: App) => {
  const { contentType, text } = await scrapeMetrics(app, { token: METRICS_TOKEN })
  expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/)
  return text
}

/** The value of one sample, e.g. `letters_stuck{status="received"}`; undefined when absent. */
const sample = (text: string, name: string): number | undefined => samplesIn(text)[name]

describe('GET /metrics on the gateway', () => {
  it('still serves the gateway’s own metrics while Postgres does not answer', async ({ gateway }) => {
    // A pool aimed at a port nobody listens on: every query fails at once, as in an outage.
    const unreachable = createDb('postgres://postgres@127.0.0.1:1/letters')
    const cut = await buildGateway({ config: testConfig({ QUEUE_PREFIX: gateway.config.queuePrefix }), db: unreachable, logger: false })
    try {
      const response = await cut.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
      expect(response.statusCode).toBe(200)
      expect(response.body).toMatch(/^process_cpu_user_seconds_total \d/m)
      expect(response.body).toContain('# TYPE letters_stuck gauge')
    } finally {
      await cut.close()
      await closeDb(unreachable)
    }
  })

  it('opens to METRICS_TOKEN, which opens nothing else: not the admin API, not the ops pages; the admin token no longer opens it', async ({ gateway: app }) => {
    const scraped = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
    expect(scraped.statusCode).toBe(200)
    expect(scraped.body).toMatch(/^letters_outbox_pending /m)
    expectError(
      await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }),
      401,
      'Unauthorized',
      /token de métricas/,
    )
    const asMetrics = { authorization: `Bearer ${METRICS_TOKEN}` }
    expectError(await app.inject({ method: 'GET', url: '/admin/accounts', headers: asMetrics }), 401, 'Unauthorized')
    expectError(
      await app.inject({ method: 'POST', url: '/admin/accounts', headers: asMetrics, payload: { name: 'Intruso', credits: 1000 } }),
      401,
      'Unauthorized',
    )
    const basic = { authorization: `Basic ${Buffer.from(`ops:${METRICS_TOKEN}`).toString('base64')}` }
    expect((await app.inject({ method: 'GET', url: '/ops/queues', headers: basic })).statusCode).toBe(401)
  })

  it('counts wrong metrics tokens apart: a scraper with an old one does not lock the admin API out of its address', async ({ gateway: app }) => {
    const remoteAddress = '198.51.100.23'
    for (let i = 0; i < 12; i++) {
      const response = await app.inject({ method: 'GET', url: '/metrics', remoteAddress, headers: { authorization: `Bearer an-old-metrics-token-${i}` } })
      expect([401, 429]).toContain(response.statusCode)
    }
    // The scraper's address is now past the limit for /metrics, and only for /metrics.
    expect((await app.inject({ method: 'GET', url: '/metrics', remoteAddress, headers: { authorization: 'Bearer yet-another-old-token' } })).statusCode).toBe(
      429,
    )
    expect((await app.inject({ method: 'GET', url: '/admin/accounts', remoteAddress, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).statusCode).toBe(
      200,
    )
  })

  it('answers 401 without the metrics token, and 401 with a wrong one', async ({ gateway: app }) => {
    expectError(await app.inject({ method: 'GET', url: '/metrics' }), 401, 'Unauthorized')
    expectError(await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer not-the-admin-token' } }), 401, 'Unauthorized')
  })

  it('counts letters, credits and request durations by route, with Node’s own metrics', async ({ gateway: app }) => {
    const before = await scrape(app)
    const account = await adminAccount(app, 30)
    await sendSingle(app, account)
    await sendSingle(app, account, { country: 'PT', zip: '1000-001', province: '' })
    const after = await scrape(app)
    const delta = (name: string) => (sample(after, name) ?? 0) - (sample(before, name) ?? 0)
    expect(delta('letters_created_total{type="single",country="ES",mode="live"}')).toBe(1)
    expect(delta('letters_created_total{type="single",country="PT",mode="live"}')).toBe(1)
    expect(delta('letters_credits_charged_total')).toBe(3 + 5)
    expect(delta('http_request_duration_seconds_count{method="POST",route="/single",status_code="200"}')).toBe(2)
    expect(after).toMatch(/^process_cpu_user_seconds_total \d/m)
    expect(after).toMatch(/^nodejs_eventloop_lag_seconds \d/m)
  })

  it('counts a refund and the status change it makes', async ({ gateway: app }) => {
    const before = await scrape(app)
    const account = await adminAccount(app, 30)
    const cardId = await sendSingle(app, account)
    const cancelled = await app.inject({ method: 'DELETE', url: `/cards/${cardId}`, headers: { 'x-api-key': account.apiKey } })
    expect(cancelled.statusCode).toBe(200)
    const after = await scrape(app)
    expect((sample(after, 'letters_credits_refunded_total') ?? 0) - (sample(before, 'letters_credits_refunded_total') ?? 0)).toBe(3)
    expect(
      (sample(after, 'letters_status_changes_total{to="cancelled",mode="live"}') ?? 0) -
        (sample(before, 'letters_status_changes_total{to="cancelled",mode="live"}') ?? 0),
    ).toBe(1)
  })

  it('reads the outbox backlog, the stuck letters (by mode) and the queues at scrape time', async ({ gateway: app }) => {
    const account = await adminAccount(app, 30)
    const stale = await sendSingle(app, account)
    await sendSingle(app, account)
    // Two test letters stuck in ready_for_print: counted apart from the live ones.
    const testKey = (
      await app.inject({
        method: 'POST',
        url: `/admin/accounts/${account.id}/api-keys`,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        payload: { mode: 'test' },
      })
    ).json<{ apiKey: string }>().apiKey
    const staleTests = [await sendSingle(app, { ...account, apiKey: testKey }), await sendSingle(app, { ...account, apiKey: testKey })]
    await app.db.execute(
      sql`UPDATE letters SET status = 'ready_for_print', updated_at = now() - interval '2 minutes' WHERE id IN (${staleTests[0]}::uuid, ${staleTests[1]}::uuid)`,
    )
    // No dispatcher runs here: every letter's address job waits in the outbox.
    const [pending] = await app.db.execute<{ n: number }>(sql`SELECT count(*)::int AS n FROM outbox WHERE sent_at IS NULL`)
    // One letter made no progress for longer than RECONCILE_AFTER_MS (60 s here).
    await app.db.execute(sql`UPDATE letters SET updated_at = now() - interval '2 minutes' WHERE id = ${stale}::uuid`)
    await app.db.execute(sql`UPDATE outbox SET created_at = now() - interval '90 seconds' WHERE payload ->> 'letterId' = ${stale}`)
    await app.queues.address.add('normalize-address', { letterId: stale }, { jobId: crypto.randomUUID(), delay: 60_000 })

    const text = await scrape(app)
    expect(sample(text, 'letters_outbox_pending')).toBe(pending!.n)
    expect(sample(text, 'letters_outbox_oldest_seconds')).toBeGreaterThanOrEqual(90)
    expect(sample(text, 'letters_stuck{status="received",mode="live"}')).toBe(1)
    expect(sample(text, 'letters_stuck{status="received",mode="test"}')).toBe(0)
    expect(sample(text, 'letters_stuck{status="ready_for_print",mode="live"}')).toBe(0)
    expect(sample(text, 'letters_stuck{status="ready_for_print",mode="test"}')).toBe(2)
    expect(sample(text, 'letters_stuck{status="printing",mode="live"}')).toBe(0)
    expect(sample(text, 'letters_queue_jobs{queue="address",state="delayed"}')).toBe(1)
    expect(sample(text, 'letters_queue_jobs{queue="production",state="waiting"}')).toBe(0)
  })
})
