import { and, eq } from 'drizzle-orm'
import type { publicApi } from '@letters/contracts'
import { refundLetter } from '@letters/credits'
import { letters, moveLetter, type Db, type LetterStatus } from '@letters/db'
import { conflict } from '../errors.js'
import type { KeyScope } from '../plugins/app/api-key-auth.js'
import { assertCardId, cardNotFound, getCard } from './cards.js'

const cancellable = ['scheduled', 'received', 'ready_for_print'] as const satisfies LetterStatus[]

/** Why a letter in each other status cannot be cancelled any more. */
const notCancellable: Record<Exclude<LetterStatus, (typeof cancellable)[number]>, string> = {
  printing: 'La carta ya está en producción y no se puede cancelar',
  printed: 'La carta ya está impresa y no se puede cancelar',
  mailed: 'La carta ya se entregó a correos y no se puede cancelar',
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
export async function cancelCard(db: Db, scope: KeyScope, cardId: string): Promise<publicApi.Card> {
  assertCardId(cardId)
  const { accountId } = scope
  await db.transaction(async (tx) => {
    const { moved, letter } = await moveLetter(tx, cardId, {
      accountId,
      livemode: scope.livemode,
      from: cancellable,
      to: 'cancelled',
      detail: ({ cost, livemode }) =>
        livemode ? `Cancelada por el cliente; ${cost} créditos devueltos` : 'Cancelada por el cliente; carta de prueba, sin cargo que devolver',
    })
    if (!letter) throw cardNotFound()
    if (!moved) throw conflict(notCancellable[letter.status as keyof typeof notCancellable])
    await refundLetter(tx, { ...letter, id: cardId }, 'cancelled by the client')
  })
  return getCard(db, scope, cardId)
}

/**
 * Ops hand a printed letter to the post: `printed` → `mailed`. A test letter never reached the
 * floor, so there is nothing to hand over: it is refused (the letter clock marks it mailed).
 */
export async function markMailed(db: Db, cardId: string): Promise<publicApi.Card> {
  const owner = await db.transaction(async (tx) => {
    const { moved, letter } = await moveLetter(tx, cardId, { livemode: true, from: ['printed'], to: 'mailed', detail: 'Entregada a correos' })
    if (!letter) {
      const [test] = await tx
        .select({ id: letters.id })
        .from(letters)
        .where(and(eq(letters.id, cardId), eq(letters.livemode, false)))
      if (test) throw conflict('Es una carta de prueba: no se imprime ni se entrega a correos, y se marca enviada sola')
      throw cardNotFound()
    }
    if (letter.status === 'mailed') throw conflict('La carta ya está marcada como enviada')
    if (!moved) throw conflict(`Solo una carta impresa puede marcarse como enviada; esta está en estado '${letter.status}'`)
    return { accountId: letter.accountId, livemode: letter.livemode }
  })
  return getCard(db, owner, cardId)
}
