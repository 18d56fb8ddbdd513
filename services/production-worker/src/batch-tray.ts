import { and, eq, sql } from 'drizzle-orm'
import { stocksOf, type InkColor, type Stocks, type VerifiedAddress } from '@letters/contracts'
import { letters, printBatches, printBatchLetters, printBatchMove, printBatchStatus, type Db, type PrintBatchStatus, type Tx } from '@letters/db'
import { presorted } from './batch-files.js'

/** PRINTER=batch: when the open batch closes (BATCH_MAX_LETTERS, BATCH_MAX_WAIT_MS). */
export interface BatchRules {
  maxLetters: number
  maxWaitMs: number
}

/** The batch a letter is in, if any: one per letter, ever (print_batch_letters' key). */
export async function batchOf(
  db: Db,
  letterId: string,
): Promise<{ batchId: string; status: PrintBatchStatus; sequence: number | null; letterCount: number } | undefined> {
  const [row] = await db
    .select({ batchId: printBatchLetters.batchId, status: printBatches.status, sequence: printBatchLetters.sequence, letterCount: printBatches.letterCount })
    .from(printBatchLetters)
    .innerJoin(printBatches, eq(printBatches.id, printBatchLetters.batchId))
    .where(eq(printBatchLetters.letterId, letterId))
  return row
}

/**
 * `added`: the letter is in the open batch now (`closed`: it filled it, which closed it).
 * `already_batched`: an earlier run had put it in one. `superseded`: the letter is no longer
 * printing under the run's claim; nothing changed.
 */
export type TrayOutcome = { outcome: 'added'; batchId: string; closed: boolean } | { outcome: 'already_batched' | 'superseded' }

/**
 * Puts a printing letter in the open batch of its stocks (opening one if there is none), fenced
 * like a handoff: only while `claim` is still the letter's print claim, whose row stays
 * share-locked until the letter is in, so a newer claim waits and then finds it batched. Every
 * worker adds to the one open batch of those stocks, under its row lock; the letter that fills
 * it closes it. A batch holds one card stock, one envelope stock and one ink: the floor loads
 * one of each (the ink is a plotter's pen).
 */
export async function putInTray(db: Db, letterId: string, claim: number, rules: BatchRules): Promise<TrayOutcome> {
  try {
    return await db.transaction(async (tx) => {
      const [letter] = await tx
        .select({ status: letters.status, printClaim: letters.printClaim, printSpec: letters.printSpec, inkColor: letters.inkColor })
        .from(letters)
        .where(eq(letters.id, letterId))
        .for('share')
      if (letter?.status !== 'printing' || letter.printClaim !== claim) return { outcome: 'superseded' as const }
      // A letter's job run again once the letter is in a batch changes nothing, and opens no tray:
      // with its batch closed, one would be opened for it and left empty.
      const [member] = await tx.select({ letterId: printBatchLetters.letterId }).from(printBatchLetters).where(eq(printBatchLetters.letterId, letterId))
      if (member) return { outcome: 'already_batched' as const }
      const batchId = await openBatch(tx, { ...stocksOf(letter.printSpec), inkColor: letter.inkColor })
      const [added] = await tx.insert(printBatchLetters).values({ batchId, letterId }).onConflictDoNothing().returning({ letterId: printBatchLetters.letterId })
      // Batched meanwhile by another run of its job: whatever this one opened is rolled back.
      if (!added) throw new BatchedMeanwhile()
      const [batch] = await tx
        .update(printBatches)
        .set({ letterCount: sql`${printBatches.letterCount} + 1` })
        .where(eq(printBatches.id, batchId))
        .returning({ letterCount: printBatches.letterCount })
      const full = (batch?.letterCount ?? 0) >= rules.maxLetters
      if (full) await closeBatch(tx, batchId)
      return { outcome: 'added' as const, batchId, closed: full }
    })
  } catch (error) {
    if (error instanceof BatchedMeanwhile) return { outcome: 'already_batched' as const }
    throw error
  }
}

/** Thrown inside putInTray's transaction to roll it back: the letter went into a batch through another run. */
class BatchedMeanwhile extends Error {}

/** What the floor loads for a batch: its stocks and its ink. */
type Tray = Stocks & { inkColor: InkColor }

/** The open batch of this tray, row-locked for this transaction; opened now if there is none (a unique index allows one per tray). */
async function openBatch(tx: Tx, tray: Tray): Promise<string> {
  for (;;) {
    // FOR UPDATE re-reads a row changed meanwhile: a batch closed while we waited is skipped.
    const [open] = await tx
      .select({ id: printBatches.id })
      .from(printBatches)
      .where(
        and(
          eq(printBatches.status, printBatchStatus.open),
          eq(printBatches.cardStock, tray.cardStock),
          eq(printBatches.envelopeStock, tray.envelopeStock),
          eq(printBatches.inkColor, tray.inkColor),
        ),
      )
      .for('update')
    if (open) return open.id
    // Another worker opening one at the same time: its insert wins, ours does nothing, and the next round finds its batch.
    const [opened] = await tx.insert(printBatches).values(tray).onConflictDoNothing().returning({ id: printBatches.id })
    if (opened) return opened.id
  }
}

/**
 * Closes a batch whose row the transaction holds: it takes no more letters, and its order is
 * fixed (each letter's `sequence`, presorted) before any file is drawn, so every file and every
 * closer that ever works on it agrees.
 */
async function closeBatch(tx: Tx, batchId: string): Promise<void> {
  const members = await tx
    .select({ letterId: printBatchLetters.letterId, code: letters.code, address: letters.address })
    .from(printBatchLetters)
    .innerJoin(letters, eq(letters.id, printBatchLetters.letterId))
    .where(eq(printBatchLetters.batchId, batchId))
  const order = presorted(members.map((member) => ({ ...member, address: member.address as VerifiedAddress })))
  const sequences = order.map((member, index) => ({ letterId: member.letterId, sequence: index + 1 }))
  // Raw SQL kept: UPDATE … FROM jsonb_to_recordset sets every member's sequence in one statement; drizzle's update has no FROM list.
  await tx.execute(sql`
    UPDATE print_batch_letters m SET sequence = s.sequence
    FROM jsonb_to_recordset(${JSON.stringify(sequences)}::jsonb) AS s("letterId" uuid, sequence int)
    WHERE m.batch_id = ${batchId}::uuid AND m.letter_id = s."letterId"`)
  const close = printBatchMove('open', 'closing')
  await tx
    .update(printBatches)
    .set({ status: close.to, closedAt: new Date() })
    .where(and(eq(printBatches.id, batchId), eq(printBatches.status, close.from)))
}

/**
 * Closes every open batch (one per pair of stocks) whose first letter came `maxWaitMs` ago or
 * more; true if it closed any. Safe with several workers (SKIP LOCKED).
 */
export async function closeIfDue(db: Db, rules: BatchRules): Promise<boolean> {
  return db.transaction(async (tx) => {
    const due = await tx
      .select({ id: printBatches.id })
      .from(printBatches)
      .where(and(eq(printBatches.status, printBatchStatus.open), sql`${printBatches.openedAt} <= now() - ${rules.maxWaitMs} * interval '1 millisecond'`))
      .orderBy(printBatches.openedAt)
      .for('update', { skipLocked: true })
    for (const batch of due) await closeBatch(tx, batch.id)
    return due.length > 0
  })
}
