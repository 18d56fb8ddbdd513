import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { eq, inArray } from 'drizzle-orm'
import { databaseRestores, dropDatabase, ensureDatabase, ledgerEntries, letters } from '@letters/db'
import { JOURNAL_PRINTED_DETAIL } from '@letters/letters'
import { startPipeline, type Pipeline } from '../support/pipeline.js'

const run = promisify(execFile)

// Long: what brings the restored letters back must be the restore's own reconciliation, not this wait.
const RECONCILE_AFTER_MS = 600_000

const workDir = await mkdtemp(join(tmpdir(), 'letters-restore-'))

const restoredUrls: string[] = []
// One artifact store for the pipeline before and after the restore, as a deployment keeps it.
const baseEnv = {
  RECONCILE_AFTER_MS: String(RECONCILE_AFTER_MS),
  RECONCILE_INTERVAL_MS: '500',
}

const opened: Pipeline[] = []
afterAll(async () => {
  for (const pipeline of opened.splice(0)) await pipeline.close().catch(() => undefined)
  for (const url of restoredUrls) await dropDatabase(url).catch(() => undefined)
  await rm(workDir, { recursive: true, force: true })
})

const statusesOf = async (pipeline: Pipeline, ids: string[]) =>
  new Map(
    (await pipeline.app.db.select({ id: letters.id, status: letters.status }).from(letters).where(inArray(letters.id, ids))).map((row) => [row.id, row.status]),
  )

/** Each file the printer took, with how many times: `<letterId>.card.pdf` → 1. */
async function printedFiles(printLog: string): Promise<Map<string, number>> {
  const lines = (await readFile(printLog, 'utf8').catch(() => '')).trim().split('\n').filter(Boolean)
  const counts = new Map<string, number>()
  for (const path of lines) {
    const name = path.split('/').slice(-2).join('.')
    counts.set(name, (counts.get(name) ?? 0) + 1)
  }
  return counts
}

/** The floor as each mode runs it: a letter's own files, or batches of four (the batch's three files). */
interface FloorMode {
  mode: string
  env: { PRINTER?: string } & Record<string, string>
  /** Whether the one `printed` event of a letter printed after the dump says what it should. */
  printedDetail: (detail: string | null) => boolean
}
const modes: FloorMode[] = [
  { mode: 'letter by letter', env: {}, printedDetail: (detail: string | null) => detail === JOURNAL_PRINTED_DETAIL },
  {
    mode: 'PRINTER=batch',
    env: { PRINTER: 'batch', BATCH_MAX_LETTERS: '4', BATCH_MAX_WAIT_MS: '300' },
    // The journal's event, or its batch's when the restored database knew the batch and its closer finished it.
    printedDetail: (detail: string | null) =>
      /^Entregada a la impresora en el lote [0-9a-f-]{36} \(n\.º \d+ de \d+\)(, según el diario de impresión)?$/.test(detail ?? ''),
  },
]

describe('a database restored from a dump taken under traffic, with an empty queue prefix', () => {
  it.for(modes)(
    'prints again none of the letters printed after the dump, marks them printed, and resumes the rest at once ($mode)',
    { timeout: 180_000 },
    async ({ env: modeEnv, printedDetail }) => {
      const mode = modeEnv.PRINTER ?? 'pdf'
      const printLog = join(workDir, `prints-${mode}.log`)
      const env = {
        ...baseEnv,
        ...modeEnv,
        ARTIFACTS_DIR: join(workDir, `artifacts-${mode}`),
        // Every file the printer takes is a line of the print log: a second copy would show. A
        // short pause, so that letters are at every stage when the dump starts.
        PRINT_COMMAND: `sleep 0.2 && echo {file} >> ${printLog}`,
      }
      const restoredUrl = inject('databaseUrl').replace(/\/([^/]*)$/, (_, name: string) => `/${name}_restored_${randomBytes(3).toString('hex')}`)
      restoredUrls.push(restoredUrl)
      const before = await startPipeline('before-restore', { reconcile: true, env })
      opened.push(before)

      // Printed before the dump: in the dump as printed.
      const early = await Promise.all(Array.from({ length: 4 }, () => before.send()))
      await expect.poll(async () => [...(await statusesOf(before, early)).values()].every((status) => status === 'printed'), { timeout: 30_000 }).toBe(true)

      // Under traffic: letters on their way when the dump starts.
      const flowing = await Promise.all(Array.from({ length: 16 }, () => before.send()))
      await expect
        .poll(async () => [...(await statusesOf(before, flowing)).values()].filter((status) => status === 'printed').length, { timeout: 30_000, interval: 20 })
        .toBeGreaterThanOrEqual(2)
      const dumpFile = join(workDir, `letters-${mode}.dump`)
      await run('pg_dump', ['--format=custom', `--file=${dumpFile}`, before.config.databaseUrl])

      // Acknowledged after the dump: lost with it, as any dump loses them.
      const afterDump = await Promise.all(Array.from({ length: 3 }, () => before.send()))
      const known = [...early, ...flowing]
      await expect
        .poll(async () => [...(await statusesOf(before, [...known, ...afterDump])).values()].every((status) => status === 'printed'), { timeout: 60_000 })
        .toBe(true)
      const printedOnce = await printedFiles(printLog)
      expect([...printedOnce].filter(([, times]) => times > 1)).toEqual([])
      if (!modeEnv.PRINTER) {
        for (const id of [...known, ...afterDump]) {
          expect(printedOnce.get(`${id}.card.pdf`), id).toBe(1)
          expect(printedOnce.get(`${id}.envelope.pdf`), id).toBe(1)
        }
      }
      await before.close()
      opened.splice(opened.indexOf(before), 1)

      // The restore: the dump into a new database; the processes start again on it with a queue prefix nobody used.
      await ensureDatabase(restoredUrl)
      await run('pg_restore', ['--no-owner', `--dbname=${restoredUrl}`, dumpFile])
      const after = await startPipeline('after-restore', { reconcile: true, env: { ...env, DATABASE_URL: restoredUrl } })
      opened.push(after)
      const restoredAt = Date.now()

      // What the dump held of the letters: the ones not printed in it are what a restore would print again.
      const inDump = await statusesOf(after, known)
      const printedSinceDump = known.filter((id) => inDump.get(id) !== 'printed')
      expect(printedSinceDump.length, `statuses in the dump: ${JSON.stringify([...inDump.values()])}`).toBeGreaterThan(0)
      expect((await statusesOf(after, afterDump)).size).toBe(0)

      await expect.poll(async () => [...(await statusesOf(after, known)).values()].every((status) => status === 'printed'), { timeout: 60_000 }).toBe(true)
      const settledInMs = Date.now() - restoredAt
      expect(settledInMs).toBeLessThan(RECONCILE_AFTER_MS)

      // Nothing went to the printer twice, and nothing printed after the restore: every letter was on paper already.
      const printedAfter = await printedFiles(printLog)
      expect([...printedAfter].filter(([, times]) => times > 1)).toEqual([])
      expect(printedAfter).toEqual(printedOnce)

      for (const id of printedSinceDump) {
        // The account is the one in the dump, not the one the restored pipeline opened: looked at as ops.
        const card = (await after.admin('GET', `/admin/cards/${id}`)).json<{ events: Array<{ status: string; detail: string | null }> }>()
        const printedEvents = card.events.filter((event) => event.status === 'printed')
        expect(printedEvents, JSON.stringify(card.events)).toHaveLength(1)
        expect(printedDetail(printedEvents[0]!.detail), printedEvents[0]!.detail ?? '').toBe(true)
        const entries = await after.app.db.select({ kind: ledgerEntries.kind }).from(ledgerEntries).where(eq(ledgerEntries.letterId, id))
        expect(entries.map((entry) => entry.kind)).toEqual(['charge'])
      }
      // The reconciler found the restore by its watermark, and reconciled what it left waiting.
      const restores = await after.app.db.select().from(databaseRestores)
      expect(restores.map((restore) => restore.source)).toEqual(['watermark'])
      await expect.poll(async () => (await after.app.db.select().from(databaseRestores))[0]?.reconciledAt, { timeout: 10_000 }).not.toBeNull()
      console.info(
        'restore figures',
        JSON.stringify({
          mode,
          letters: known.length,
          printedSinceDump: printedSinceDump.length,
          lostWithTheDump: afterDump.length,
          reprinted: [...printedAfter].filter(([, times]) => times > 1).length,
          settledInMs,
        }),
      )
    },
  )
})
