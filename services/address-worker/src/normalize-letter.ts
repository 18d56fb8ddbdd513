import { UnrecoverableError } from 'bullmq'
import { eq, sql } from 'drizzle-orm'
import { recipientBlock, type AddressVerifier, type NormalizedAddress } from '@letters/address'
import { refundLetter } from '@letters/credits'
import { ledgerReasons } from '@letters/contracts'
import { enqueue, letters, type Db } from '@letters/db'
import { moveLetter } from '@letters/letters'

export type AddressOutcome = 'ready_for_print' | 'address_rejected' | 'already_done'

function eventDetail(result: NormalizedAddress, livemode: boolean): string {
  if (result.deliverability === 'undeliverable')
    return `Dirección no entregable: ${result.problems.join('; ')}. ${livemode ? 'Créditos devueltos.' : 'Carta de prueba: sin cargo que devolver.'}`
  if (result.deliverability === 'corrected') return `Dirección corregida: ${result.changes.map((change) => `${change.field} (${change.reason})`).join(', ')}`
  return 'Dirección verificada'
}

/**
 * Verifies a received letter's address and moves the letter on, in one transaction: the
 * normalized address (with its block laid out as it will be printed, for a letter with a print
 * spec; `floorCountry` is where the floor posts from, FLOOR_COUNTRY) and the new status, its
 * event, and either the production job (outbox) or the refund. A letter no longer `received`
 * was handled by an earlier run: nothing changes.
 */
export async function normalizeLetter(db: Db, verifier: AddressVerifier, letterId: string, floorCountry: string): Promise<AddressOutcome> {
  const [letter] = await db
    .select({ status: letters.status, recipient: letters.recipient, livemode: letters.livemode, laidOut: sql<boolean>`${letters.printSpec} IS NOT NULL` })
    .from(letters)
    .where(eq(letters.id, letterId))
  if (!letter) throw new UnrecoverableError(`letter ${letterId} does not exist`)
  if (letter.status !== 'received') return 'already_done'

  const result = await verifier.verify(letter.recipient)
  const status = result.deliverability === 'undeliverable' ? 'address_rejected' : 'ready_for_print'
  return db.transaction(async (tx) => {
    const { moved, letter: locked } = await moveLetter(tx, letterId, {
      from: 'received',
      to: status,
      detail: eventDetail(result, letter.livemode),
      set: {
        address: { ...result, verifiedBy: verifier.name },
        // Letters accepted before designs had a product keep the layout they were accepted with, drawn by the renderer.
        addressLines: status === 'ready_for_print' && letter.laidOut ? recipientBlock(result, floorCountry) : null,
      },
    })
    // Another run (or a cancellation) moved it first.
    if (!moved || !locked) return 'already_done'
    if (status === 'address_rejected') await refundLetter(tx, { ...locked, id: letterId }, ledgerReasons.addressRejected)
    else await enqueue(tx, { name: 'produce-letter', data: { letterId } })
    return status
  })
}
