import type { Executor } from '@letters/db'
import { unownedField, type OwnedField } from '@letters/intake'
import { badRequest } from '../../common/errors.js'

const notOwnedMessages: Record<OwnedField, string> = {
  cardDesignId: "El campo 'cardDesignId' no corresponde a ningún diseño de tarjeta de la cuenta",
  envelopeDesignId: "El campo 'envelopeDesignId' no corresponde a ningún diseño de sobre de la cuenta",
  senderId: "El campo 'senderId' no corresponde a ningún remitente de la cuenta",
  signatureId: "El campo 'signatureId' no corresponde a ninguna firma de la cuenta",
}

/** An id of another account gets the same answer as an unknown one, so ids never leak across accounts. */
export const notOwned = (field: OwnedField) => badRequest(notOwnedMessages[field])

/** Checks in one round trip that the designs and the sender belong to the account (the intake's own check). */
export async function assertOwnedDesigns(
  db: Executor,
  accountId: string,
  choice: { cardDesignId: string; envelopeDesignId: string; senderId: string; signatureId?: string | null | undefined },
): Promise<void> {
  const field = await unownedField(db, accountId, choice)
  if (field) throw notOwned(field)
}
