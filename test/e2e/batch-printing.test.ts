import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { and, count, eq, inArray, sql } from 'drizzle-orm'
import { batchFileNames } from '@letters/artifacts'
import { letters, printBatches, printBatchHandoffs, printBatchLetters, type Db } from '@letters/db'
import { batchLetter, expectBatchesAgree, lapseKilledCloserLease } from '../support/batches.js'
import { batchHeldAt, firstHeldGate, loggingCommand, printsIn, processesMentioning } from '../support/floor-processes.js'
import { startPipeline, type Pipeline } from '../support/pipeline.js'
import { startFloorProcess, type ServiceProcess } from '../support/processes.js'

// The first two batches close full. The last one (50 letters) would close once its first letter
// had waited BATCH_MAX_WAIT_MS: the test moves its opening back instead (lastBatchDue), so that
// the wait can be long enough for a hundred letters to be drawn on a loaded machine.
// A short print timeout: a killed closer's batch is taken over once its lease (the print timeout and 30 s) has passed.
const batchEnv = { PRINTER: 'batch', BATCH_MAX_LETTERS: '100', BATCH_MAX_WAIT_MS: '3600000', PRINT_TIMEOUT_MS: '5000' }
const LETTERS = 250
/** The test sends its 250 letters faster than a client may. */
const gatewayEnv = { RATE_LIMIT_MAX: '100000' }

const workers: ServiceProcess[] = []
let floorDir: string | undefined
afterEach(async () => {
  for (const worker of workers.splice(0)) await worker.kill()
  if (floorDir) await rm(floorDir, { recursive: true, force: true })
})

/** 250 letters (enough credits first), sent 25 at a time; their ids. */
async function sendLetters(running: Pipeline): Promise<string[]> {
  const topUp = await running.admin('POST', `/admin/accounts/${running.account.id}/credits`, { amount: 2000, reason: 'lotes' })
  expect(topUp.statusCode, topUp.body).toBe(200)
  const ids: string[] = []
  for (let from = 0; from < LETTERS; from += 25) ids.push(...(await Promise.all(Array.from({ length: 25 }, (_, i) => running.send(batchLetter(from + i))))))
  return ids
}

/** Once every letter of `ids` is in a batch, their open batch is made due, as if its first letter had waited BATCH_MAX_WAIT_MS. */
async function lastBatchDue(db: Db, ids: string[], timeout = 150_000): Promise<void> {
  const inBatches = async () => (await db.select({ n: count() }).from(printBatchLetters).where(inArray(printBatchLetters.letterId, ids)))[0]!.n
  await expect.poll(inBatches, { timeout, interval: 500 }).toBe(LETTERS)
  const theirs = db.select({ id: printBatchLetters.batchId }).from(printBatchLetters).where(inArray(printBatchLetters.letterId, ids))
  const due = await db
    .update(printBatches)
    .set({ openedAt: sql`now() - interval '2 hours'` })
    .where(and(eq(printBatches.status, 'open'), inArray(printBatches.id, theirs)))
    .returning({ id: printBatches.id })
  expect(due).toHaveLength(1)
}

const printedCount = async (running: Pipeline, ids: string[]) =>
  (await running.app.db.select({ status: letters.status }).from(letters).where(inArray(letters.id, ids))).filter((row) => row.status === 'printed').length

describe('batch printing (PRINTER=batch) on the running pipeline', () => {
  it(
    'prints 250 letters in 3 presorted batches (100, 100, 50) whose three files agree, each letter in one batch',
    { timeout: 180_000 },
    async ({ onTestFinished }) => {
      // A pipeline of the test's own (each test wants other options), closed after the test's workers are killed.
      const pipeline = await startPipeline('batch', { env: { ...batchEnv, ...gatewayEnv } })
      onTestFinished(() => pipeline.close())
      const ids = await sendLetters(pipeline)
      await lastBatchDue(pipeline.app.db, ids)
      await expect.poll(() => printedCount(pipeline, ids), { timeout: 150_000, interval: 500 }).toBe(LETTERS)
      expect(await expectBatchesAgree(pipeline.app.db, () => pipeline.spoolDir, ids)).toEqual([100, 100, 50])
      // Nothing else reached the spool: no letter's own files, only the batches'.
      expect((await pipeline.spooled()).every((name) => name.startsWith('batch-'))).toBe(true)
      expect(await pipeline.spooled()).toHaveLength(9)
    },
  )

  // 250 letters drawn by two worker processes and three batches built: 20-30 s alone, several
  // times that on a loaded machine. Each wait below has a ceiling that only a hang reaches.
  it(
    'with two workers, one killed (SIGKILL) while it hands a batch over: no letter in two batches or none, no file printed twice',
    { timeout: 900_000 },
    async ({ onTestFinished }) => {
      const pipeline = await startPipeline('batchkill', { env: gatewayEnv, production: false })
      onTestFinished(() => pipeline.close())
      floorDir = await mkdtemp(join(tmpdir(), 'letters-batch-prints-'))
      const log = join(floorDir, 'prints.log')
      const names = [`batch-a-${Math.random().toString(36).slice(2, 8)}`, `batch-b-${Math.random().toString(36).slice(2, 8)}`]
      // Each worker's printer takes a batch's cards at once and holds its envelopes at the worker's
      // own gate, closed until the kill: the worker killed is mid-batch, and cannot print meanwhile.
      const gates = names.map((name) => join(floorDir!, `${name}.gate`))
      // The print timeout as in production (two minutes), not batchEnv's five seconds: the kill
      // must land while the command holds the envelopes, and on a loaded machine the test's look
      // at the gates and the locks before it can take longer than five seconds, in which case the
      // worker would end the command itself first and let go of its batch. The killed closer's
      // lease, which that timeout lengthens, is ended by hand once the worker is gone.
      for (const [i, name] of names.entries())
        workers.push(
          await startFloorProcess(pipeline.config, {
            ...batchEnv,
            PRINT_TIMEOUT_MS: '120000',
            PRINT_COMMAND: loggingCommand(log, { gate: gates[i], envelopesOnly: true }),
            PGAPPNAME: name,
          }),
        )
      const ids = await sendLetters(pipeline)
      const db = pipeline.app.db

      // The first batch's cards are with the printer and recorded; its closer holds the envelopes.
      await expect.poll(() => firstHeldGate(gates), { timeout: 600_000, interval: 20 }).toBeGreaterThanOrEqual(0)
      const killed = await firstHeldGate(gates)
      const holders = await db.execute<{ name: string }>(sql`
      SELECT a.application_name AS name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.classid = 727013 AND l.granted`)
      expect(
        holders.map((holder) => holder.name),
        'the held worker holds its batch',
      ).toContain(names[killed])
      await workers[killed]!.kill()
      // The killed worker's batch had its cards handed over, and only those.
      const killedBatch = await batchHeldAt(gates[killed]!)
      expect(killedBatch).toBeDefined()
      const handedAtKill = await db.select({ file: printBatchHandoffs.file }).from(printBatchHandoffs).where(eq(printBatchHandoffs.batchId, killedBatch!))
      expect(handedAtKill.map((handoff) => handoff.file)).toEqual([batchFileNames(killedBatch!).cards])
      // The watchdog ends the killed worker's print commands; then the printers answer again. A
      // command it missed would hold the envelopes until the gate opens, and print them then.
      await expect.poll(() => processesMentioning(gates[killed]!), { timeout: 60_000, interval: 20 }).toEqual([])
      for (const gate of gates) await writeFile(gate, '')
      // The dead closer's lease still keeps its batch from the survivor; its time passes now.
      expect(await lapseKilledCloserLease(db, killedBatch!, names[killed]!), 'the killed closer still held its lease').toBe(true)

      await lastBatchDue(db, ids, 600_000)
      await expect.poll(() => printedCount(pipeline, ids), { timeout: 600_000, interval: 500 }).toBe(LETTERS)
      // The command printed the artifact store's copies: those are the files checked.
      expect(await expectBatchesAgree(db, (batchId) => join(pipeline.config.artifactsDir, 'batches', batchId), ids)).toEqual([100, 100, 50])
      const prints = await printsIn(log)
      expect(prints.size).toBe(9)
      expect(
        [...prints.values()].every((count) => count === 1),
        JSON.stringify([...prints]),
      ).toBe(true)
      // The survivor finished the batch the killed worker had begun.
      const finished = await db.select({ file: printBatchHandoffs.file }).from(printBatchHandoffs).where(eq(printBatchHandoffs.batchId, killedBatch!))
      expect(finished).toHaveLength(3)
    },
  )
})
