import { and, eq, inArray, isNull, sql } from 'drizzle-orm'
import { isErasableStatus, type LetterStatus } from '@letters/contracts'
import { letterEvents, letters, type Tx } from '@letters/db'
import { metrics } from '@letters/observability'
import { recordLetterEvents } from './events.js'
import { movesFrom } from './transitions.js'

/** What a transition knows of the letter it looked at. */
export interface LetterAtMove {
  status: LetterStatus
  accountId: string
  cost: number
  printClaim: number
  /** False for a test letter: never charged, never handed to the floor. */
  livemode: boolean
  /** Its recipient and message were erased: it can no longer be addressed, drawn or printed. */
  erased: boolean
}

export interface LetterMove {
  to: LetterStatus
  /**
   * The status this step expects the letter in, when it is narrower than every status the
   * transition table allows into `to` (the default); from any other, nothing changes. The same
   * as `to`: the letter is resumed where it is.
   */
  from?: LetterStatus
  /** The event's detail, shown to the client; may depend on where the letter was. */
  detail: string | null | ((letter: LetterAtMove) => string | null)
  /** Other columns written with the status (the normalized address, say). */
  set?: Partial<Pick<typeof letters.$inferInsert, 'address' | 'addressLines' | 'returnedAt' | 'returnReason'>>
  /** Only a letter of this account counts as existing. */
  accountId?: string
  /** Only a letter of this mode counts as existing (a test key's letters are not a live key's; the floor's are live). */
  livemode?: boolean
  /**
   * The floor's fencing token. `'next'`: the move gives the letter the next print claim (a
   * floor job taking it over). A number: the move happens only while that is still the
   * letter's claim, so a job that was superseded cannot move it.
   */
  printClaim?: 'next' | number
}

export interface LetterMoved {
  moved: boolean
  /** The letter as it was, or undefined when there is no such letter. */
  letter: LetterAtMove | undefined
  /** The letter's print claim after the move (the one just taken, with `printClaim: 'next'`). */
  printClaim: number | undefined
}

/**
 * The one way a letter changes status (DESIGN section 3): under the row's lock, the status
 * moves only from one the transition table allows into `to` (or the one `from` names), and the
 * change gets its `letter_events` row and its event (GET /events, and a copy for each of the
 * account's endpoints subscribed). Run it inside the transaction that does the rest of the step
 * (a refund, the next job). `moved` says whether it moved; a move the table forbids throws
 * IllegalLetterMove before anything is read.
 */
export async function moveLetter(tx: Tx, letterId: string, move: LetterMove): Promise<LetterMoved> {
  const from = movesFrom(move.to, move.from, false)
  const [letter] = await tx
    .select({
      status: letters.status,
      accountId: letters.accountId,
      cost: letters.cost,
      printClaim: letters.printClaim,
      livemode: letters.livemode,
      erased: sql<boolean>`${letters.personalDataErasedAt} IS NOT NULL`,
    })
    .from(letters)
    .where(
      and(
        eq(letters.id, letterId),
        move.accountId === undefined ? undefined : eq(letters.accountId, move.accountId),
        move.livemode === undefined ? undefined : eq(letters.livemode, move.livemode),
      ),
    )
    // Not FOR UPDATE: the key stays, so a floor handoff in progress (its record's foreign key
    // holds KEY SHARE on the row while the printer works) does not hold up a status change.
    .for('no key update')
  const superseded = typeof move.printClaim === 'number' && letter?.printClaim !== move.printClaim
  // An erased letter has nothing left to address, draw or print: it never goes back to a status that needs them.
  const needsErasedData = letter?.erased === true && !isErasableStatus(move.to)
  if (!letter || !from.includes(letter.status) || superseded || needsErasedData) return { moved: false, letter, printClaim: letter?.printClaim }
  const [after] = await tx
    .update(letters)
    .set({ ...move.set, status: move.to, updatedAt: new Date(), ...(move.printClaim === 'next' ? { printClaim: sql`${letters.printClaim} + 1` } : {}) })
    .where(and(eq(letters.id, letterId), inArray(letters.status, [...from])))
    .returning({ printClaim: letters.printClaim })
  const detail = typeof move.detail === 'function' ? move.detail(letter) : move.detail
  await tx.insert(letterEvents).values({ letterId, status: move.to, detail })
  // A letter resumed in the status it was in (the reconciler) changed nothing to tell.
  if (letter.status !== move.to) await recordLetterEvents(tx, [letterId])
  // Counted when made (a rare rollback after it is counted too); a letter resumed in the status
  // it was in (the reconciler) changed nothing to count.
  if (letter.status !== move.to) metrics.letterStatusChanges.inc({ to: move.to, mode: letter.livemode ? 'live' : 'test' })
  return { moved: true, letter, printClaim: after?.printClaim }
}

/** A move of many letters at once: from the expected statuses to another, with one detail for all. */
export interface LettersMove {
  to: LetterStatus
  /** As LetterMove's: by default every other status the table allows into `to`; never `to` itself. */
  from?: LetterStatus
  /** One detail for all, or each letter's own (a batch names the letter's place in it). */
  detail: string | null | ((letterId: string) => string | null)
}

/**
 * moveLetter for a batch (the letter clock releasing a campaign's scheduled letters): the same
 * rules, under the rows' locks, only from an expected status, each moved letter with its event
 * and webhook events, in a few statements whatever the batch's size. Returns the letters moved;
 * the others (gone, or no longer in an expected status) are left as they are.
 */
export async function moveLetters(tx: Tx, letterIds: readonly string[], move: LettersMove): Promise<Array<{ id: string; livemode: boolean }>> {
  if (move.from === move.to) throw new RangeError('moveLetters changes a status: use moveLetter to resume a letter in its own')
  const from = movesFrom(move.to, move.from, true)
  if (letterIds.length === 0) return []
  // The UPDATE takes each row's lock and checks the expected status again under it, so a letter
  // moved meanwhile by another transaction is left out; as moveLetter, an erased letter never
  // goes to a status that needs its personal data.
  const moved = await tx
    .update(letters)
    .set({ status: move.to, updatedAt: sql`now()` })
    .where(
      and(
        inArray(letters.id, [...letterIds]),
        inArray(letters.status, [...from]),
        isErasableStatus(move.to) ? undefined : isNull(letters.personalDataErasedAt),
      ),
    )
    .returning({ id: letters.id, livemode: letters.livemode })
  if (moved.length === 0) return []
  const detail = move.detail
  await tx
    .insert(letterEvents)
    .values(moved.map((letter) => ({ letterId: letter.id, status: move.to, detail: typeof detail === 'function' ? detail(letter.id) : detail })))
  await recordLetterEvents(
    tx,
    moved.map((letter) => letter.id),
  )
  for (const letter of moved) metrics.letterStatusChanges.inc({ to: move.to, mode: letter.livemode ? 'live' : 'test' })
  return [...moved]
}
