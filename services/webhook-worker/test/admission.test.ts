import { describe, expect } from 'vitest'
import { and, eq, inArray, isNotNull, sql } from 'drizzle-orm'
import type { App } from '@letters/gateway/server'
import { outbox, webhookEvents } from '@letters/db'
import { adminAccount } from '@letters/test/support/accounts'
import { publicClient, type Account } from '@letters/test/support/gateway'
import { silentLog } from '@letters/test/support/pipeline'
import { it as base } from '@letters/test/support/fixtures'
import { QUEUED_LEASE_MS } from '@letters/config'
import { DeliveryAdmission } from '../src/admission.js'
import { removeEndpoints } from '@letters/test/support/webhook-receiver'
import { deliverEvent } from '../src/deliver.js'

// A database of its own: the admission takes every pending delivery it finds. No worker runs here.
const it = base.extend({ gatewayOptions: { isolate: 'webhook-admission', checkContract: false }, accountCredits: 10 })

it.afterEach(async ({ gateway }) => {
  await removeEndpoints(gateway.db)
  await gateway.db.delete(outbox)
})

/** An endpoint of `owner` with `pending` deliveries due. */
async function endpointWith(app: App, owner: Account, pending: number, fields: Partial<typeof webhookEvents.$inferInsert> = {}) {
  const response = await publicClient(app, owner.apiKey).post('/webhooks', { url: `https://93.184.216.34/hooks/${pending}-${Math.random()}` })
  expect(response.statusCode, response.body).toBe(201)
  const endpointId = response.json<{ id: string }>().id
  // Written a millisecond apart, as events are: the oldest is due longest.
  const start = Date.now() - 60_000
  const rows = Array.from({ length: pending }, (_, n) => ({ endpointId, type: 'webhook.test', body: '{}', createdAt: new Date(start + n), ...fields }))
  const written = rows.length === 0 ? [] : await app.db.insert(webhookEvents).values(rows).returning({ id: webhookEvents.id })
  return { endpointId, eventIds: written.map((row) => row.id) }
}

// No cap per account unless a test sets one: most tests here give one account many endpoints.
const admission = (app: App, options: Partial<ConstructorParameters<typeof DeliveryAdmission>[2]> = {}) =>
  new DeliveryAdmission(app.db, silentLog, { maxInFlightPerEndpoint: 10, maxInFlightPerAccount: 10_000, ...options })

const leasedOf = (app: App, endpointId: string) =>
  app.db
    .select()
    .from(webhookEvents)
    .where(and(eq(webhookEvents.endpointId, endpointId), sql`${webhookEvents.leasedUntil} > now()`))

describe('the admission', () => {
  it('admits at most WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT deliveries of an endpoint, oldest first, each with its job, and more only as slots come free', async ({
    gateway: app,
    account,
  }) => {
    const busy = await endpointWith(app, account, 25)
    const quiet = await endpointWith(app, account, 2)
    const admit = admission(app)
    expect(await admit.admitOnce()).toBe(12)
    const leased = await leasedOf(app, busy.endpointId)
    expect(leased.map((event) => event.id).sort()).toEqual(busy.eventIds.slice(0, 10).sort())
    expect(await leasedOf(app, quiet.endpointId)).toHaveLength(2)
    // Each admitted delivery's job: its id is the lease's, its payload the event's id.
    const jobs = await app.db.select().from(outbox)
    expect(jobs).toHaveLength(12)
    for (const event of leased) {
      expect(jobs.find((job) => job.id === event.leaseId)).toMatchObject({ queue: 'webhooks', jobName: 'deliver-webhook', payload: { eventId: event.id } })
    }
    expect(await admit.admitOnce()).toBe(0)

    // Three deliveries end: three more of that endpoint go, the next oldest.
    await app.db
      .update(webhookEvents)
      .set({ state: 'delivered', leasedUntil: null, leaseId: null })
      .where(inArray(webhookEvents.id, busy.eventIds.slice(0, 3)))
    expect(await admit.admitOnce()).toBe(3)
    expect((await leasedOf(app, busy.endpointId)).map((event) => event.id).sort()).toEqual(busy.eventIds.slice(3, 13).sort())
  })

  it('gives a slot again once its lease has passed, as when the worker holding it was killed; the old job then sends nothing', async ({
    gateway: app,
    account,
  }) => {
    const { endpointId } = await endpointWith(app, account, 15)
    const admit = admission(app)
    await admit.admitOnce()
    const [lost] = await app.db
      .update(webhookEvents)
      .set({ leasedUntil: sql`now() - interval '1 second'` })
      .where(and(eq(webhookEvents.endpointId, endpointId), isNotNull(webhookEvents.leaseId)))
      .returning()
    expect(await admit.admitOnce()).toBe(10)
    expect(await leasedOf(app, endpointId)).toHaveLength(10)
    const [again] = await app.db.select().from(webhookEvents).where(eq(webhookEvents.id, lost!.id))
    expect(again!.leaseId).not.toBe(lost!.leaseId)
    // The job of the lease that passed, run late: superseded before anything is sent.
    const settings = { timeoutMs: 1000, retryScheduleMs: [], allowPrivateUrls: false, allowHttp: true }
    expect(await deliverEvent(app.db, settings, { eventId: lost!.id, leaseId: lost!.leaseId! })).toEqual({ outcome: 'superseded' })
    expect((await app.db.select().from(webhookEvents).where(eq(webhookEvents.id, lost!.id)))[0]).toMatchObject({ attempts: 0, leaseId: again!.leaseId })
  })

  it('leaves a retry until its time has come', async ({ gateway: app, account }) => {
    const later = await endpointWith(app, account, 1, { attempts: 1, nextAttemptAt: new Date(Date.now() + 3_600_000) })
    const due = await endpointWith(app, account, 1, { attempts: 1, nextAttemptAt: new Date(Date.now() - 1000) })
    expect(await admission(app).admitOnce()).toBe(1)
    expect(await leasedOf(app, due.endpointId)).toHaveLength(1)
    expect(await leasedOf(app, later.endpointId)).toEqual([])
  })

  it('gives each endpoint its first slot before anyone’s second when a round cannot take every due delivery', async ({ gateway: app, account }) => {
    const endpoints = [await endpointWith(app, account, 5), await endpointWith(app, account, 5), await endpointWith(app, account, 5)]
    expect(await admission(app, { batchSize: 3 }).admitOnce()).toBe(3)
    for (const { endpointId } of endpoints) expect(await leasedOf(app, endpointId)).toHaveLength(1)
  })

  it('admits at most WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT deliveries of an account over all its endpoints, each endpoint’s first slot first, and leaves the rest to other accounts', async ({
    gateway: app,
    account,
  }) => {
    const crowded = [
      await endpointWith(app, account, 10),
      await endpointWith(app, account, 10),
      await endpointWith(app, account, 10),
      await endpointWith(app, account, 10),
      await endpointWith(app, account, 10),
    ]
    const other = await adminAccount(app, 10)
    const theirs = await endpointWith(app, other, 3)
    const admit = admission(app, { maxInFlightPerAccount: 7 })
    expect(await admit.admitOnce()).toBe(10)
    const held = await Promise.all(crowded.map(async ({ endpointId }) => (await leasedOf(app, endpointId)).length))
    expect(held.reduce((sum, n) => sum + n, 0)).toBe(7)
    expect(held.every((n) => n >= 1 && n <= 2)).toBe(true)
    expect(await leasedOf(app, theirs.endpointId)).toHaveLength(3)
    // Full: nothing more of that account until one of its deliveries ends, then one.
    expect(await admit.admitOnce()).toBe(0)
    const [ended] = await leasedOf(app, crowded[0]!.endpointId)
    await app.db.update(webhookEvents).set({ state: 'delivered', leasedUntil: null, leaseId: null }).where(eq(webhookEvents.id, ended!.id))
    expect(await admit.admitOnce()).toBe(1)
  })

  it('holds a queued delivery’s slot for a minute: a job lost before it started costs its endpoint no longer', async ({ gateway: app, account }) => {
    const { endpointId } = await endpointWith(app, account, 1)
    expect(await admission(app).admitOnce()).toBe(1)
    const [leased] = await leasedOf(app, endpointId)
    const heldForMs = leased!.leasedUntil!.getTime() - Date.now()
    expect(QUEUED_LEASE_MS).toBe(60_000)
    expect(heldForMs).toBeGreaterThan(QUEUED_LEASE_MS - 5000)
    expect(heldForMs).toBeLessThanOrEqual(QUEUED_LEASE_MS + 1000)
  })

  it('never fills one free slot twice when admissions of several workers run at once', async ({ gateway: app, account }) => {
    const { endpointId } = await endpointWith(app, account, 40)
    const rounds = await Promise.all([admission(app), admission(app), admission(app), admission(app)].map((admit) => admit.admitOnce()))
    expect(rounds.reduce((sum, n) => sum + n, 0)).toBe(10)
    expect(await leasedOf(app, endpointId)).toHaveLength(10)
  })
})
