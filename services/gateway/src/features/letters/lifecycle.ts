import { and, desc, eq } from 'drizzle-orm'
import { ledgerReasons, letterStatusNames, returnReasonLabels, suppressesAddress, type admin, type publicApi, type ReturnReason } from '@letters/contracts'
import { metrics } from '@letters/observability'
import { refundLetter } from '@letters/credits'
import { letterEvents, letters, type Db, type LetterStatus, type Tx } from '@letters/db'
import { ApiError, conflict } from '../../common/errors.js'
import type { KeyScope } from '../../common/caller.js'
import { assertCardId, cardNotFound, getAnyCard, getCard } from './cards.js'
import { sentToOf, suppressAddress } from '../returns/index.js'
import { moveLetter, onPaperPerJournal, type CancellableStatus } from '@letters/letters'
import type { PrintJournal } from '@letters/artifacts'

/** Why a letter in each status the transition table allows no cancellation from cannot be cancelled any more. */
const notCancellable: Record<Exclude<LetterStatus, CancellableStatus>, string> = {
  printing: 'La carta ya está en producción y no se puede cancelar',
  printed: 'La carta ya está impresa y no se puede cancelar',
  mailed: 'La carta ya se entregó a correos y no se puede cancelar',
  returned: 'La carta ya se entregó a correos, que la devolvió: no se puede cancelar',
  failed: 'La producción de la carta falló y operaciones la está revisando; no se puede cancelar',
  cancelled: 'La carta ya está cancelada',
  address_rejected: 'La carta fue rechazada por su dirección y sus créditos ya se devolvieron',
}

/**
 * Cancels a letter that has not reached the floor (a scheduled one included): `cancelled`, its
 * event and the refund in one transaction; a test letter was never charged, so nothing is
 * refunded. Its pending jobs stay queued and are skipped when they run (the workers only move
 * a letter from the status they expect).
 */
export async function cancelCard(db: Db, journal: PrintJournal, scope: KeyScope, cardId: string): Promise<publicApi.Card> {
  assertCardId(cardId)
  const { accountId } = scope
  await db.transaction(async (tx) => {
    const { moved, letter } = await moveLetter(tx, cardId, {
      accountId,
      livemode: scope.livemode,
      to: 'cancelled',
      detail: ({ cost, livemode }) =>
        livemode ? `Cancelada por el cliente; ${cost} créditos devueltos` : 'Cancelada por el cliente; carta de prueba, sin cargo que devolver',
    })
    if (!letter) throw cardNotFound()
    if (!moved) throw conflict(notCancellable[letter.status as keyof typeof notCancellable])
    // A database restored from a backup may show a letter the printer took since as not printed
    // yet: the print journal says otherwise, and paper is not refunded. Asked once the move holds
    // the row, so that a cancel races the letter clock as it always did; the throw undoes the move.
    if (letter.livemode && (await onPaperPerJournal(journal, cardId))) throw conflict('La carta ya se entregó a la impresora y no se puede cancelar')
    await refundLetter(tx, { ...letter, id: cardId }, ledgerReasons.cancelledByClient)
  })
  return getCard(db, scope, cardId)
}

/** Why a letter was not marked mailed; the floor counts its scans by it. */
export type MailedRefusal = 'unknown' | 'test_letter' | 'not_printed' | 'already_mailed'

export class NotMailed extends ApiError {
  override name = 'NotMailed'
  constructor(
    statusCode: 404 | 409,
    message: string,
    readonly refusal: MailedRefusal,
  ) {
    super(statusCode, message)
  }
}

/** Which letter: by id (ops, the admin API), or by the short code on its envelope (the floor's scanner). */
export type MailedLetter = { id: string } | { code: string }

const mailedAtFormat = new Intl.DateTimeFormat('es-ES', { dateStyle: 'long', timeStyle: 'short', timeZone: 'UTC' })

/**
 * Ops hand a printed letter to the post: `printed` → `mailed`, the one way a letter gets there
 * from the floor (the admin API by id, the floor's scanner by code). A test letter never reached
 * the floor, so there is nothing to hand over: by id it is refused (the letter clock marks it
 * mailed); by code it is unknown, as the floor never saw that code. Concurrent calls for one
 * letter queue on its row lock (moveLetter): one moves it, the others find it mailed.
 */
export async function markMailed(db: Db, which: MailedLetter): Promise<publicApi.Card> {
  const owner = await db.transaction(async (tx) => {
    const cardId = 'id' in which ? which.id : await liveLetterWithCode(tx, which.code)
    const { moved, letter } = await moveLetter(tx, cardId, { livemode: true, to: 'mailed', detail: 'Entregada a correos' })
    if (!letter) {
      const [test] = await tx
        .select({ id: letters.id })
        .from(letters)
        .where(and(eq(letters.id, cardId), eq(letters.livemode, false)))
      if (test) throw new NotMailed(409, 'Es una carta de prueba: no se imprime ni se entrega a correos, y se marca enviada sola', 'test_letter')
      throw new NotMailed(404, cardNotFound().message, 'unknown')
    }
    if (letter.status === 'mailed') {
      const [event] = await tx
        .select({ at: letterEvents.at })
        .from(letterEvents)
        .where(and(eq(letterEvents.letterId, cardId), eq(letterEvents.status, 'mailed')))
        .orderBy(desc(letterEvents.id))
        .limit(1)
      const when = event ? ` el ${mailedAtFormat.format(event.at)} UTC` : ''
      throw new NotMailed(409, `La carta ya se marcó como enviada${when}`, 'already_mailed')
    }
    if (!moved) {
      const status = letter.status
      throw new NotMailed(
        409,
        `Solo una carta impresa puede marcarse como enviada; esta está en estado «${letterStatusNames[status]}» (${status})`,
        'not_printed',
      )
    }
    return { cardId, scope: { accountId: letter.accountId, livemode: letter.livemode } }
  })
  return getCard(db, owner.scope, owner.cardId)
}

/**
 * A code as the floor's scanner or a person types it, tidied: spaces, dashes and underscores
 * dropped (padding a scanner adds, a code typed in groups), upper case, and the letters
 * Crockford's base32 reads as digits (O as 0; I and L as 1). Codes never contain those letters,
 * so the tidying cannot turn one code into another.
 */
export function normalizeLetterCode(typed: string): string {
  return typed
    .replace(/[\s_-]+/g, '')
    .toUpperCase()
    .replace(/O/g, '0')
    .replace(/[IL]/g, '1')
}

/** The live letter with this code (normalized first); a test letter's code is unknown: it never reached the floor. */
async function liveLetterWithCode(tx: Tx, typed: string, Refusal: typeof NotMailed | typeof NotReturned = NotMailed): Promise<string> {
  const code = normalizeLetterCode(typed)
  const [letter] = await tx
    .select({ id: letters.id })
    .from(letters)
    .where(and(eq(letters.code, code), eq(letters.livemode, true)))
  // Name the code as read when the tidied text is one (a scanner's "o" for "0"); otherwise what was typed.
  const shown = /^[0-9A-HJKMNP-TV-Z]{10}$/.test(code) ? code : typed.trim().slice(0, 40)
  if (!letter) throw new Refusal(404, `Código desconocido: ${shown}`, 'unknown')
  return letter.id
}

/** Why a letter was not marked returned; the floor counts its scans by it. */
export type ReturnedRefusal = 'unknown' | 'not_mailed' | 'already_returned'

export class NotReturned extends ApiError {
  override name = 'NotReturned'
  constructor(
    statusCode: 404 | 409,
    message: string,
    readonly refusal: ReturnedRefusal,
  ) {
    super(statusCode, message)
  }
}

/**
 * The post brought a mailed letter back: `mailed` → `returned` with the day and the reason, its
 * `letter.returned` event, and (but for `refused`, which is about the person) its address on the
 * account's suppression list, all in one transaction. Nothing is refunded: the letter was made and
 * posted. By code (the floor's scanner) only a live letter is found; by id (ops) a test letter
 * too, so a client can try its integration. A letter whose personal data was erased while the
 * post had it is suppressed by what the erasure kept of its address (sentToOf).
 */
export async function markReturned(db: Db, which: MailedLetter, reason: ReturnReason): Promise<admin.ReturnedLetter> {
  const outcome = await db.transaction(async (tx) => {
    const cardId = 'id' in which ? which.id : await liveLetterWithCode(tx, which.code, NotReturned)
    const { moved, letter } = await moveLetter(tx, cardId, {
      to: 'returned',
      detail: `Devuelta por correos: ${returnReasonLabels[reason]}`,
      set: { returnedAt: new Date(), returnReason: reason },
    })
    if (!letter) throw new NotReturned(404, cardNotFound().message, 'unknown')
    if (!moved && letter.status === 'returned') throw new NotReturned(409, 'La carta ya se marcó como devuelta', 'already_returned')
    if (!moved) {
      throw new NotReturned(
        409,
        `Solo una carta enviada puede marcarse como devuelta; esta está en estado «${letterStatusNames[letter.status]}» (${letter.status})`,
        'not_mailed',
      )
    }
    const [row] = await tx
      .select({ recipient: letters.recipient, returnAddressKey: letters.returnAddressKey, returnZip: letters.returnZip })
      .from(letters)
      .where(eq(letters.id, cardId))
    const sentTo = row && sentToOf(letter.accountId, row, letter.erased)
    const suppressionId =
      suppressesAddress(reason) && sentTo
        ? await suppressAddress(tx, { id: cardId, accountId: letter.accountId, livemode: letter.livemode, sentTo }, reason)
        : null
    return { cardId, suppressionId }
  })
  metrics.lettersReturned.inc({ reason })
  return { card: await getAnyCard(db, outcome.cardId), suppressionId: outcome.suppressionId }
}
