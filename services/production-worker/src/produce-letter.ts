import { UnrecoverableError } from 'bullmq'
import { eq, sql } from 'drizzle-orm'
import { isFontName } from '@letters/contracts'
import { letters, moveLetter, senders, type Db, type LetterStatus } from '@letters/db'
import { describeLetter, renderCard, renderEnvelope, type LetterRecord, type LetterToRender } from '@letters/render'
import type { ArtifactStore } from '@letters/artifacts'
import type { Printer } from './printer.js'

export interface Floor {
  db: Db
  store: ArtifactStore
  printer: Printer
}

export type ProductionOutcome = 'printed' | 'already_done'

/** Statuses a production job may (re)start from: a fresh letter, an interrupted run, an ops retry. */
const claimable: LetterStatus[] = ['ready_for_print', 'printing', 'failed']

const claimDetail: Partial<Record<LetterStatus, string>> = {
  ready_for_print: 'En producción',
  printing: 'En producción de nuevo: el intento anterior no terminó',
  failed: 'En producción de nuevo: reintento pedido por operaciones',
}

/** Moves the letter to `printing`; false when it is past production or cancelled. */
async function claim(db: Db, letterId: string): Promise<boolean> {
  const { moved, letter } = await db.transaction((tx) => moveLetter(tx, letterId, { from: claimable, to: 'printing', detail: (from) => claimDetail[from.status] ?? null }))
  if (!letter) throw new UnrecoverableError(`letter ${letterId} does not exist`)
  return moved
}

/** What the renderer needs, reloaded from the rows: the job carries the id only. */
async function letterToRender(db: Db, letterId: string): Promise<LetterToRender> {
  const [row] = await db
    .select({ fontName: letters.fontName, message: letters.message, address: letters.address, sender: senders.name })
    .from(letters)
    .innerJoin(senders, eq(senders.id, letters.senderId))
    .where(eq(letters.id, letterId))
  if (!row) throw new UnrecoverableError(`letter ${letterId} does not exist`)
  if (!row.address) throw new UnrecoverableError(`letter ${letterId} has no verified address`)
  if (!isFontName(row.fontName)) throw new UnrecoverableError(`letter ${letterId} uses the unknown font ${row.fontName}`)
  return describeLetter({ letterId, fontName: row.fontName, message: row.message, senderName: row.sender, recipient: row.address as unknown as LetterRecord['recipient'] })
}

/** A transition out of `printing`, with its event; false when the letter was no longer printing. */
async function leavePrinting(db: Db, letterId: string, status: 'printed' | 'failed', detail: string): Promise<boolean> {
  const { moved } = await db.transaction((tx) => moveLetter(tx, letterId, { from: ['printing'], to: status, detail }))
  return moved
}

/**
 * The floor's job for one letter: claim it (`printing`), render card and envelope, keep the
 * files in the artifact store, hand them to the printer, mark it `printed`. A letter already
 * printed, mailed or cancelled is left as it is, so running the job twice changes nothing.
 * A crash between the printer and the last step prints the letter again on the retry: the
 * spool printer replaces its files, a print command may print a second copy.
 */
export async function produceLetter(floor: Floor, letterId: string): Promise<ProductionOutcome> {
  if (!(await claim(floor.db, letterId))) return 'already_done'
  const letter = await letterToRender(floor.db, letterId)
  const [card, envelope] = await Promise.all([renderCard(letter), renderEnvelope(letter)])
  const files = [
    { name: `${letterId}.card.pdf`, data: card, location: await floor.store.put(`${letterId}/card.pdf`, card) },
    { name: `${letterId}.envelope.pdf`, data: envelope, location: await floor.store.put(`${letterId}/envelope.pdf`, envelope) },
  ]
  await floor.printer.print(files)
  const printed = await leavePrinting(floor.db, letterId, 'printed', `Entregada a la impresora (${floor.printer.name}): tarjeta y sobre`)
  return printed ? 'printed' : 'already_done'
}

// Event details are shown to the client (GET /cards/{id}): they say what happened, never the
// technical reason, which stays in the job's failedReason and the logs for ops.

/** After the last attempt: the letter goes to `failed`, for ops to see and retry. */
export function markFailed(db: Db, letterId: string, attempts: number): Promise<boolean> {
  const detail = attempts > 1 ? `La producción falló tras ${attempts} intentos; operaciones revisará la carta` : 'La producción falló; operaciones revisará la carta'
  return leavePrinting(db, letterId, 'failed', detail)
}

/** A failed attempt that will be retried, in the letter's history. */
export async function recordFailedAttempt(db: Db, letterId: string, attempt: number, attempts: number): Promise<void> {
  // Only for a letter the attempt had claimed: a claim that failed leaves no trace in the history.
  await db.execute(sql`
    INSERT INTO letter_events (letter_id, status, detail)
    SELECT id, 'printing', ${`Intento ${attempt} de ${attempts} fallido; se reintentará`} FROM letters
    WHERE id = ${letterId}::uuid AND status = 'printing'`)
}
