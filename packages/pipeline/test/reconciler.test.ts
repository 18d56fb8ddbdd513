import { describe, expect } from 'vitest'
import { eq, inArray, sql } from 'drizzle-orm'
import { pino } from 'pino'
import { closeDb, createDb, letterEvents, letters, outbox, type Db, type LetterStatus } from '@letters/db'
import { metrics } from '@letters/observability'
import { testConfig } from '@letters/test/support/context'
import { newLetter, type newCompanyData } from '@letters/test/support/factories'
import { it as base } from '@letters/test/support/fixtures'
import { RESUMED_DETAIL } from '@letters/letters'
import { closeQueues, openQueues, producerConnection, Reconciler, type Queues } from '../src/index.js'

const log = pino({ level: 'silent' })
const prefix = `${testConfig().queuePrefix}-reconciler`

/** The file's queues, on a Redis connection of their own named after the file; emptied at the end. */
const it = base.extend('queues', { scope: 'file' }, ({ databaseLabel }, { onCleanup }) => {
  const connection = producerConnection(testConfig().redisUrl, `${databaseLabel}-test`, log)
  const queues = openQueues(connection, prefix, log)
  onCleanup(async () => {
    await Promise.all(Object.values(queues).map((queue) => queue.obliterate({ force: true })))
    await closeQueues(queues)
    connection.disconnect()
  })
  return queues
})

it.override({ databaseLabel: 'reconciler' })

type Owner = { accountId: string; company: Awaited<ReturnType<typeof newCompanyData>> }

const AFTER_MS = 60_000
const longAgo = () => new Date(Date.now() - 10 * 60_000)

it.beforeEach(async ({ database }) => {
  // Each test sees only its own letters: earlier ones leave the pipeline.
  await database.update(letters).set({ status: 'mailed' })
})

const jobFor = {
  received: ['address', 'normalize-address'],
  ready_for_print: ['production', 'produce-letter'],
  printing: ['production', 'produce-letter'],
} as const

/** A letter stuck in `status` since long ago, whose job the outbox has sent (`sent`) or still holds. */
async function stuckLetter(db: Db, { accountId, company }: Owner, status: keyof typeof jobFor, job: { sent: boolean } | 'none' = { sent: true }) {
  const letter = await newLetter(db, accountId, company, { status, updatedAt: longAgo() })
  if (job === 'none') return { id: letter.id, jobId: undefined }
  const [queue, jobName] = jobFor[status]
  const [row] = await db
    .insert(outbox)
    .values({ queue, jobName, payload: { letterId: letter.id }, createdAt: longAgo(), sentAt: job.sent ? longAgo() : null })
    .returning({ id: outbox.id })
  return { id: letter.id, jobId: row!.id }
}

const reconciler = (on: { db: Db; queues: Queues }, options: Partial<ConstructorParameters<typeof Reconciler>[3]> = {}) =>
  new Reconciler(on.db, on.queues, log, { afterMs: AFTER_MS, intervalMs: 60_000, ...options })

async function historyOf(db: Db, id: string) {
  return db
    .select({ status: letterEvents.status, detail: letterEvents.detail })
    .from(letterEvents)
    .where(eq(letterEvents.letterId, id))
    .orderBy(letterEvents.id)
}
async function jobsOf(db: Db, id: string) {
  return db
    .select({ id: outbox.id, queue: outbox.queue, jobName: outbox.jobName, sentAt: outbox.sentAt })
    .from(outbox)
    .where(sql`${outbox.payload} ->> 'letterId' = ${id}`)
    .orderBy(outbox.createdAt)
}
async function reconciledCount(status: LetterStatus) {
  return (await metrics.lettersReconciled.get()).values.find((value) => value.labels.status === status)?.value ?? 0
}

describe('Reconciler', () => {
  it('queues again, through the outbox and with an event, each stuck letter whose job Redis no longer has', async ({ database: db, queues, owner }) => {
    const before = await Promise.all((['received', 'ready_for_print', 'printing'] as const).map(reconciledCount))
    const lost = await Promise.all((['received', 'ready_for_print', 'printing'] as const).map((status) => stuckLetter(db, owner, status)))

    expect(await reconciler({ db, queues }).reconcileOnce()).toBe(3)

    for (const [index, letter] of lost.entries()) {
      const status = (['received', 'ready_for_print', 'printing'] as const)[index]!
      const [row] = await db.select({ status: letters.status, updatedAt: letters.updatedAt }).from(letters).where(eq(letters.id, letter.id))
      expect(row!.status).toBe(status)
      expect(Date.now() - row!.updatedAt.getTime()).toBeLessThan(AFTER_MS)
      expect(await historyOf(db, letter.id)).toEqual([{ status, detail: RESUMED_DETAIL }])
      const jobs = await jobsOf(db, letter.id)
      expect(jobs).toHaveLength(2)
      // The new job waits in the outbox, for the dispatcher, on the queue of the letter's stage.
      expect(jobs[1]).toMatchObject({ queue: jobFor[status][0], jobName: jobFor[status][1], sentAt: null })
    }
    expect(await Promise.all((['received', 'ready_for_print', 'printing'] as const).map(reconciledCount))).toEqual(before.map((count) => count + 1))
    // Done once: the letters made progress (their new job), so the next round leaves them.
    expect(await reconciler({ db, queues }).reconcileOnce()).toBe(0)
  })

  it('leaves a letter whose job is still coming: unsent in the outbox, or waiting, delayed or prioritized in BullMQ', async ({
    database: db,
    queues,
    owner,
  }) => {
    const unsent = await stuckLetter(db, owner, 'received', { sent: false })
    const waiting = await stuckLetter(db, owner, 'received')
    await queues.address.add('normalize-address', { letterId: waiting.id }, { jobId: waiting.jobId })
    const delayed = await stuckLetter(db, owner, 'printing')
    await queues.production.add('produce-letter', { letterId: delayed.id }, { jobId: delayed.jobId, delay: 3_600_000 })
    const prioritized = await stuckLetter(db, owner, 'ready_for_print')
    await queues.production.add('produce-letter', { letterId: prioritized.id }, { jobId: prioritized.jobId, priority: 3 })
    const recent = await newLetter(db, owner.accountId, owner.company, { status: 'ready_for_print' })

    expect(await reconciler({ db, queues }).reconcileOnce()).toBe(0)
    for (const id of [unsent.id, waiting.id, delayed.id, prioritized.id, recent.id]) expect(await historyOf(db, id)).toEqual([])
    expect(await queues.production.getJobState(delayed.jobId!)).toBe('delayed')
  })

  it('queues again a letter whose job completed or failed without moving it, or that has no job at all', async ({ database: db, queues, owner }) => {
    const completed = await stuckLetter(db, owner, 'received')
    const failed = await stuckLetter(db, owner, 'printing')
    const none = await stuckLetter(db, owner, 'ready_for_print', 'none')
    // A worker of this test's own: one job completes, the other fails for good.
    const { Worker } = await import('bullmq')
    const { workerConnection } = await import('../src/index.js')
    const workerRedis = workerConnection(testConfig().redisUrl, 'reconciler-test-worker', log)
    await queues.address.add('normalize-address', { letterId: completed.id }, { jobId: completed.jobId })
    await queues.production.add('produce-letter', { letterId: failed.id }, { jobId: failed.jobId, attempts: 1 })
    const workers = [
      new Worker('address', async () => 'already_done', { connection: workerRedis, prefix }),
      new Worker('production', async () => Promise.reject(new Error('the worker could not mark the letter failed')), { connection: workerRedis, prefix }),
    ]
    try {
      await expect
        .poll(() => Promise.all([queues.address.getJobState(completed.jobId!), queues.production.getJobState(failed.jobId!)]), { timeout: 10_000 })
        .toEqual(['completed', 'failed'])
    } finally {
      await Promise.all(workers.map((worker) => worker.close()))
      workerRedis.disconnect()
    }

    expect(await reconciler({ db, queues }).reconcileOnce()).toBe(3)
    for (const letter of [completed, failed, none]) expect((await historyOf(db, letter.id)).map((event) => event.detail)).toEqual([RESUMED_DETAIL])
    expect((await jobsOf(db, none.id)).map((job) => job.jobName)).toEqual(['produce-letter'])
  })

  it('changes nothing while Redis does not answer', async ({ database: db, queues, owner }) => {
    const lost = await stuckLetter(db, owner, 'ready_for_print')
    const deadConnection = producerConnection('redis://127.0.0.1:1', 'dead', log)
    const deadQueues = openQueues(deadConnection, prefix, log)
    try {
      await expect(reconciler({ db, queues: deadQueues }, { redisTimeoutMs: 500 }).reconcileOnce()).rejects.toThrow()
    } finally {
      await closeQueues(deadQueues).catch(() => {})
      deadConnection.disconnect()
    }
    expect(await historyOf(db, lost.id)).toEqual([])
    expect(await jobsOf(db, lost.id)).toHaveLength(1)
    expect(await reconciler({ db, queues }).reconcileOnce()).toBe(1)
  })

  it('finds lost letters behind more stuck letters than one page holds', async ({ database: db, queues, owner }) => {
    const stillComing = await Promise.all(Array.from({ length: 5 }, () => stuckLetter(db, owner, 'received', { sent: false })))
    // Stuck for less long than the others: they come after them in the scan.
    const lost = await newLetter(db, owner.accountId, owner.company, { status: 'received', updatedAt: new Date(Date.now() - 2 * AFTER_MS) })
    expect(await reconciler({ db, queues }, { batchSize: 2 }).reconcileOnce()).toBe(1)
    expect((await historyOf(db, lost.id)).map((event) => event.detail)).toEqual([RESUMED_DETAIL])
    for (const letter of stillComing) expect(await historyOf(db, letter.id)).toEqual([])
  })

  it('queues each lost letter once when two replicas reconcile at the same time', async ({ database: db, databaseUrl, queues, owner }) => {
    const lost = await Promise.all(Array.from({ length: 24 }, (_, i) => stuckLetter(db, owner, (['received', 'ready_for_print', 'printing'] as const)[i % 3]!)))
    // The second replica: a pool and a Redis connection of its own, as another process has.
    const otherDb = createDb(databaseUrl)
    const otherConnection = producerConnection(testConfig().redisUrl, 'reconciler-test-2', log)
    const otherQueues = openQueues(otherConnection, prefix, log)
    try {
      const replicas = [reconciler({ db, queues }, { batchSize: 5 }), reconciler({ db: otherDb, queues: otherQueues }, { batchSize: 5 })]
      const rounds = await Promise.all([...replicas, ...replicas].map((replica) => replica.reconcileOnce()))
      expect(rounds.reduce((sum, count) => sum + count, 0)).toBe(24)
    } finally {
      await closeQueues(otherQueues)
      otherConnection.disconnect()
      await closeDb(otherDb)
    }
    for (const letter of lost) {
      expect((await historyOf(db, letter.id)).map((event) => event.detail)).toEqual([RESUMED_DETAIL])
      expect(await jobsOf(db, letter.id)).toHaveLength(2)
    }
    const resumedEvents = await db
      .select({ letterId: letterEvents.letterId })
      .from(letterEvents)
      .where(
        inArray(
          letterEvents.letterId,
          lost.map((letter) => letter.id),
        ),
      )
    expect(resumedEvents).toHaveLength(24)
  })
})
