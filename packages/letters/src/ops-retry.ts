import { eq, sql } from 'drizzle-orm'
import type { LetterStatus } from '@letters/contracts'
import { enqueue, letters, printBatchLetters, type Db } from '@letters/db'
import { moveLetter } from './move.js'
import { resumeLetter, withoutProgressSql } from './resume.js'
import { isResumable, isSentBackByOps, productionStart } from './transitions.js'

/** The event of a failed letter sent back to production: client-visible, so it says what happened. */
export const RETRIED_DETAIL = 'Reintento de producción pedido por operaciones'

/**
 * `retried`: the letter was sent on, from `from`. Otherwise `status` is where the letter is
 * (undefined: there is no such letter), `erased` whether its personal data was (it can never be
 * produced again), and nothing changed.
 */
export type RetryOutcome = { retried: true; from: LetterStatus } | { retried: false; status: LetterStatus | undefined; erased?: boolean }

/**
 * An ops retry, in one transaction under the letter's row lock:
 * - a `failed` letter goes back to `ready_for_print` with its event and a new production job
 *   (the floor claims it from there with the next print claim), unless it is in a print batch:
 *   then only the job (its batch prints it);
 * - a stuck letter (withoutProgressSql) is resumed as the reconciler would resume it, whether or
 *   not Redis still holds its job: ops asked, and a second job is harmless (resumeLetter);
 * - any other letter is left as it is, and so is a letter whose personal data was erased (a
 *   failed one among them): there is nothing left to print it with.
 * A second retry waits for the first's lock and then finds the letter retried (ready_for_print
 * or freshly resumed, so no longer stuck): it changes nothing, and only one job was queued.
 */
export function retryLetter(db: Db, letterId: string, afterMs: number): Promise<RetryOutcome> {
  return db.transaction(async (tx) => {
    const [letter] = await tx
      .select({
        status: letters.status,
        stuck: sql<boolean>`${withoutProgressSql('letters', afterMs)}`,
        batched: sql<boolean>`EXISTS (SELECT 1 FROM ${printBatchLetters} WHERE ${printBatchLetters.letterId} = ${letters.id})`,
        erased: sql<boolean>`${letters.personalDataErasedAt} IS NOT NULL`,
      })
      .from(letters)
      .where(eq(letters.id, letterId))
      .for('no key update', { of: letters })
    if (!letter) return { retried: false, status: undefined }
    if (letter.erased) return { retried: false, status: letter.status, erased: true }
    if (isSentBackByOps(letter.status) && letter.batched) {
      // PRINTER=batch: its card is in a batch (given up on while it waited in the tray), which
      // prints it and marks it printed. Sent back to ready_for_print it would be cancellable (and
      // refunded) though printed, and stranded there once the batch had moved only printing and
      // failed letters. Its job runs again instead: a batch already handed over settles it printed.
      await enqueue(tx, { name: 'produce-letter', data: { letterId } })
      return { retried: true, from: letter.status }
    }
    if (isSentBackByOps(letter.status)) {
      const { moved } = await moveLetter(tx, letterId, { from: letter.status, to: productionStart, detail: RETRIED_DETAIL })
      if (!moved) throw new Error(`letter ${letterId} left '${letter.status}' under its row lock`)
      await enqueue(tx, { name: 'produce-letter', data: { letterId } })
      return { retried: true, from: letter.status }
    }
    if (letter.stuck && isResumable(letter.status)) {
      await resumeLetter(tx, letterId, letter.status)
      return { retried: true, from: letter.status }
    }
    return { retried: false, status: letter.status }
  })
}
