import { UnrecoverableError } from 'bullmq'
import { eq, sql, TransactionRollbackError } from 'drizzle-orm'
import type { Logger } from 'pino'
import { PrintJournal } from '@letters/artifacts'
import { letters, printBatches, printBatchHandoffs, printBatchStatus, printHandoffs, type Db, type Tx } from '@letters/db'
import { metrics } from '@letters/observability'
import type { PrintFile } from './printer.js'
import type { Floor } from './floor.js'
import { withTries } from './tries.js'

/**
 * The files of a letter the printer has accepted, under any claim: its handoff rows, and the
 * print journal's records, which outlive a database restored from before them (those are
 * recorded again as rows). `fromJournal`: files only the journal knew.
 */
export async function handedOverFiles(floor: Pick<Floor, 'db' | 'store'>, letterId: string): Promise<{ handed: Set<string>; fromJournal: number }> {
  const rows = await floor.db.select({ file: printHandoffs.file }).from(printHandoffs).where(eq(printHandoffs.letterId, letterId))
  const handed = new Set(rows.map((row) => row.file))
  const journaled = (await new PrintJournal(floor.store).letterRecords(letterId)).filter((record) => !handed.has(record.file))
  if (journaled.length > 0) {
    await floor.db
      .insert(printHandoffs)
      .values(journaled.map((record) => ({ letterId, file: record.file, claim: record.claim, printer: record.printer, handedAt: new Date(record.at) })))
      .onConflictDoNothing()
    for (const record of journaled) handed.add(record.file)
  }
  return { handed, fromJournal: journaled.length }
}

type Handoff = typeof printHandoffs.$inferInsert

/** `superseded`: the letter is no longer printing under the run's claim; nothing was handed over. */
export type HandoffOutcome = 'handed' | 'already_handed' | 'superseded'

/** What a file's hand-over is about: a letter's own file, or a batch's. */
type HandoffSubject = { file: string; letterId: string } | { file: string; batchId: string }

interface RecordFirst {
  what: HandoffSubject
  /** Inserts the file's record if absent; true when this call inserted it. */
  record: (ex: Db | Tx) => Promise<boolean>
  /** Under the record's lock: false when the run was superseded (nothing is handed over); may throw to refuse outright. */
  stillOurs: (tx: Tx) => Promise<boolean>
  /** Writes the file's record in the print journal, once the printer took it. */
  journal: () => Promise<void>
}

const JOURNAL_TRIES = 3

/**
 * The print journal's record of a file the printer took, before its handoff row commits. A
 * journal that cannot be written does not fail the print (the row is still the record the
 * floor goes by): it is logged and counted, for ops to see what a restore could print again.
 */
async function journalHandoff(step: RecordFirst, log: Logger): Promise<void> {
  try {
    await withTries(() => step.journal(), { attempts: JOURNAL_TRIES, pauseMs: 100 })
  } catch (err) {
    metrics.printJournalWriteFailures.inc()
    log.error({ err, ...step.what }, 'could not write the print journal record of a file the printer took')
  }
}

/**
 * The record-first hand-over of one file, once whatever the number of runs: the file's record is
 * inserted first and stays uncommitted (locked) while the printer works, so another run reaching
 * the same file waits for this one, then finds it recorded and skips it; if this one fails or
 * dies, the record goes with it and the other run prints. The fence is checked once the record
 * is ours, so a superseded run hands over nothing more. Both waits are bounded by the print
 * timeout plus a margin.
 */
async function handOverRecordFirst(floor: Floor, file: PrintFile, step: RecordFirst): Promise<HandoffOutcome> {
  const { db, printer, log } = floor
  let printing: Promise<void> | undefined
  // Written as soon as the printer took the file, whatever becomes of the database meanwhile.
  let journaled: Promise<void> | undefined
  try {
    return await db.transaction(async (tx) => {
      const patience = String(floor.printTimeoutMs + 30_000)
      // Raw SQL kept: set_config (this transaction's own timeouts), which drizzle has no builder for.
      await tx.execute(sql`SELECT set_config('statement_timeout', ${patience}, true), set_config('idle_in_transaction_session_timeout', ${patience}, true)`)
      if (!(await step.record(tx))) return 'already_handed'
      if (!(await step.stillOurs(tx))) tx.rollback()
      printing = printer.print(file)
      journaled = printing.then(
        () => journalHandoff(step, log),
        () => undefined,
      )
      await printing
      await journaled
      return 'handed'
    })
  } catch (error) {
    if (error instanceof TransactionRollbackError) return 'superseded'
    if (!printing) throw error
    // The transaction is gone (its connection dropped: postgres.js gives up on it at once, even
    // while the printer is still at work), the file may be on paper: the printer's answer decides.
    try {
      await recordWhilePrinting(db, printing, step.record, step.what, log)
    } finally {
      await journaled
    }
    return 'handed'
  }
}

/**
 * Hands one file of a letter to the printer for the run holding `claim` (the fence: the letter
 * still `printing` under that claim). `files`: every file of the run, for the journal.
 */
export async function handOver(floor: Floor, letterId: string, claim: number, file: PrintFile, files: string[]): Promise<HandoffOutcome> {
  const handoff: Handoff = { letterId, file: file.name, claim, printer: floor.printer.name }
  return handOverRecordFirst(floor, file, {
    what: { letterId, file: file.name },
    journal: () => new PrintJournal(floor.store).recordLetterFile({ letterId, file: file.name, files, claim, printer: floor.printer.name }, file.data),
    record: async (ex) => (await ex.insert(printHandoffs).values(handoff).onConflictDoNothing().returning({ file: printHandoffs.file })).length > 0,
    stillOurs: async (tx) => {
      const [letter] = await tx
        .select({ status: letters.status, printClaim: letters.printClaim, livemode: letters.livemode })
        .from(letters)
        .where(eq(letters.id, letterId))
      if (letter?.status !== 'printing' || letter.printClaim !== claim) return false
      // produceLetter never hands a test letter over; this makes sure no caller ever does.
      if (!letter.livemode) throw new UnrecoverableError(`letter ${letterId} is a test letter: it never reaches the printer`)
      return true
    },
  })
}

/**
 * The files of a batch the printer has accepted: its handoff rows and the print journal's records
 * (handedOverFiles). A journal record counts only for the batch as the database holds it now
 * (`letterIds`, its letters): one listing other letters (the database restored from before the
 * batch took its last letters, which it has since taken again or not) is refused, for ops to
 * look at, rather than taken to have printed letters it never held.
 */
export async function handedOverBatchFiles(floor: Pick<Floor, 'db' | 'store'>, batchId: string, letterIds: readonly string[]): Promise<Set<string>> {
  const rows = await floor.db.select({ file: printBatchHandoffs.file }).from(printBatchHandoffs).where(eq(printBatchHandoffs.batchId, batchId))
  const handed = new Set(rows.map((row) => row.file))
  const records = await new PrintJournal(floor.store).batchRecords(batchId)
  const members = [...letterIds].sort().join(',')
  const other = records.find((record) => [...record.letterIds].sort().join(',') !== members)
  if (other) {
    throw new UnrecoverableError(
      `the print journal has batch ${batchId} handed over with ${other.letterIds.length} letters, the database with ${letterIds.length} others: not printed again; ops must look at it`,
    )
  }
  const journaled = records.filter((record) => !handed.has(record.file))
  if (journaled.length > 0) {
    await floor.db
      .insert(printBatchHandoffs)
      .values(journaled.map((record) => ({ batchId, file: record.file, printer: record.printer, handedAt: new Date(record.at) })))
      .onConflictDoNothing()
    for (const record of journaled) handed.add(record.file)
  }
  return handed
}

/** handOver for a file of a batch (PRINTER=batch): the fence is the batch being still `closing` (not yet handed), as a letter's is its print claim. */
export async function handOverBatchFile(
  floor: Floor,
  batchId: string,
  file: PrintFile,
  batch: { files: string[]; letterIds: string[] },
): Promise<HandoffOutcome> {
  const handoff = { batchId, file: file.name, printer: floor.printer.name }
  return handOverRecordFirst(floor, file, {
    what: { batchId, file: file.name },
    journal: () => new PrintJournal(floor.store).recordBatchFile({ batchId, file: file.name, printer: floor.printer.name, ...batch }, file.data),
    record: async (ex) => (await ex.insert(printBatchHandoffs).values(handoff).onConflictDoNothing().returning({ file: printBatchHandoffs.file })).length > 0,
    stillOurs: async (tx) => {
      const [batch] = await tx.select({ status: printBatches.status }).from(printBatches).where(eq(printBatches.id, batchId))
      return batch?.status === printBatchStatus.closing
    },
  })
}

/**
 * The record of a file whose transaction dropped while the printer had it: held again at once,
 * uncommitted, on a new connection until the printer answers, so that another run or closer
 * reaching the file meanwhile (its lock went with the old connection) waits for it and then
 * finds it recorded, instead of printing it a second time. If that cannot be done (the database
 * still away when the printer answers), it is recorded then. A printer that fails records nothing.
 */
async function recordWhilePrinting(
  db: Db,
  printing: Promise<void>,
  write: (ex: Db | Tx) => Promise<unknown>,
  what: HandoffSubject,
  log: Logger,
): Promise<void> {
  let answered = false
  printing.then(
    () => (answered = true),
    () => (answered = true),
  )
  // The pool may hand out other connections the same drop closed: tried again until one holds.
  for (let wait = 20; !answered; wait = Math.min(wait * 2, 500)) {
    const held = await db
      .transaction(async (tx) => {
        await write(tx)
        await printing
      })
      .then(
        () => true,
        () => false,
      )
    if (held) return log.info(what, 'recorded a file the printer accepted after the connection dropped')
    await new Promise((resolve) => setTimeout(resolve, wait))
  }
  await printing
  await recordHandoff(() => write(db), what, log)
}

/** How long a lost handoff record is retried (a failover, a pooler restart) before the run gives up. */
const RECORD_PATIENCE_MS = 5 * 60_000
const RECORD_BACKOFF_MAX_MS = 5_000

/**
 * Records a file the printer accepted, whatever the run's claim (it is a fact about the paper).
 * Giving up would print the file again on the next attempt, so a failed write is retried for
 * minutes rather than failing the job; the insert is idempotent, so repeating a write that did
 * commit (its answer lost) does no harm.
 */
async function recordHandoff(write: () => Promise<unknown>, what: HandoffSubject, log: Logger): Promise<void> {
  const deadline = Date.now() + RECORD_PATIENCE_MS
  for (let wait = 100; ; wait = Math.min(wait * 2, RECORD_BACKOFF_MAX_MS)) {
    try {
      await write()
      log.info(what, 'recorded a file the printer accepted after the connection dropped')
      return
    } catch (err) {
      if (Date.now() + wait > deadline) throw err
      log.warn({ err, ...what }, 'could not record a file the printer accepted; retrying')
      await new Promise((resolve) => setTimeout(resolve, wait))
    }
  }
}
