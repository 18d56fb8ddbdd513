import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sql } from 'drizzle-orm'
import { Redis } from 'ioredis'
import { closeDb, createDb, type Db } from '@letters/db'
import { isolatedDatabase, testConfig } from '@letters/test/support/context'
import { buildApp, type App } from '../src/app.js'
import { adminAccount, expectError, sendSingle } from './helpers.js'
import { ADMIN_TOKEN } from '@letters/test/support/context'

let database: Awaited<ReturnType<typeof isolatedDatabase>>
let db: Db
let app: App
const queuePrefix = `metrics-${Math.random().toString(36).slice(2, 8)}`

beforeAll(async () => {
  // Its own database and queue prefix: the pipeline gauges count everything in them.
  database = await isolatedDatabase('metrics')
  db = createDb(database.url)
  app = await buildApp({ config: testConfig({ DATABASE_URL: database.url, QUEUE_PREFIX: queuePrefix, RECONCILE_AFTER_MS: '60000' }), db, logger: false })
  await app.ready()
})
afterAll(async () => {
  await Promise.all(Object.values(app.queues).map((queue) => queue.obliterate({ force: true })))
  await app.close()
  await closeDb(db)
  await database.drop()
  const redis = new Redis(app.config.redisUrl)
  const keys = await redis.keys(`${queuePrefix}*`)
  if (keys.length > 0) await redis.del(...keys)
  redis.disconnect()
})

const scrape = async () => {
  const response = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
  expect(response.statusCode).toBe(200)
  expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/)
  return response.body
}

/** The value of one sample, e.g. `letters_stuck{status="received"}`; undefined when absent. */
function sample(text: string, name: string): number | undefined {
  const line = text.split('\n').find((row) => row.startsWith(`${name} `))
  return line === undefined ? undefined : Number(line.slice(name.length + 1))
}

describe('GET /metrics on the gateway', () => {
  it('still serves the gateway’s own metrics while Postgres does not answer', async () => {
    // A pool aimed at a port nobody listens on: every query fails at once, as in an outage.
    const unreachable = createDb('postgres://postgres@127.0.0.1:1/letters')
    const cut = await buildApp({ config: testConfig({ QUEUE_PREFIX: queuePrefix }), db: unreachable, logger: false })
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

  it('answers 401 without the admin token, and 401 with a wrong one', async () => {
    expectError(await app.inject({ method: 'GET', url: '/metrics' }), 401, 'Unauthorized')
    expectError(await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer not-the-admin-token' } }), 401, 'Unauthorized')
  })

  it('counts letters, credits and request durations by route, with Node’s own metrics', async () => {
    const before = await scrape()
    const account = await adminAccount(app, 30)
    await sendSingle(app, account)
    await sendSingle(app, account, { country: 'PT', zip: '1000-001', province: '' })
    const after = await scrape()
    const delta = (name: string) => (sample(after, name) ?? 0) - (sample(before, name) ?? 0)
    expect(delta('letters_created_total{type="single",country="ES",mode="live"}')).toBe(1)
    expect(delta('letters_created_total{type="single",country="PT",mode="live"}')).toBe(1)
    expect(delta('letters_credits_charged_total')).toBe(3 + 5)
    expect(delta('http_request_duration_seconds_count{method="POST",route="/single",status_code="200"}')).toBe(2)
    expect(after).toMatch(/^process_cpu_user_seconds_total \d/m)
    expect(after).toMatch(/^nodejs_eventloop_lag_seconds \d/m)
  })

  it('counts a refund and the status change it makes', async () => {
    const before = await scrape()
    const account = await adminAccount(app, 30)
    const cardId = await sendSingle(app, account)
    const cancelled = await app.inject({ method: 'DELETE', url: `/cards/${cardId}`, headers: { 'x-api-key': account.apiKey } })
    expect(cancelled.statusCode).toBe(200)
    const after = await scrape()
    expect((sample(after, 'letters_credits_refunded_total') ?? 0) - (sample(before, 'letters_credits_refunded_total') ?? 0)).toBe(3)
    expect(
      (sample(after, 'letters_status_changes_total{to="cancelled",mode="live"}') ?? 0) -
        (sample(before, 'letters_status_changes_total{to="cancelled",mode="live"}') ?? 0),
    ).toBe(1)
  })

  it('reads the outbox backlog, the stuck letters (by mode) and the queues at scrape time', async () => {
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
    await db.execute(
      sql`UPDATE letters SET status = 'ready_for_print', updated_at = now() - interval '2 minutes' WHERE id IN (${staleTests[0]}::uuid, ${staleTests[1]}::uuid)`,
    )
    // No dispatcher runs here: every letter's address job waits in the outbox.
    const [pending] = await db.execute<{ n: number }>(sql`SELECT count(*)::int AS n FROM outbox WHERE sent_at IS NULL`)
    // One letter made no progress for longer than RECONCILE_AFTER_MS (60 s here).
    await db.execute(sql`UPDATE letters SET updated_at = now() - interval '2 minutes' WHERE id = ${stale}::uuid`)
    await db.execute(sql`UPDATE outbox SET created_at = now() - interval '90 seconds' WHERE payload ->> 'letterId' = ${stale}`)
    await app.queues.address.add('normalize-address', { letterId: stale }, { jobId: crypto.randomUUID(), delay: 60_000 })

    const text = await scrape()
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
