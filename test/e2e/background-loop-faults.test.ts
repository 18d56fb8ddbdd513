import { Writable } from 'node:stream'
import { describe, expect } from 'vitest'
import { pino } from 'pino'
import postgres from 'postgres'
import { metrics } from '@letters/observability'
import { it as base } from '../support/fixtures.js'
import { issueTestKey } from '../support/gateway.js'
import { reachStatus } from '../support/pipeline.js'
import { singleLetter } from '../support/factories.js'

/** The pipeline's log lines, read back: each loop says when it recovered. */
const lines: Array<{ msg: string; loop?: string }> = []
const log = pino(
  { level: 'info' },
  new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as { msg: string })
      done()
    },
  }),
)

const it = base.extend({
  pipelineOptions: {
    label: 'loopfaults',
    reconcile: true,
    log,
    env: { CLOCK_INTERVAL_MS: '100', RECONCILE_INTERVAL_MS: '100', RECONCILE_AFTER_MS: '60000', TEST_MAILED_AFTER_MS: '300' },
  },
})

/** Each background loop of the pipeline, by its name, and the statement its round starts with. */
const loops = {
  'outbox dispatch': `query ILIKE '%from "outbox"%for update skip locked%'`,
  'letter clock': `query ILIKE '%from "letters"%for update skip locked%'`,
  reconciliation: `query ILIKE '%LEFT JOIN LATERAL%'`,
} as const
type LoopName = keyof typeof loops

const failuresOf = async (loop: LoopName) => (await metrics.backgroundLoopFailures.get()).values.find((value) => value.labels.loop === loop)?.value ?? 0

describe('every Postgres backend terminated while the dispatcher, clock and reconciler are in a round', () => {
  it('fails each loop’s round, which is counted; each loop recovers and keeps working', { timeout: 60_000 }, async ({ pipeline }) => {
    const { app, account, config } = pipeline
    const before = Object.fromEntries(await Promise.all(Object.keys(loops).map(async (loop) => [loop, await failuresOf(loop as LoopName)])))

    // Each loop's round is held on a table lock, so that its query is under way when its backend
    // is terminated (an idle connection is just reopened: no round would fail).
    const locker = postgres(config.databaseUrl, { max: 1, onnotice: () => {} })
    const killer = postgres(config.databaseUrl, { max: 1, onnotice: () => {} })
    try {
      const [{ pid: lockerPid }] = await locker<[{ pid: number }]>`SELECT pg_backend_pid() AS pid`
      const held = locker.begin(async (tx) => {
        await tx`LOCK TABLE outbox, letters IN ACCESS EXCLUSIVE MODE`
        const waiting = async () =>
          Promise.all(
            Object.values(loops).map(
              async (where) =>
                (
                  await killer.unsafe<[{ n: number }]>(
                    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND ${where}`,
                  )
                )[0].n > 0,
            ),
          )
        await expect.poll(waiting, { timeout: 10_000, interval: 50 }).toEqual([true, true, true])
        const terminated = await killer`
          SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = current_database() AND backend_type = 'client backend' AND pid NOT IN (pg_backend_pid(), ${lockerPid})`
        expect(terminated.length).toBeGreaterThanOrEqual(3)
      })
      await held
    } finally {
      await locker.end()
      await killer.end()
    }

    for (const loop of Object.keys(loops) as LoopName[]) {
      await expect.poll(() => failuresOf(loop), { timeout: 5000 }).toBeGreaterThan(before[loop])
      await expect.poll(() => lines.some((line) => line.msg === `${loop} recovered`), { timeout: 10_000 }).toBe(true)
    }

    // Still working: a live letter made after the fault is dispatched and printed; a test one is
    // "posted" by the clock.
    const body = singleLetter(account, { message: 'Hola después del corte', address: 'C/ Mayor 1', province: '' })
    const live = await app.inject({ method: 'POST', url: '/single', headers: { 'x-api-key': account.apiKey }, payload: body })
    expect(live.statusCode, live.body).toBe(200)
    const testKey = await issueTestKey(app, account.id)
    const test = await app.inject({ method: 'POST', url: '/single', headers: { 'x-api-key': testKey }, payload: body })
    expect(test.statusCode, test.body).toBe(200)
    await reachStatus(pipeline, live.json<{ cardId: string }>().cardId, 'printed', 30_000)
    const testCard = `/cards/${test.json<{ cardId: string }>().cardId}`
    const testStatus = async () => (await app.inject({ method: 'GET', url: testCard, headers: { 'x-api-key': testKey } })).json<{ status: string }>().status
    await expect.poll(testStatus, { timeout: 30_000, interval: 100 }).toBe('mailed')
  })
})
