import { describe, expect } from 'vitest'
import { inArray } from 'drizzle-orm'
import { pino } from 'pino'
import { outbox, type Db } from '@letters/db'
import { testConfig } from '@letters/test/support/context'
import { it as base } from '@letters/test/support/fixtures'
import { OutboxDispatcher, closeQueues, openQueues, producerConnection } from '../src/index.js'

const log = pino({ level: 'silent' })
const prefix = `${testConfig().queuePrefix}-dispatcher`

/** The file's queues, on a Redis connection of their own named after the file. */
const it = base.extend('queues', { scope: 'file' }, ({ databaseLabel }, { onCleanup }) => {
  const connection = producerConnection(testConfig().redisUrl, `${databaseLabel}-test`, log)
  const queues = openQueues(connection, prefix, log)
  onCleanup(async () => {
    await closeQueues(queues)
    connection.disconnect()
  })
  return queues
})

it.override({ databaseLabel: 'dispatcher' })

async function addRows(db: Db, count: number, queue: 'address' | 'production' = 'address') {
  const rows = await db
    .insert(outbox)
    .values(
      Array.from({ length: count }, (_, i) => ({
        queue,
        jobName: queue === 'address' ? 'normalize-address' : 'produce-letter',
        payload: { letterId: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}` },
      })),
    )
    .returning({ id: outbox.id })
  return rows.map((row) => row.id)
}

const unsent = async (db: Db, ids: string[]) => (await db.select().from(outbox).where(inArray(outbox.id, ids))).filter((row) => row.sentAt === null)

describe('OutboxDispatcher', () => {
  it('adds each row as a job whose id is the row id, with ids only as payload, and marks the rows sent', async ({ database: db, queues }) => {
    const ids = [...(await addRows(db, 3)), ...(await addRows(db, 2, 'production'))]
    const dispatcher = new OutboxDispatcher(db, queues, log)
    expect(await dispatcher.dispatchOnce()).toBe(5)
    for (const id of ids.slice(0, 3)) {
      const job = await queues.address.getJob(id)
      expect(job).toMatchObject({ id, name: 'normalize-address', data: { letterId: expect.any(String) } })
      expect(job?.opts.attempts).toBe(5)
    }
    expect(await queues.production.getJob(ids[3]!)).toMatchObject({ name: 'produce-letter' })
    expect(await unsent(db, ids)).toEqual([])
    expect(await dispatcher.dispatchOnce()).toBe(0)
  })

  it('leaves unsent a row whose job the registry does not know, or puts on another queue, and sends the rest', async ({ database: db, queues }) => {
    const good = await addRows(db, 1)
    const strays = await db
      .insert(outbox)
      .values([
        { queue: 'address', jobName: 'paint-letter', payload: { letterId: '00000000-0000-4000-8000-000000000001' } },
        { queue: 'production', jobName: 'normalize-address', payload: { letterId: '00000000-0000-4000-8000-000000000002' } },
        { queue: 'elsewhere', jobName: 'produce-letter', payload: { letterId: '00000000-0000-4000-8000-000000000003' } },
      ])
      .returning({ id: outbox.id })
    const dispatcher = new OutboxDispatcher(db, queues, log)
    expect(await dispatcher.dispatchOnce()).toBe(1)
    expect(await unsent(db, good)).toEqual([])
    expect(
      (
        await unsent(
          db,
          strays.map((row) => row.id),
        )
      )
        .map((row) => row.jobName)
        .sort(),
    ).toEqual(['normalize-address', 'paint-letter', 'produce-letter'])
    for (const { id } of strays) expect(await queues.production.getJob(id)).toBeUndefined()
    await db.delete(outbox).where(
      inArray(
        outbox.id,
        strays.map((row) => row.id),
      ),
    )
  })

  it('is not held up by a whole batch of stray rows written before the good ones', async ({ database: db, queues }) => {
    const strays = await db
      .insert(outbox)
      .values(Array.from({ length: 5 }, () => ({ queue: 'address', jobName: 'paint-letter', payload: { letterId: '00000000-0000-4000-8000-000000000009' } })))
      .returning({ id: outbox.id })
    const good = await addRows(db, 2)
    expect(await new OutboxDispatcher(db, queues, log, { batchSize: 5 }).dispatchOnce()).toBe(2)
    expect(await unsent(db, good)).toEqual([])
    expect(
      await unsent(
        db,
        strays.map((row) => row.id),
      ),
    ).toHaveLength(5)
    await db.delete(outbox).where(
      inArray(
        outbox.id,
        strays.map((row) => row.id),
      ),
    )
  })

  it('leaves the rows unsent while Redis is unreachable, and sends them once it is back', async ({ database: db, queues }) => {
    const ids = await addRows(db, 4)
    const deadConnection = producerConnection('redis://127.0.0.1:1', 'dead', log)
    const deadQueues = openQueues(deadConnection, prefix, log)
    await expect(new OutboxDispatcher(db, deadQueues, log, { sendTimeoutMs: 300 }).dispatchOnce()).rejects.toThrow()
    expect(await unsent(db, ids)).toHaveLength(4)
    await closeQueues(deadQueues).catch(() => {})
    deadConnection.disconnect()

    expect(await new OutboxDispatcher(db, queues, log).dispatchOnce()).toBe(4)
    expect(await unsent(db, ids)).toEqual([])
  })

  it('shares the rows among dispatchers running at once, each sent exactly once', async ({ database: db, queues }) => {
    const ids = await addRows(db, 600)
    const dispatchers = Array.from({ length: 5 }, () => new OutboxDispatcher(db, queues, log, { batchSize: 50 }))
    const sent = await Promise.all(
      dispatchers.map(async (dispatcher) => {
        let total = 0
        for (let n = await dispatcher.dispatchOnce(); n > 0; n = await dispatcher.dispatchOnce()) total += n
        return total
      }),
    )
    expect(sent.reduce((sum, n) => sum + n, 0)).toBe(600)
    const rows = await db.select({ attempts: outbox.attempts, sentAt: outbox.sentAt }).from(outbox).where(inArray(outbox.id, ids))
    expect(rows.every((row) => row.attempts === 1 && row.sentAt !== null)).toBe(true)
    const jobs = await Promise.all(ids.map((id) => queues.address.getJob(id)))
    expect(jobs.every((job) => job !== undefined)).toBe(true)
  })

  it('runs in the background until stopped, picking up new rows', async ({ database: db, queues }) => {
    const dispatcher = new OutboxDispatcher(db, queues, log, { idleMs: 20 })
    dispatcher.start()
    const ids = await addRows(db, 3)
    await expect.poll(async () => (await unsent(db, ids)).length, { timeout: 3000, interval: 20 }).toBe(0)
    await dispatcher.stop()
    const afterStop = await addRows(db, 1)
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(await unsent(db, afterStop)).toHaveLength(1)
  })
})
