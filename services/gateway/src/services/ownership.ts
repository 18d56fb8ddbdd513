import { sql } from 'drizzle-orm'
import type { Executor } from '@letters/db'
import { badRequest } from '../errors.js'

export interface DesignChoice {
  cardDesignId: string
  envelopeDesignId: string
  senderId: string
}

/**
 * Checks in one round trip that the designs and the sender belong to the account. An id of
 * another account gets the same answer as an unknown one, so ids never leak across accounts.
 */
export async function assertOwnedDesigns(ex: Executor, accountId: string, choice: DesignChoice): Promise<void> {
  const [owned] = await ex.execute<{ card: boolean; envelope: boolean; sender: boolean }>(sql`
    SELECT
      EXISTS (SELECT 1 FROM card_designs WHERE id = ${choice.cardDesignId} AND account_id = ${accountId}) AS card,
      EXISTS (SELECT 1 FROM envelope_designs WHERE id = ${choice.envelopeDesignId} AND account_id = ${accountId}) AS envelope,
      EXISTS (SELECT 1 FROM senders WHERE id = ${choice.senderId} AND account_id = ${accountId}) AS sender`)
  if (!owned?.card) throw badRequest("El campo 'cardDesignId' no corresponde a ningún diseño de tarjeta de la cuenta")
  if (!owned.envelope) throw badRequest("El campo 'envelopeDesignId' no corresponde a ningún diseño de sobre de la cuenta")
  if (!owned.sender) throw badRequest("El campo 'senderId' no corresponde a ningún remitente de la cuenta")
}
