import { cancellableStatuses as declaredCancellable, letterStatuses, type JobName, type LetterStatus } from '@letters/contracts'

/**
 * Which status may follow which: the one list of a letter's allowed moves. moveLetter and
 * moveLetters refuse any other, the cancellable statuses, the ones the reconciler resumes and
 * the one ops send back to production are read off it, and docs/architecture.md draws it.
 *
 * A status that may follow itself is one a letter waits in for a job of the pipeline: it is
 * resumed there (a new job, an event saying so) when that job was lost, and the floor claims a
 * letter in `printing` again when a run did not finish.
 */
export const letterTransitions = {
  // Paid for, waiting for its sendAt: the letter clock releases it, or the client cancels it.
  scheduled: ['received', 'cancelled'],
  // The address worker verifies the address: on to the floor, or refused (and refunded).
  received: ['received', 'ready_for_print', 'address_rejected', 'cancelled'],
  // The floor claims it (the next print claim); until then the client may cancel it. Found on
  // paper by the print journal (a database restored from before its print), it is printed.
  ready_for_print: ['ready_for_print', 'printing', 'cancelled', 'printed'],
  // On paper, or given up on (ops look at it).
  printing: ['printing', 'printed', 'failed'],
  // Ops send it back to production; the floor takes it again; or its batch, handed over with it, printed it.
  failed: ['ready_for_print', 'printing', 'printed'],
  // Handed to the post: the floor's scanner for a live letter, the letter clock for a test one.
  printed: ['mailed'],
  // Brought back by the post: the floor marks it, or ops.
  mailed: ['returned'],
  returned: [],
  address_rejected: [],
  cancelled: [],
} as const satisfies Record<LetterStatus, readonly LetterStatus[]>

type Transitions = typeof letterTransitions

/** The statuses a letter may reach `To` from. */
export type StatusInto<To extends LetterStatus> = { [From in LetterStatus]: To extends Transitions[From][number] ? From : never }[LetterStatus]

/** The statuses a letter waits in for a pipeline job, and is resumed in when the job was lost. */
export type ResumableStatus = { [Status in LetterStatus]: Status extends Transitions[Status][number] ? Status : never }[LetterStatus]

export const canMove = (from: LetterStatus, to: LetterStatus): boolean => (letterTransitions[from] as readonly LetterStatus[]).includes(to)

/** Every status a letter may reach `to` from: `to` itself among them when a letter may be resumed there. */
export function statusesInto<To extends LetterStatus>(to: To): Array<StatusInto<To>> {
  return letterStatuses.filter((from) => canMove(from, to)) as Array<StatusInto<To>>
}

/** What the client may still cancel (and be refunded for): the contracts' list, which must name exactly the moves into `cancelled`. */
export const cancellableStatuses: readonly CancellableStatus[] = declaredCancellable
export type CancellableStatus = StatusInto<'cancelled'>
/** The statuses the table moves into `cancelled` from and the contracts' list leaves out: none, or the line below fails to compile. */
type MissingFromCancellableStatuses = Exclude<CancellableStatus, (typeof declaredCancellable)[number]>
const noMoveLeftOut: [MissingFromCancellableStatuses] extends [never] ? true : MissingFromCancellableStatuses = true
void noMoveLeftOut

/** The statuses after the post has it: news of a letter already delivered (or not), not a step of its way. */
export const afterPostStatuses = ['returned'] as const satisfies readonly LetterStatus[]
const isAfterPost = (status: LetterStatus) => (afterPostStatuses as readonly LetterStatus[]).includes(status)

/** The statuses of a letter the post has had: mailed, and whatever news came after. */
export const postedStatuses = ['mailed', ...afterPostStatuses] as const satisfies readonly LetterStatus[]

/**
 * The statuses a letter is still on its way in: any with a move out that is not news from the
 * post (letters_in_flight_idx indexes these; a mailed letter is done, whether or not it comes back).
 */
export const inFlightStatuses = letterStatuses.filter((status) => letterTransitions[status].some((to) => !isAfterPost(to)))

/** The statuses a letter waits in for a pipeline job (a letter in one for too long is stuck). */
export const resumableStatuses = letterStatuses.filter((status) => canMove(status, status)) as ResumableStatus[]
export const isResumable = (status: LetterStatus): status is ResumableStatus => canMove(status, status)

/** The job a letter in each resumable status waits for: a status that may follow itself without one does not compile. */
export const jobOfStatus = {
  received: 'normalize-address',
  ready_for_print: 'produce-letter',
  printing: 'produce-letter',
} as const satisfies Record<ResumableStatus, JobName>

/** Where an ops retry sends a letter that is not waiting for a job but may start production again. */
export const productionStart = 'ready_for_print' satisfies LetterStatus

/** A letter ops send back to production's start (a `failed` one): it waits for no job, and may go back there. */
export const isSentBackByOps = (status: LetterStatus): boolean => !isResumable(status) && canMove(status, productionStart)

/** A move the transition table does not allow: a mistake in the code that asked for it, never the letter's. */
export class IllegalLetterMove extends Error {
  override name = 'IllegalLetterMove'
  constructor(from: LetterStatus, to: LetterStatus) {
    super(`a letter never moves from '${from}' to '${to}' (letterTransitions)`)
  }
}

/**
 * The statuses a move into `to` may start from: the one a step expects (`from`), refused with
 * IllegalLetterMove unless the table allows it, or else every status the table allows into `to`
 * (`to` itself left out when `changing`: a move that must change the status).
 */
export function movesFrom(to: LetterStatus, from: LetterStatus | undefined, changing: boolean): readonly LetterStatus[] {
  if (from !== undefined) {
    if (!canMove(from, to)) throw new IllegalLetterMove(from, to)
    return [from]
  }
  return statusesInto(to).filter((status) => !changing || status !== to)
}
