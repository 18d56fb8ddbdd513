import { and, inArray, isNull, sql } from 'drizzle-orm'
import type { PrintJournal } from '@letters/artifacts'
import { databaseRestores, restoreWatermark, type Db } from '@letters/db'

/**
 * Raises the database's watermark and copies it to the artifact store; when the store's copy is
 * ahead, the database went back in time (a restore, a promoted replica that had not caught up):
 * the restore is recorded, and every letter waiting for a job since before it counts as stuck
 * until a reconciliation has looked at them all. The store's copy is written only after the
 * database's count committed, so it is never ahead otherwise.
 */
export async function watchForRestore(db: Db, journal: PrintJournal, log: { warn(details: object, message: string): void }): Promise<void> {
  const seen = await journal.watermark()
  const counter = await db.transaction(async (tx) => {
    const [row] = await tx.select({ counter: restoreWatermark.counter }).from(restoreWatermark).for('update')
    const current = row?.counter ?? 0
    if (seen > current) {
      await tx.insert(databaseRestores).values({ source: 'watermark', databaseCounter: current, journalCounter: seen })
      log.warn(
        { databaseCounter: current, journalCounter: seen },
        'the database is behind the print journal: it was restored; the letters it left waiting are reconciled now',
      )
    }
    const next = Math.max(current, seen) + 1
    await tx
      .insert(restoreWatermark)
      .values({ counter: next })
      .onConflictDoUpdate({ target: restoreWatermark.singleton, set: { counter: next } })
    return next
  })
  await journal.setWatermark(counter)
}

/** Ops say the database was restored (`letters reconcile`): every letter waiting now is looked at. */
export async function recordRestoreByOps(db: Db): Promise<void> {
  await db.insert(databaseRestores).values({ source: 'ops' })
}

/** The restores not reconciled yet. */
export async function pendingRestores(db: Db): Promise<string[]> {
  const rows = await db.select({ id: databaseRestores.id }).from(databaseRestores).where(isNull(databaseRestores.reconciledAt))
  return rows.map((row) => row.id)
}

/** A reconciliation looked at every letter these restores left waiting. */
export async function markRestoresReconciled(db: Db, ids: string[]): Promise<void> {
  await db
    .update(databaseRestores)
    .set({ reconciledAt: sql`now()` })
    .where(and(inArray(databaseRestores.id, ids), isNull(databaseRestores.reconciledAt)))
}

/** The latest restore not reconciled yet, as SQL: a letter waiting since before it is stuck. Null when there is none. */
export const unreconciledRestoreSql = sql`(SELECT max(${databaseRestores.detectedAt}) FROM ${databaseRestores} WHERE ${databaseRestores.reconciledAt} IS NULL)`
