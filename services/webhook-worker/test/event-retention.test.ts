import { randomUUID } from 'node:crypto'
import { describe, expect } from 'vitest'
import { asc, eq } from 'drizzle-orm'
import { events } from '@letters/db'
import { EVENT_RETENTION_DAYS } from '@letters/contracts'
import { publicClient } from '@letters/test/support/gateway'
import { silentLog } from '@letters/test/support/pipeline'
import { singleLetter } from '@letters/test/support/factories'
import { it } from '@letters/test/support/fixtures'
import { EventRetention } from '../src/event-retention.js'

// A database of its own: the retention deletes whatever is old enough, other files' events included.
it.override({ gatewayOptions: { isolate: 'event-retention', checkContract: false } })

describe('the events’ retention', () => {
  it(`deletes the events older than ${EVENT_RETENTION_DAYS} days, oldest first, a batch at a time, and keeps the rest`, async ({ gateway, account }) => {
    const response = await publicClient(gateway, account.apiKey).post('/single', singleLetter(account))
    expect(response.statusCode, response.body).toBe(200)
    const [received] = await gateway.db.select().from(events).where(eq(events.accountId, account.id))
    const day = 86_400_000
    const ages = [EVENT_RETENTION_DAYS + 3, EVENT_RETENTION_DAYS + 2, EVENT_RETENTION_DAYS + 1, EVENT_RETENTION_DAYS - 1]
    await gateway.db
      .insert(events)
      .values(ages.map((age, n) => ({ ...received!, id: randomUUID(), sequence: n + 2, occurredAt: new Date(Date.now() - age * day) })))
    const retention = new EventRetention(gateway.db, silentLog, { batchSize: 2 })
    expect(await retention.deleteOnce()).toBe(2)
    expect(await retention.deleteOnce()).toBe(1)
    expect(await retention.deleteOnce()).toBe(0)
    const kept = await gateway.db.select({ sequence: events.sequence }).from(events).where(eq(events.accountId, account.id)).orderBy(asc(events.sequence))
    expect(kept.map((event) => event.sequence)).toEqual([1, 5])
    expect((await publicClient(gateway, account.apiKey).get('/events')).json<{ data: unknown[] }>().data).toHaveLength(2)
  })
})
