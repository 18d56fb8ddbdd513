import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eq, inArray } from 'drizzle-orm'
import { ledgerEntries, letters } from '@letters/db'
import { reachStatus, startPipeline, type Pipeline } from '../support/pipeline.js'

const repositoryRoot = fileURLToPath(new URL('../..', import.meta.url))

let pipeline: Pipeline
let child: ChildProcess | undefined
beforeAll(async () => {
  pipeline = await startPipeline('crash', { production: false })
})
afterAll(async () => {
  child?.kill('SIGKILL')
  await pipeline.close()
})

/** Starts the worker process; resolves once it consumes the production queue. */
async function startWorkerProcess(env: Record<string, string>) {
  const { config } = pipeline
  const started = spawn(process.execPath, ['--import', 'tsx', 'test/support/production-worker-process.ts'], {
    cwd: repositoryRoot,
    env: { ...process.env, DATABASE_URL: config.databaseUrl, REDIS_URL: config.redisUrl, QUEUE_PREFIX: config.queuePrefix, ARTIFACTS_DIR: config.artifactsDir, LOG_LEVEL: 'silent', SEED_DEMO: 'false', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const [line] = (await once(started.stdout!, 'data')) as [Buffer]
  expect(line.toString()).toBe('consuming\n')
  return started
}

describe('a production worker killed in the middle of a job', () => {
  it('loses no letter and charges none twice: another worker takes the jobs over and prints them once', async () => {
    // Its printer takes five seconds per file: the kill lands while the letters are in its hands.
    child = await startWorkerProcess({ PRINT_COMMAND: 'sleep 5 && test -f {file}' })
    const ids = await Promise.all([pipeline.send(), pipeline.send(), pipeline.send()])
    // It works on two at a time: two letters printing, the third waiting in the queue.
    await expect.poll(async () => (await pipeline.app.db.select({ status: letters.status }).from(letters).where(inArray(letters.id, ids))).filter((row) => row.status === 'printing').length, { timeout: 10_000, interval: 50 }).toBe(2)

    child.kill('SIGKILL')
    await once(child, 'exit')
    child = undefined
    const held = await pipeline.app.db.select({ status: letters.status }).from(letters).where(inArray(letters.id, ids))
    expect(held.map((row) => row.status).sort()).toEqual(['printing', 'printing', 'ready_for_print'])

    // A surviving worker finds the dead one's jobs once their locks expire.
    pipeline.startProductionWorker({ stalledIntervalMs: 300 })
    for (const id of ids) {
      const card = await reachStatus(pipeline, id, 'printed', 20_000)
      const statuses = card.events.map((event) => event.status)
      expect(statuses.filter((status) => status === 'printed')).toHaveLength(1)
      expect(statuses.slice(0, 3)).toEqual(['received', 'ready_for_print', 'printing'])
      const entries = await pipeline.app.db.select().from(ledgerEntries).where(eq(ledgerEntries.letterId, id))
      expect(entries.map((entry) => [entry.kind, entry.amount])).toEqual([['charge', -3]])
    }
    const resumed = (await Promise.all(ids.map((id) => pipeline.card(id)))).filter((card) => card.events.some((event) => event.detail === 'En producción de nuevo: el intento anterior no terminó'))
    expect(resumed).toHaveLength(2)
    expect(await pipeline.balance()).toBe(1000 - 3 * 3)
    expect(await pipeline.spooled()).toEqual(ids.flatMap((id) => [`${id}.card.pdf`, `${id}.envelope.pdf`]).sort())
  })

  it('marks a letter failed, for ops, when its job has been abandoned more often than allowed', async () => {
    await pipeline.productionWorker!.close()
    child = await startWorkerProcess({ PRINT_COMMAND: 'sleep 5 && test -f {file}' })
    const id = await pipeline.send()
    await reachStatus(pipeline, id, 'printing')
    child.kill('SIGKILL')
    await once(child, 'exit')
    child = undefined
    // No second chance: BullMQ fails the job without running it, and the letter must not stay `printing`.
    pipeline.startProductionWorker({ stalledIntervalMs: 300, maxStalledCount: 0 })
    const failed = await reachStatus(pipeline, id, 'failed', 20_000)
    expect(failed.events.map((event) => event.status)).toEqual(['received', 'ready_for_print', 'printing', 'failed'])
    const entries = await pipeline.app.db.select().from(ledgerEntries).where(eq(ledgerEntries.letterId, id))
    expect(entries.map((entry) => entry.kind)).toEqual(['charge'])
  })
})
