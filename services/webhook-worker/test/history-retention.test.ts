import { randomUUID } from 'node:crypto'
import { describe, expect } from 'vitest'
import { asc, eq, inArray, sql } from 'drizzle-orm'
import { events, ledgerEntries, outbox, webhookAttempts, webhookEndpoints, webhookEvents } from '@letters/db'
import { EVENT_RETENTION_DAYS } from '@letters/contracts'
import { publicClient } from '@letters/test/support/gateway'
import { silentLog } from '@letters/test/support/pipeline'
import { singleLetter } from '@letters/test/support/factories'
import { it as base } from '@letters/test/support/fixtures'
import type { App } from '@letters/gateway/server'
import { HistoryRetention, OUTBOX_RETENTION_DAYS } from '../src/history-retention.js'
import { deliverEvent } from '../src/deliver.js'

// A database of its own: the retention deletes whatever is old enough, other files' rows included.
const it = base.extend({ gatewayOptions: { isolate: 'history-retention', checkContract: false } })

const DAY = 86_400_000
const daysAgo = (days: number) => new Date(Date.now() - days * DAY)

/** Deletes until a round deletes nothing; returns the rounds it took. */
async function trimAll(retention: HistoryRetention): Promise<number> {
  for (let rounds = 1; ; rounds++) {
    const deleted = await retention.trimOnce()
    if (Object.values(deleted).every((n) => n === 0)) return rounds
  }
}

/** An endpoint of the account written as the API writes it (its URL is never called here). */
async function endpointOf(app: App, accountId: string) {
  const [endpoint] = await app.db
    .insert(webhookEndpoints)
    .values({ accountId, url: 'https://hooks.example.com/letters', events: ['letter.received'], secret: `whsec_${randomUUID()}` })
    .returning()
  return endpoint!
}

/** `count` finished deliveries of the endpoint, each with an attempt, finished `age` days ago. */
async function finishedDeliveries(app: App, endpointId: string, count: number, age: number) {
  const at = daysAgo(age)
  const rows = await app.db
    .insert(webhookEvents)
    .values(
      Array.from({ length: count }, () => ({
        endpointId,
        type: 'letter.received',
        body: '{}',
        state: 'delivered' as const,
        attempts: 1,
        createdAt: at,
        finishedAt: at,
      })),
    )
    .returning({ id: webhookEvents.id })
  await app.db
    .insert(webhookAttempts)
    .values(rows.map((row) => ({ eventId: row.id, endpointId, attempt: 1, statusCode: 200, durationMs: 12, at, outcome: 'delivered' as const })))
  return rows.map((row) => row.id)
}

describe('the history retention', () => {
  it(`deletes the events older than ${EVENT_RETENTION_DAYS} days, oldest first, a batch at a time, and keeps the rest`, async ({ gateway, account }) => {
    const response = await publicClient(gateway, account.apiKey).post('/single', singleLetter(account))
    expect(response.statusCode, response.body).toBe(200)
    const [received] = await gateway.db.select().from(events).where(eq(events.accountId, account.id))
    const ages = [EVENT_RETENTION_DAYS + 3, EVENT_RETENTION_DAYS + 2, EVENT_RETENTION_DAYS + 1, EVENT_RETENTION_DAYS - 1]
    await gateway.db.insert(events).values(ages.map((age, n) => ({ ...received!, id: randomUUID(), sequence: n + 2, occurredAt: daysAgo(age) })))
    const retention = new HistoryRetention(gateway.db, silentLog, { batchSize: 2 })
    expect((await retention.trimOnce()).events).toBe(2)
    expect((await retention.trimOnce()).events).toBe(1)
    expect((await retention.trimOnce()).events).toBe(0)
    const kept = await gateway.db.select({ sequence: events.sequence }).from(events).where(eq(events.accountId, account.id)).orderBy(asc(events.sequence))
    expect(kept.map((event) => event.sequence)).toEqual([1, 5])
    expect((await publicClient(gateway, account.apiKey).get('/events')).json<{ data: unknown[] }>().data).toHaveLength(2)
  })

  it(`deletes webhook deliveries finished more than ${EVENT_RETENTION_DAYS} days ago with their attempts, and keeps recent and pending ones`, async ({
    gateway,
    account,
  }) => {
    const endpoint = await endpointOf(gateway, account.id)
    const old = await finishedDeliveries(gateway, endpoint.id, 5, EVENT_RETENTION_DAYS + 2)
    const recent = await finishedDeliveries(gateway, endpoint.id, 2, EVENT_RETENTION_DAYS - 2)
    // Pending for as long (a receiver that never answered): still the worker's to send or give up.
    const [pending] = await gateway.db
      .insert(webhookEvents)
      .values({ endpointId: endpoint.id, type: 'letter.received', body: '{}', createdAt: daysAgo(EVENT_RETENTION_DAYS + 5) })
      .returning({ id: webhookEvents.id })
    const retention = new HistoryRetention(gateway.db, silentLog, { batchSize: 2 })
    await trimAll(retention)
    const left = await gateway.db.select({ id: webhookEvents.id }).from(webhookEvents).where(eq(webhookEvents.endpointId, endpoint.id))
    expect(left.map((row) => row.id).sort()).toEqual([...recent, pending!.id].sort())
    expect(await gateway.db.select().from(webhookAttempts).where(inArray(webhookAttempts.eventId, old))).toEqual([])
    expect(await gateway.db.select().from(webhookAttempts).where(inArray(webhookAttempts.eventId, recent))).toHaveLength(2)
  })

  it(`deletes outbox rows sent more than ${OUTBOX_RETENTION_DAYS} days ago, never one not sent`, async ({ gateway }) => {
    const payload = { letterId: randomUUID() }
    const rows = await gateway.db
      .insert(outbox)
      .values([
        { queue: 'address', jobName: 'normalize-address', payload, createdAt: daysAgo(20), sentAt: daysAgo(OUTBOX_RETENTION_DAYS + 1) },
        { queue: 'address', jobName: 'normalize-address', payload, createdAt: daysAgo(20), sentAt: daysAgo(OUTBOX_RETENTION_DAYS - 1) },
        { queue: 'address', jobName: 'normalize-address', payload, createdAt: daysAgo(20), sentAt: null },
      ])
      .returning({ id: outbox.id })
    await trimAll(new HistoryRetention(gateway.db, silentLog))
    const left = await gateway.db
      .select({ id: outbox.id })
      .from(outbox)
      .where(sql`${outbox.payload} ->> 'letterId' = ${payload.letterId}`)
    expect(left.map((row) => row.id).sort()).toEqual([rows[1]!.id, rows[2]!.id].sort())
    // The dispatcher must not pick the unsent test row up in another test's run: sent now.
    await gateway.db
      .update(outbox)
      .set({ sentAt: sql`now()` })
      .where(eq(outbox.id, rows[2]!.id))
  })

  it('never touches the ledger, which refuses any change but an insert', async ({ gateway, account }) => {
    const [entry] = await gateway.db.select().from(ledgerEntries).where(eq(ledgerEntries.accountId, account.id)).limit(1)
    expect(entry).toBeDefined()
    await expect(gateway.db.delete(ledgerEntries).where(eq(ledgerEntries.id, entry!.id))).rejects.toMatchObject({ cause: { code: '42501' } })
    await expect(gateway.db.update(ledgerEntries).set({ amount: 5 }).where(eq(ledgerEntries.id, entry!.id))).rejects.toMatchObject({ cause: { code: '42501' } })
    await expect(gateway.db.execute(sql`TRUNCATE ledger_entries CASCADE`)).rejects.toMatchObject({ cause: { code: '42501' } })
  })
})

describe('DELETE /webhooks/{id} of an endpoint with a long history', () => {
  it('answers 204 at once: gone from the API, its queued delivery dropped, then its deliveries, attempts and row removed in batches', async ({
    gateway,
    account,
  }) => {
    const client = publicClient(gateway, account.apiKey)
    const deliveriesOf = async (endpointId: string) =>
      (
        await gateway.db
          .select({ n: sql<number>`count(*)::int` })
          .from(webhookEvents)
          .where(eq(webhookEvents.endpointId, endpointId))
      )[0]!.n
    const endpoint = await endpointOf(gateway, account.id)
    const history = await finishedDeliveries(gateway, endpoint.id, 2500, 3)
    const leaseId = randomUUID()
    const [queued] = await gateway.db
      .insert(webhookEvents)
      .values({ endpointId: endpoint.id, type: 'letter.received', body: '{}', leaseId, leasedUntil: new Date(Date.now() + 60_000) })
      .returning({ id: webhookEvents.id })

    const response = await client.delete(`/webhooks/${endpoint.id}`)
    expect(response.statusCode, response.body).toBe(204)
    // Nothing of its history went with the answer: that is the retention's.
    expect(await deliveriesOf(endpoint.id)).toBe(2501)
    expect((await client.get('/webhooks')).json<{ data: Array<{ id: string }> }>().data.map((row) => row.id)).not.toContain(endpoint.id)
    expect((await client.get(`/webhooks/${endpoint.id}/deliveries`)).statusCode).toBe(404)
    expect((await client.delete(`/webhooks/${endpoint.id}`)).statusCode).toBe(404)
    expect((await client.post(`/webhooks/${endpoint.id}/test`, {})).statusCode).toBe(404)
    // A delivery already queued for it is dropped, never sent.
    const outcome = await deliverEvent(
      gateway.db,
      { timeoutMs: 1000, retryScheduleMs: [1000], allowPrivateUrls: false, allowHttp: false },
      { eventId: queued!.id, leaseId },
    )
    expect(outcome).toEqual({ outcome: 'dropped' })
    // A letter's change writes no event for it.
    const letter = await client.post('/single', singleLetter(account))
    expect(letter.statusCode, letter.body).toBe(200)
    expect(await deliveriesOf(endpoint.id)).toBe(2501)

    const retention = new HistoryRetention(gateway.db, silentLog, { batchSize: 1000 })
    expect(await trimAll(retention)).toBeGreaterThanOrEqual(3)
    expect(await gateway.db.select().from(webhookEvents).where(eq(webhookEvents.endpointId, endpoint.id))).toEqual([])
    expect(
      await gateway.db
        .select()
        .from(webhookAttempts)
        .where(inArray(webhookAttempts.eventId, history.slice(0, 100))),
    ).toEqual([])
    expect(await gateway.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, endpoint.id))).toEqual([])
  })
})
