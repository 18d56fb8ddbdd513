// Scheduled and test letters under faults: an attack that held (Redis keys lost, five clocks, cancels and terminated connections with scheduled and test letters in flight).
// It hung in some runs, a cancel request never settling: postgres.js let a transaction whose backend was terminated go on writing to its
// connection once the pool had reconnected it (patches/postgres+3.4.9.patch; packages/db/test/dropped-connections.test.ts).
import { readdir } from 'node:fs/promises'
import { describe, expect } from 'vitest'
import { and, eq, inArray, sql } from 'drizzle-orm'
import postgres from 'postgres'
import { letterEvents, letters } from '@letters/db'
import { LetterClock, RELEASED_DETAIL } from '@letters/pipeline'
import { it as base } from '../support/fixtures.js'
import { issueTestKey } from '../support/gateway.js'
import { silentLog } from '../support/pipeline.js'
import { deleteKeys } from '../support/redis-keys.js'
import { singleLetter } from '../support/factories.js'
import { moneyState } from '@letters/test/support/ledger'

const it = base.extend({
  pipelineOptions: {
    label: 'rtfaults',
    reconcile: true,
    env: { TEST_MAILED_AFTER_MS: '500', CLOCK_INTERVAL_MS: '200', RECONCILE_AFTER_MS: '3000', RECONCILE_INTERVAL_MS: '1000' },
  },
})

const DAY = 86_400_000

describe('scheduled and test letters through Redis key loss, racing clocks, cancels and dropped connections', () => {
  it('releases each scheduled letter once or cancels it, never prints a test letter, and the ledger agrees', { timeout: 150_000 }, async ({ pipeline }) => {
    const { app, account } = pipeline
    const testKey = await issueTestKey(app, account.id)
    const body = (sendAt?: string) => singleLetter(account, { message: 'Hola', address: 'C/ Mayor 1', province: '', ...(sendAt ? { sendAt } : {}) })
    const create = async (apiKey: string, sendAt?: string) => {
      const answer = await app.inject({ method: 'POST', url: '/single', headers: { 'x-api-key': apiKey }, payload: body(sendAt) })
      expect(answer.statusCode, answer.body).toBe(200)
      return answer.json<{ cardId: string }>().cardId
    }
    const later = new Date(Date.now() + DAY).toISOString()
    const scheduledLive = await Promise.all(Array.from({ length: 20 }, () => create(account.apiKey, later)))
    const scheduledTest = await Promise.all(Array.from({ length: 20 }, () => create(testKey, later)))
    const testNow = await Promise.all(Array.from({ length: 10 }, () => create(testKey)))
    const liveNow = await Promise.all(Array.from({ length: 5 }, () => create(account.apiKey)))

    // Redis loses every key of the prefix while letters are in flight.
    await deleteKeys(pipeline.config.redisUrl, `${pipeline.config.queuePrefix}:*`)
    // Four more clocks, cancels racing them, and the gateway's connections terminated during the releases.
    const clocks = Array.from({ length: 4 }, () => new LetterClock(app.db, silentLog, { intervalMs: 20, testMailedAfterMs: 500 }))
    clocks.forEach((clock) => clock.start())
    const admin = postgres(pipeline.config.databaseUrl, { max: 1, onnotice: () => {} })
    await app.db
      .update(letters)
      .set({ sendAt: sql`now()` })
      .where(inArray(letters.id, [...scheduledLive, ...scheduledTest]))
    const cancels = await Promise.all(
      [...scheduledLive.slice(0, 10), ...scheduledTest.slice(0, 10)].map(async (id, n) => {
        if (n % 5 === 0)
          await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`
        const key = scheduledLive.includes(id) ? account.apiKey : testKey
        return (await app.inject({ method: 'DELETE', url: `/cards/${id}`, headers: { 'x-api-key': key } })).statusCode
      }),
    )
    await admin.end()
    await Promise.all(clocks.map((clock) => clock.stop()))
    const all = [...scheduledLive, ...scheduledTest, ...testNow, ...liveNow]
    const final = (id: string) => (scheduledLive.includes(id) || liveNow.includes(id) ? ['printed', 'cancelled'] : ['mailed', 'cancelled'])
    await expect
      .poll(
        async () => {
          const rows = await app.db.select({ id: letters.id, status: letters.status }).from(letters).where(inArray(letters.id, all))
          return rows.filter((row) => !final(row.id).includes(row.status)).map((row) => `${row.status}`)
        },
        { timeout: 120_000, interval: 500 },
      )
      .toEqual([])
    console.log(`### cancels: ${JSON.stringify(cancels)}`)
    const releases = await app.db
      .select({ id: letterEvents.letterId })
      .from(letterEvents)
      .where(and(inArray(letterEvents.letterId, [...scheduledLive, ...scheduledTest]), eq(letterEvents.detail, RELEASED_DETAIL)))
    const perLetter = new Map<string, number>()
    for (const { id } of releases) perLetter.set(id, (perLetter.get(id) ?? 0) + 1)
    expect([...perLetter.values()].every((count) => count === 1)).toBe(true)
    const rows = await app.db.select({ id: letters.id, status: letters.status }).from(letters).where(inArray(letters.id, all))
    for (const row of rows)
      if (row.status !== 'cancelled' && (scheduledLive.includes(row.id) || scheduledTest.includes(row.id))) expect(perLetter.get(row.id)).toBe(1)
    const spool = (await readdir(pipeline.spoolDir).catch(() => [] as string[])).filter((name) => !name.startsWith('.'))
    for (const id of [...scheduledTest, ...testNow]) expect(spool.filter((file) => file.startsWith(id))).toEqual([])
    for (const row of rows.filter((r) => r.status === 'printed'))
      expect(spool.filter((file) => file.startsWith(row.id)).sort()).toEqual([`${row.id}.card.pdf`, `${row.id}.envelope.pdf`])
    // The reconciler re-queues address jobs after the Redis loss, so the outbox check of expectLedgerMatchesLetters does not apply: the money only.
    const state = await moneyState(app.db, account.id)
    expect(state.entries.reduce((sum, entry) => sum + entry.amount, 0)).toBe(state.balance)
    expect(state.charges.map((c) => c.letterId).sort()).toEqual(
      state.letters
        .filter((l) => l.livemode)
        .map((l) => l.id)
        .sort(),
    )
    const refunds = state.entries.filter((e) => e.kind !== 'charge' && e.letterId)
    expect(refunds.map((e) => e.letterId).sort()).toEqual(
      rows
        .filter((r) => r.status === 'cancelled' && scheduledLive.includes(r.id))
        .map((r) => r.id)
        .sort(),
    )
    const cancelledLive = rows.filter((r) => r.status === 'cancelled' && scheduledLive.includes(r.id)).length
    expect(state.balance).toBe(1000 - 3 * (25 - cancelledLive))
    console.log(
      `### statuses: ${JSON.stringify(rows.reduce<Record<string, number>>((acc, r) => ({ ...acc, [r.status]: (acc[r.status] ?? 0) + 1 }), {}))}, spool files ${spool.length}, releases ${releases.length}`,
    )
  })
})
