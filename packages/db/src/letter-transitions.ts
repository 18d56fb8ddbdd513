import { and, eq, inArray } from 'drizzle-orm'
import { metrics } from '@letters/observability'
import type { Tx } from './client.js'
import { letterEvents, letters, type LetterStatus } from './schema.js'

/** What a transition knows of the letter it looked at. */
export interface LetterAtMove {
  status: LetterStatus
  accountId: string
  cost: number
}

export interface LetterMove {
  /** The statuses the letter may leave; from any other, nothing changes. */
  from: readonly LetterStatus[]
  to: LetterStatus
  /** The event's detail, shown to the client; may depend on where the letter was. */
  detail: string | null | ((letter: LetterAtMove) => string | null)
  /** Other columns written with the status (the normalized address, say). */
  set?: Partial<Pick<typeof letters.$inferInsert, 'address'>>
  /** Only a letter of this account counts as existing. */
  accountId?: string
}

/**
 * The one way a letter changes status (DESIGN section 3): under the row's lock, the status
 * moves only from one it is expected in, and the change gets its `letter_events` row. Run it
 * inside the transaction that does the rest of the step (a refund, the next job). Returns the
 * letter as it was, or undefined when there is no such letter; `moved` says whether it moved.
 */
export async function moveLetter(tx: Tx, letterId: string, move: LetterMove): Promise<{ moved: boolean; letter: LetterAtMove | undefined }> {
  const [letter] = await tx
    .select({ status: letters.status, accountId: letters.accountId, cost: letters.cost })
    .from(letters)
    .where(move.accountId ? and(eq(letters.id, letterId), eq(letters.accountId, move.accountId)) : eq(letters.id, letterId))
    .for('update')
  if (!letter || !move.from.includes(letter.status)) return { moved: false, letter }
  await tx
    .update(letters)
    .set({ ...move.set, status: move.to, updatedAt: new Date() })
    .where(and(eq(letters.id, letterId), inArray(letters.status, move.from)))
  const detail = typeof move.detail === 'function' ? move.detail(letter) : move.detail
  await tx.insert(letterEvents).values({ letterId, status: move.to, detail })
  // Counted when made; the rare move whose transaction then rolls back is counted too.
  metrics.letterStatusChanges.inc({ to: move.to })
  return { moved: true, letter }
}
