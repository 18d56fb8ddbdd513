import { and, eq, inArray } from 'drizzle-orm'
import type { publicApi } from '@letters/contracts'
import { refund } from '@letters/credits'
import { letterEvents, letters, type Db, type LetterStatus } from '@letters/db'
import { conflict } from '../errors.js'
import { assertCardId, cardNotFound, getCard } from './cards.js'

const cancellable: LetterStatus[] = ['received', 'ready_for_print']

/** Why a letter in each other status cannot be cancelled any more. */
const notCancellable: Record<Exclude<LetterStatus, 'received' | 'ready_for_print'>, string> = {
  printing: 'La carta ya está en producción y no se puede cancelar',
  printed: 'La carta ya está impresa y no se puede cancelar',
  mailed: 'La carta ya se entregó a correos y no se puede cancelar',
  failed: 'La producción de la carta falló y operaciones la está revisando; no se puede cancelar',
  cancelled: 'La carta ya está cancelada',
  address_rejected: 'La carta fue rechazada por su dirección y sus créditos ya se devolvieron',
}

/**
 * Cancels a letter that has not reached the floor: `cancelled`, its event and the refund in one
 * transaction. Its pending jobs stay queued and are skipped when they run (the workers only move
 * a letter from the status they expect).
 */
export async function cancelCard(db: Db, accountId: string, cardId: string): Promise<publicApi.Card> {
  assertCardId(cardId)
  await db.transaction(async (tx) => {
    const [letter] = await tx
      .select({ status: letters.status, cost: letters.cost })
      .from(letters)
      .where(and(eq(letters.id, cardId), eq(letters.accountId, accountId)))
      .for('update')
    if (!letter) throw cardNotFound()
    if (!cancellable.includes(letter.status)) throw conflict(notCancellable[letter.status as keyof typeof notCancellable])
    await tx
      .update(letters)
      .set({ status: 'cancelled', updatedAt: new Date() })
      .where(and(eq(letters.id, cardId), inArray(letters.status, cancellable)))
    await tx.insert(letterEvents).values({ letterId: cardId, status: 'cancelled', detail: `Cancelada por el cliente; ${letter.cost} créditos devueltos` })
    await refund(tx, accountId, letter.cost, cardId, 'cancelled by the client')
  })
  return getCard(db, accountId, cardId)
}

/** Ops hand a printed letter to the post: `printed` → `mailed`. */
export async function markMailed(db: Db, cardId: string): Promise<publicApi.Card> {
  const accountId = await db.transaction(async (tx) => {
    const [letter] = await tx.select({ status: letters.status, accountId: letters.accountId }).from(letters).where(eq(letters.id, cardId)).for('update')
    if (!letter) throw cardNotFound()
    if (letter.status === 'mailed') throw conflict('La carta ya está marcada como enviada')
    if (letter.status !== 'printed') throw conflict(`Solo una carta impresa puede marcarse como enviada; esta está en estado '${letter.status}'`)
    await tx.update(letters).set({ status: 'mailed', updatedAt: new Date() }).where(and(eq(letters.id, cardId), eq(letters.status, 'printed')))
    await tx.insert(letterEvents).values({ letterId: cardId, status: 'mailed', detail: 'Entregada a correos' })
    return letter.accountId
  })
  return getCard(db, accountId, cardId)
}
