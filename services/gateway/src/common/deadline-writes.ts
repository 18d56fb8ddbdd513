import type { OrderDeadline } from '@letters/intake'
import { isConnectionError, type Executor, type Tx } from '@letters/db'
import { DEADLINE_RETRY_AFTER_SECONDS, outcomeUnknownMessage, requestDeadlineMessage } from './deadline-messages.js'
import { OutcomeUnknown, Unavailable } from './errors.js'

/** What a request given up on at its deadline is told when its work finds out after: what its timer told it (nothing was done, retry). */
export const givenUpAtDeadline = () => new Unavailable(requestDeadlineMessage, DEADLINE_RETRY_AFTER_SECONDS)

/**
 * A write of the gateway's own (an upload's new version) held to its request's deadline, as the
 * intake holds a creation: the transaction takes its locks, then calls `begin` just before it
 * writes. If the request was given up on by then, it was answered 503 ("retry": nothing was
 * done), and `begin` rolls the transaction back so that this stays true. Once begun, the write
 * is waited for: a request still unanswered at its answer time is told the outcome is unknown.
 *
 * A commit whose connection dropped may have committed: told as unknown, never as a 503 that
 * would invite a second version. Any other failure rolled back, and frees the deadline again.
 * A caller with no request (the demo's seed) has no deadline.
 */
export async function writeByDeadline<T>(db: Executor, deadline: OrderDeadline | undefined, work: (tx: Tx, begin: () => void) => Promise<T>): Promise<T> {
  let committing = false
  const begin = () => {
    if (deadline && !deadline.startWriting()) throw givenUpAtDeadline()
  }
  try {
    return await db.transaction(async (tx) => {
      const result = await work(tx, begin)
      committing = true
      return result
    })
  } catch (error) {
    if (committing && isConnectionError(error)) throw new OutcomeUnknown(outcomeUnknownMessage(false), error)
    deadline?.stopWriting()
    throw error
  }
}
