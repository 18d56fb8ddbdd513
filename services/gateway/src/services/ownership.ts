import { sql } from 'drizzle-orm'
import type { Executor } from '@letters/db'
import type { OwnedField } from '@letters/intake'
import { badRequest } from '../errors.js'

export interface DesignChoice {
  cardDesignId: string
  envelopeDesignId: string
  senderId: string
}

export interface Ownership {
  card_ok: boolean
  envelope_ok: boolean
  sender_ok: boolean
}

/** The three columns that say whether the designs and the sender are the account's. */
function ownershipColumns(accountId: string, choice: DesignChoice) {
  return sql`
    EXISTS (SELECT 1 FROM card_designs WHERE id = ${choice.cardDesignId}::uuid AND account_id = ${accountId}::uuid) AS card_ok,
    EXISTS (SELECT 1 FROM envelope_designs WHERE id = ${choice.envelopeDesignId}::uuid AND account_id = ${accountId}::uuid) AS envelope_ok,
    EXISTS (SELECT 1 FROM senders WHERE id = ${choice.senderId}::uuid AND account_id = ${accountId}::uuid) AS sender_ok`
}

const notOwnedMessages: Record<OwnedField, string> = {
  cardDesignId: "El campo 'cardDesignId' no corresponde a ningún diseño de tarjeta de la cuenta",
  envelopeDesignId: "El campo 'envelopeDesignId' no corresponde a ningún diseño de sobre de la cuenta",
  senderId: "El campo 'senderId' no corresponde a ningún remitente de la cuenta",
}

/** An id of another account gets the same answer as an unknown one, so ids never leak across accounts. */
export const notOwned = (field: OwnedField) => badRequest(notOwnedMessages[field])

function assertOwnership(owned: Ownership | undefined): void {
  if (!owned?.card_ok) throw notOwned('cardDesignId')
  if (!owned.envelope_ok) throw notOwned('envelopeDesignId')
  if (!owned.sender_ok) throw notOwned('senderId')
}

/** Checks in one round trip that the designs and the sender belong to the account. */
export async function assertOwnedDesigns(ex: Executor, accountId: string, choice: DesignChoice): Promise<void> {
  const [owned] = await ex.execute<Ownership & Record<string, unknown>>(sql`SELECT ${ownershipColumns(accountId, choice)}`)
  assertOwnership(owned)
}
