import { and, eq } from 'drizzle-orm'
import type { Logger } from 'pino'
import { letters, printHandoffs, type Db } from '@letters/db'

/** What a print run may do with its next file. */
export type HandoffTurn = 'hand_over' | 'already_handed' | 'superseded'

/** The files of a letter the printer has accepted, under any claim. */
export async function handedOverFiles(db: Db, letterId: string): Promise<Set<string>> {
  const rows = await db.select({ file: printHandoffs.file }).from(printHandoffs).where(eq(printHandoffs.letterId, letterId))
  return new Set(rows.map((row) => row.file))
}

/**
 * Asked right before a file goes to the printer: whether the run holding `claim` may hand it
 * over. Not while the letter is no longer printing under that claim (another run took it over,
 * or it was marked failed), nor once the file is recorded.
 */
export async function handoffTurn(db: Db, letterId: string, claim: number, file: string): Promise<HandoffTurn> {
  const [row] = await db
    .select({ status: letters.status, printClaim: letters.printClaim, handed: printHandoffs.file })
    .from(letters)
    .leftJoin(printHandoffs, and(eq(printHandoffs.letterId, letters.id), eq(printHandoffs.file, file)))
    .where(eq(letters.id, letterId))
  if (!row || row.status !== 'printing' || row.printClaim !== claim) return 'superseded'
  return row.handed ? 'already_handed' : 'hand_over'
}

export interface Handoff {
  letterId: string
  file: string
  claim: number
  printer: string
}

/** How long a handoff record is retried (a failover, a pooler restart) before the run gives up. */
const RECORD_PATIENCE_MS = 5 * 60_000
const RECORD_BACKOFF_MAX_MS = 5_000

/**
 * Records that the printer accepted a file, whatever the run's claim (it is a fact about the
 * paper). Giving up would print the file again on the next attempt, so a failed write is
 * retried for minutes rather than failing the job; the insert is idempotent, so a write that
 * committed but whose answer was lost does no harm when repeated.
 */
export async function recordHandoff(db: Db, handoff: Handoff, log: Logger, patienceMs = RECORD_PATIENCE_MS): Promise<void> {
  const deadline = Date.now() + patienceMs
  for (let wait = 100; ; wait = Math.min(wait * 2, RECORD_BACKOFF_MAX_MS)) {
    try {
      await db.insert(printHandoffs).values(handoff).onConflictDoNothing()
      return
    } catch (err) {
      if (Date.now() + wait > deadline) throw err
      log.warn({ err, letterId: handoff.letterId, file: handoff.file }, 'could not record a file the printer accepted; retrying')
      await new Promise((resolve) => setTimeout(resolve, wait))
    }
  }
}
