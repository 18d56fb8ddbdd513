import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { describe, expect } from 'vitest'
import { inArray } from 'drizzle-orm'
import { Redis } from 'ioredis'
import { ledgerEntries, letters, outbox } from '@letters/db'
import { metrics } from '@letters/observability'
import { it as base } from '../support/fixtures.js'
import { reachStatus } from '../support/pipeline.js'
import { freePort } from '../support/processes.js'
import { until } from '../support/wait.js'

/**
 * This test stops Redis, so it runs a Redis server of its own (the one other test files share
 * must stay up). It needs the redis-server binary, which the machines CI runs on have.
 */
const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0

/** A Redis server of this file's own, on a free port; `stop` kills it, `start` brings an empty one back on that port. */
// eslint-disable-next-line no-empty-pattern -- a fixture lists what it uses in an object pattern: here, nothing
const it = base.extend('redisServer', { scope: 'file' }, async ({}, { onCleanup }) => {
  const port = await freePort()
  let redis: ChildProcess | undefined
  const server = {
    port,
    get running() {
      return redis !== undefined
    },
    async start() {
      redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
      for (let tries = 0; ; tries++) {
        const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
        probe.on('error', () => {})
        const up = await probe.connect().then(
          () => true,
          () => false,
        )
        probe.disconnect()
        if (up) return
        if (tries === 100) throw new Error(`redis-server did not start on port ${port}`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    },
    async stop() {
      const stopping = redis!
      stopping.kill('SIGKILL')
      await once(stopping, 'exit')
      redis = undefined
    },
  }
  const kill = () => {
    redis?.kill('SIGKILL')
  }
  await server.start().catch((error: unknown) => {
    kill()
    throw error
  })
  onCleanup(kill)
  return server
})
// The pipeline's Redis is that server: its cleanup closes the pipeline first, then kills the server.
it.override('pipelineOptions', ({ redisServer }) => ({ label: 'outage', env: { REDIS_URL: `redis://127.0.0.1:${redisServer.port}` } }))

/** Failed rounds of the outbox dispatchers in this process (the pipeline's and its address worker's). */
const dispatchFailures = async () => (await metrics.backgroundLoopFailures.get()).values.find((value) => value.labels.loop === 'outbox dispatch')?.value ?? 0

describe.skipIf(!hasRedisServer)('Redis stopped while letters are created', () => {
  // Redis is back before the pipeline closes, whatever the test left it in.
  it.afterAll(async ({ redisServer }) => {
    if (!redisServer.running) await redisServer.start()
  })

  // It starts and stops Redis and waits for letters to be dispatched and printed: its waits' ceilings (30 + 15 + 60 s) are under this.
  it('takes the letters, keeps their jobs in the outbox, and dispatches each once Redis is back', { timeout: 120_000 }, async ({ pipeline, redisServer }) => {
    const before = await pipeline.send()
    await reachStatus(pipeline, before, 'printed', 30_000)

    await redisServer.stop()
    const ids: string[] = []
    for (let i = 0; i < 5; i++) ids.push(await pipeline.send({ message: `Carta escrita sin Redis, número ${i}` }))
    const charges = await pipeline.app.db.select().from(ledgerEntries).where(inArray(ledgerEntries.letterId, ids))
    expect(charges.map((entry) => entry.kind)).toEqual(Array(5).fill('charge'))
    // The dispatchers keep trying; nothing is marked sent while Redis is away. Three more failed
    // rounds: more than the two dispatchers can have had under way once the letters were
    // written, so at least one round took these letters' rows and failed.
    const failedBefore = await dispatchFailures()
    await until('three failed rounds of the outbox dispatchers', async () => (await dispatchFailures()) >= failedBefore + 3, { timeoutMs: 15_000 })
    const waiting = await pipeline.app.db
      .select()
      .from(outbox)
      .where(
        inArray(
          outbox.id,
          (await pipeline.app.db.select({ id: outbox.id, payload: outbox.payload }).from(outbox))
            .filter((row) => ids.includes(row.payload.letterId!))
            .map((row) => row.id),
        ),
      )
    expect(waiting.map((row) => [row.jobName, row.sentAt])).toEqual(Array(5).fill(['normalize-address', null]))
    const statuses = await pipeline.app.db.select({ status: letters.status }).from(letters).where(inArray(letters.id, ids))
    expect(statuses.map((row) => row.status)).toEqual(Array(5).fill('received'))

    // An empty Redis comes back on the same port, as after a restart without persistence.
    await redisServer.start()
    const cards = await Promise.all(ids.map((id) => reachStatus(pipeline, id, 'printed', 60_000)))
    for (const card of cards) expect(card.events.map((event) => event.status)).toEqual(['received', 'ready_for_print', 'printing', 'printed'])
    const jobs = (await pipeline.app.db.select().from(outbox)).filter((row) => ids.includes(row.payload.letterId!))
    expect(jobs.map((row) => row.jobName).sort()).toEqual([...Array(5).fill('normalize-address'), ...Array(5).fill('produce-letter')])
    expect(jobs.every((row) => row.sentAt !== null && row.attempts === 1)).toBe(true)
    const entries = await pipeline.app.db.select().from(ledgerEntries).where(inArray(ledgerEntries.letterId, ids))
    expect(entries.map((entry) => entry.kind)).toEqual(Array(5).fill('charge'))
    expect(await pipeline.spooled()).toEqual(expect.arrayContaining(ids.flatMap((id) => [`${id}.card.pdf`, `${id}.envelope.pdf`])))
  })
})
