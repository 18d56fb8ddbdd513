import { sql, type SQL } from 'drizzle-orm'
import { letterStatuses, type LetterStatus } from '@letters/contracts'
import { enqueue, literalListSql, type Tx } from '@letters/db'
import { moveLetter } from './move.js'
import { unreconciledRestoreSql } from './restores.js'
import { jobOfStatus, resumableStatuses, type ResumableStatus } from './transitions.js'

/**
 * Letter statuses as SQL literals rather than parameters (literalListSql), so the planner can use
 * a partial index (letters_needs_look_idx, letters_in_flight_idx). Only names of the status list
 * are ever written here.
 */
export function statusListSql(statuses: readonly LetterStatus[]): SQL {
  for (const status of statuses) if (!(letterStatuses as readonly string[]).includes(status)) throw new Error(`not a letter status: ${status}`)
  return literalListSql(statuses)
}

/**
 * Stuck, as one condition for everything that looks for it (the reconciler, the letters_stuck
 * gauge, the ops list and retry): the letter of the `letters` row named `alias` waits in a
 * resumable status and has not changed for longer than `afterMs` (RECONCILE_AFTER_MS), or since
 * before a restore not reconciled yet (its job may have gone with the restore). One bound on
 * `updated_at`, so letters_status_updated_idx serves it.
 */
export function withoutProgressSql(alias: string, afterMs: number): SQL {
  const l = sql.identifier(alias)
  return sql`(${l}.status IN ${statusListSql(resumableStatuses)} AND ${l}.updated_at < GREATEST(now() - ${afterMs} * interval '1 millisecond', ${unreconciledRestoreSql}))`
}

/** The event a resumed letter gets: client-visible, so it says what happened, never why. */
export const RESUMED_DETAIL = 'Reanudada tras una incidencia interna'

/**
 * Resumes a letter where it is: the same status again under its row lock (its event, and a new
 * `updated_at`, so no other round takes it), and a new job for that status, in the caller's
 * transaction. Twice is harmless: the workers only move a letter from the status they expect,
 * and the floor fences a second run with its print claim.
 */
export async function resumeLetter(tx: Tx, letterId: string, status: ResumableStatus): Promise<void> {
  await moveLetter(tx, letterId, { from: status, to: status, detail: RESUMED_DETAIL })
  await enqueue(tx, { name: jobOfStatus[status], data: { letterId } })
}
