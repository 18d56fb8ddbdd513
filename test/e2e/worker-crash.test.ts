import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect } from 'vitest'
import { eq, inArray } from 'drizzle-orm'
import { ledgerEntries, letters, outbox } from '@letters/db'
import { CommandPrinter } from '@letters/production-worker/printer'
import { ADMIN_TOKEN } from '../support/context.js'
import { heldAtGate, loggingCommand, printsIn, processesMentioning } from '../support/floor-processes.js'
import { reachStatus, type Pipeline } from '../support/pipeline.js'
import { startFloorProcess, type ServiceProcess } from '../support/processes.js'
import { it as base } from '../support/fixtures.js'

const it = base.extend({ pipelineOptions: { label: 'crash', production: false } })

let child: ServiceProcess | undefined
/** Where the print commands of this file write their log (one line per print) and nothing else. */
let floorDir: string
beforeAll(async () => {
  floorDir = await mkdtemp(join(tmpdir(), 'letters-crash-prints-'))
})
// A test that fails part-way leaves no floor process behind to take the next test's letters.
afterEach(async () => {
  await child?.kill()
  child = undefined
})
afterAll(async () => {
  await rm(floorDir, { recursive: true, force: true })
})

const printFilesOf = (pipeline: Pipeline, id: string): [card: string, envelope: string] => [
  join(pipeline.config.artifactsDir, id, 'card.pdf'),
  join(pipeline.config.artifactsDir, id, 'envelope.pdf'),
]

/**
 * How long a wait on the floor may last before the test gives up on it: a process started, a
 * letter drawn and printed, a job taken over once its lock has lapsed. Each takes seconds alone
 * and several times that on a loaded machine; only a wait that never ends reaches this.
 */
const FLOOR_WAIT_MS = 120_000
// Each test gives itself 400 s: a few of those waits, which take 10-15 s in all alone.

describe('a production worker killed in the middle of a job', () => {
  it('loses no letter and charges none twice: another worker takes the jobs over and prints them once', async ({ pipeline }) => {
    // Its printer holds each file at a closed gate: the kill lands while the letters are in its
    // hands, however long the machine takes to get them there.
    const gate = join(floorDir, 'in-its-hands.gate')
    child = await startFloorProcess(pipeline.config, { PRINT_COMMAND: loggingCommand(join(floorDir, 'in-its-hands.log'), { gate }) })
    const ids = await Promise.all([pipeline.send(), pipeline.send(), pipeline.send()])
    // It works on two at a time: two letters printing, the third waiting in the queue.
    await expect.poll(() => heldAtGate(gate), { timeout: FLOOR_WAIT_MS, interval: 50 }).toBe(2)
    expect(
      (await pipeline.app.db.select({ status: letters.status }).from(letters).where(inArray(letters.id, ids))).filter((row) => row.status === 'printing')
        .length,
    ).toBe(2)

    await child.kill()
    child = undefined
    const held = await pipeline.app.db.select({ status: letters.status }).from(letters).where(inArray(letters.id, ids))
    expect(held.map((row) => row.status).sort()).toEqual(['printing', 'printing', 'ready_for_print'])

    // A surviving worker finds the dead one's jobs once their locks expire.
    pipeline.startProductionWorker({ stalledIntervalMs: 300 })
    for (const id of ids) {
      const card = await reachStatus(pipeline, id, 'printed', FLOOR_WAIT_MS)
      const statuses = card.events.map((event) => event.status)
      expect(statuses.filter((status) => status === 'printed')).toHaveLength(1)
      expect(statuses.slice(0, 3)).toEqual(['received', 'ready_for_print', 'printing'])
      const entries = await pipeline.app.db.select().from(ledgerEntries).where(eq(ledgerEntries.letterId, id))
      expect(entries.map((entry) => [entry.kind, entry.amount])).toEqual([['charge', -3]])
    }
    const resumed = (await Promise.all(ids.map((id) => pipeline.card(id)))).filter((card) =>
      card.events.some((event) => event.detail === 'En producción de nuevo: el intento anterior no terminó'),
    )
    expect(resumed).toHaveLength(2)
    expect(await pipeline.balance()).toBe(1000 - 3 * 3)
    expect(await pipeline.spooled()).toEqual(ids.flatMap((id) => [`${id}.card.pdf`, `${id}.envelope.pdf`]).sort())
  }, 400_000)

  it('marks a letter failed, for ops, when its job has been abandoned more often than allowed', async ({ pipeline }) => {
    // The worker the test before started, if it got that far.
    await pipeline.productionWorker?.close()
    // The kill lands while its printer holds the letter's card at a closed gate.
    const gate = join(floorDir, 'abandoned.gate')
    child = await startFloorProcess(pipeline.config, { PRINT_COMMAND: loggingCommand(join(floorDir, 'abandoned.log'), { gate }) })
    const id = await pipeline.send()
    await expect.poll(() => heldAtGate(gate), { timeout: FLOOR_WAIT_MS, interval: 50 }).toBe(1)
    expect((await pipeline.card(id)).status).toBe('printing')
    await child.kill()
    child = undefined
    // No second chance: BullMQ fails the job without running it, and the letter must not stay `printing`.
    pipeline.startProductionWorker({ stalledIntervalMs: 300, maxStalledCount: 0 })
    const failed = await reachStatus(pipeline, id, 'failed', FLOOR_WAIT_MS)
    expect(failed.events.map((event) => event.status)).toEqual(['received', 'ready_for_print', 'printing', 'failed'])
    const entries = await pipeline.app.db.select().from(ledgerEntries).where(eq(ledgerEntries.letterId, id))
    expect(entries.map((entry) => entry.kind)).toEqual(['charge'])
  }, 400_000)

  it('prints each file once when a worker is killed while its print command runs: the command dies with it', async ({ pipeline }) => {
    await pipeline.productionWorker?.close()
    const log = join(floorDir, 'first-kill.log')
    const gate = join(floorDir, 'first-kill.gate')
    await writeFile(gate, '')
    const command = loggingCommand(log, { gate })
    child = await startFloorProcess(pipeline.config, { PRINT_COMMAND: command })
    const ids = await Promise.all(Array.from({ length: 10 }, () => pipeline.send()))
    // Once a few files are out, the printer stops answering. The worker takes two jobs at a time:
    // once both of its commands hold a file, neither job is between its printer's answer and
    // the record of the handoff (a moment no worker can die in without printing again), and the
    // kill lands with both files in the printer's hands.
    await expect.poll(async () => [...(await printsIn(log)).values()].length >= 6, { timeout: FLOOR_WAIT_MS, interval: 20 }).toBe(true)
    await rm(gate)
    await expect.poll(() => heldAtGate(gate), { timeout: FLOOR_WAIT_MS, interval: 20 }).toBe(2)
    await child.kill()
    child = undefined
    // The watchdog kills the command's group as soon as the worker's end of its pipe closes. A
    // command it missed would hold its file until the gate opens below, and print it then.
    await expect.poll(() => processesMentioning(log), { timeout: FLOOR_WAIT_MS, interval: 20 }).toEqual([])

    // The worker restarted, the printer answering again: it takes the dead one's jobs over once
    // their locks expire.
    await writeFile(gate, '')
    child = await startFloorProcess(pipeline.config, { PRINT_COMMAND: command })
    for (const id of ids) await reachStatus(pipeline, id, 'printed', FLOOR_WAIT_MS)
    const prints = await printsIn(log)
    expect([...prints.keys()].sort()).toEqual(ids.flatMap((id) => printFilesOf(pipeline, id)).sort())
    expect([...prints.values()].filter((count) => count !== 1)).toEqual([])
    await child.kill()
    child = undefined
  }, 400_000)

  it('prints only the envelope when ops retry a letter whose workers both died while its envelope was printing', async ({ pipeline }) => {
    const log = join(floorDir, 'second-kill.log')
    // The card prints at once; the envelope is held until the test opens the gate, which it
    // never does for these two workers: each kill lands on the envelope.
    const gate = join(floorDir, 'second-kill.gate')
    const command = loggingCommand(log, { gate, envelopesOnly: true })

    child = await startFloorProcess(pipeline.config, { PRINT_COMMAND: command })
    const id = await pipeline.send()
    const [cardFile, envelopeFile] = printFilesOf(pipeline, id)
    await expect.poll(() => heldAtGate(gate), { timeout: FLOOR_WAIT_MS, interval: 20 }).toBe(1)
    expect(Object.fromEntries(await printsIn(log))).toEqual({ [cardFile]: 1 })
    await child.kill()

    // A second worker takes it over, and dies on the envelope too.
    child = await startFloorProcess(pipeline.config, { PRINT_COMMAND: command })
    await expect.poll(() => heldAtGate(gate), { timeout: FLOOR_WAIT_MS, interval: 20 }).toBe(2)
    expect((await pipeline.card(id)).events.filter((event) => event.status === 'printing')).toHaveLength(2)
    await child.kill()
    child = undefined
    await expect.poll(() => processesMentioning(log), { timeout: FLOOR_WAIT_MS, interval: 20 }).toEqual([])

    // Abandoned twice, the job fails for good and the letter waits for ops.
    pipeline.startProductionWorker({ stalledIntervalMs: 300, printer: new CommandPrinter(loggingCommand(log), 10_000) })
    await reachStatus(pipeline, id, 'failed', FLOOR_WAIT_MS)
    const [row] = (await pipeline.app.db.select().from(outbox).where(eq(outbox.jobName, 'produce-letter'))).filter((job) => job.payload.letterId === id)
    await expect.poll(async () => (await pipeline.app.queues.production.getJob(row!.id))?.getState(), { timeout: FLOOR_WAIT_MS, interval: 20 }).toBe('failed')
    const retried = await pipeline.app.inject({
      method: 'PUT',
      url: `/ops/queues/api/queues/production/${row!.id}/retry`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    })
    expect(retried.statusCode, retried.body).toBe(204)
    const printed = await reachStatus(pipeline, id, 'printed', FLOOR_WAIT_MS)
    expect(printed.events.slice(-2).map((event) => event.status)).toEqual(['printing', 'printed'])
    expect(Object.fromEntries(await printsIn(log))).toEqual({ [cardFile]: 1, [envelopeFile]: 1 })
    expect(await processesMentioning(log)).toEqual([])
  }, 400_000)
})
