import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect } from 'vitest'
import { sql } from 'drizzle-orm'
import { printsIn } from '../support/floor-processes.js'
import { reachStatus, type Pipeline } from '../support/pipeline.js'
import { startFloorProcess, type ServiceProcess } from '../support/processes.js'
import { it as base } from '../support/fixtures.js'

/** The worker process's connections carry this name, so the test terminates them and no others. */
const applicationName = `floor-drop-${Math.random().toString(36).slice(2, 8)}`

const it = base.extend({ pipelineOptions: { label: 'drop', production: false } })

let worker: ServiceProcess | undefined
let floorDir: string
beforeAll(async () => {
  floorDir = await mkdtemp(join(tmpdir(), 'letters-drop-prints-'))
})
afterAll(async () => {
  await worker?.kill()
  await rm(floorDir, { recursive: true, force: true })
})

const workerBackends = async (pipeline: Pipeline, where: 'any' | 'waiting on a lock') =>
  (
    await pipeline.app.db.execute<{ pid: number }>(sql`
    SELECT pid FROM pg_stat_activity
    WHERE application_name = ${applicationName} AND (${where === 'any'} OR wait_event_type = 'Lock')`)
  ).length

/** What a failover or a pooler restart does to the worker: every one of its backends terminated. */
async function terminateWorkerBackends(pipeline: Pipeline): Promise<number> {
  const rows = await pipeline.app.db.execute<{ terminated: boolean }>(sql`
    SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity WHERE application_name = ${applicationName}`)
  return rows.filter((row) => row.terminated).length
}

describe('the floor when its Postgres connections drop', () => {
  it('prints each file once when the connections drop after the printer took a file and before the letter is marked printed', async ({ pipeline }) => {
    const log = join(floorDir, 'prints.log')
    const gate = join(floorDir, 'envelope.gate')
    // The printer takes the file (logged), then keeps the command busy: a card for a moment, an
    // envelope until the test opens the gate, so that the worker's next write comes only once the
    // test holds the letter's row, however slow the machine.
    const command = `echo {file} >> '${log}'; case {file} in *envelope.pdf) while [ ! -e '${gate}' ]; do sleep 0.05; done;; *) sleep 0.5;; esac`
    worker = await startFloorProcess(pipeline.config, { PRINT_COMMAND: command, PGAPPNAME: applicationName })
    const ids: string[] = []
    for (let round = 0; round < 3; round++) {
      await rm(gate, { force: true })
      const id = await pipeline.send()
      ids.push(id)
      const card = join(pipeline.config.artifactsDir, id, 'card.pdf')
      const envelope = join(pipeline.config.artifactsDir, id, 'envelope.pdf')

      // 1. While the printer holds the card: the worker has nothing to say to Postgres yet.
      await expect.poll(async () => (await printsIn(log)).has(card), { timeout: 15_000, interval: 10 }).toBe(true)
      expect(await terminateWorkerBackends(pipeline)).toBeGreaterThan(0)

      // 2. Once the printer took the envelope, the letter's row is held so that the worker's next
      // write waits, and its connections are dropped right there.
      await expect.poll(async () => (await printsIn(log)).has(envelope), { timeout: 15_000, interval: 10 }).toBe(true)
      await pipeline.app.db.transaction(async (tx) => {
        // NO KEY: the envelope's hand-over record, still open, holds the row FOR KEY SHARE.
        await tx.execute(sql`SELECT 1 FROM letters WHERE id = ${id} FOR NO KEY UPDATE`)
        await writeFile(gate, '')
        await expect.poll(() => workerBackends(pipeline, 'waiting on a lock'), { timeout: 10_000, interval: 10 }).toBeGreaterThan(0)
        expect(await terminateWorkerBackends(pipeline)).toBeGreaterThan(0)
      })
      await reachStatus(pipeline, id, 'printed', 30_000)
    }

    const prints = await printsIn(log)
    expect(Object.fromEntries(prints)).toEqual(
      Object.fromEntries(
        ids
          .flatMap((id) => [join(pipeline.config.artifactsDir, id, 'card.pdf'), join(pipeline.config.artifactsDir, id, 'envelope.pdf')])
          .map((file) => [file, 1]),
      ),
    )
    for (const id of ids) expect((await pipeline.card(id)).events.filter((event) => event.status === 'printed')).toHaveLength(1)
    // The worker lived through it all.
    expect(worker.alive(), worker.output()).toBe(true)
    expect(await workerBackends(pipeline, 'any')).toBeGreaterThan(0)
  }, 150_000)
})
