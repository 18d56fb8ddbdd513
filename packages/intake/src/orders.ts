import type { FontName, Recipient } from '@letters/contracts'

/** A letter checked by the gateway and ready to be stored: everything but what needs the database. */
export interface LetterDraft {
  id: string
  type: 'single' | 'campaign'
  campaignId: string | null
  cardDesignId: string
  envelopeDesignId: string
  senderId: string
  /** Drawn under the message; null: signed with the sender's name. */
  signatureId: string | null
  fontName: FontName
  message: string
  recipient: Recipient
  /** Credits, a positive whole number: charged for a live letter, shown only for a test letter. */
  cost: number
  /** When it enters the pipeline: until then it waits, paid for, as `scheduled`. Null: at once. */
  sendAt: Date | null
}

/** What an Idempotency-Key binds: the request's fingerprint, and the response to store if the order is stored. */
export interface IdempotentAnswer {
  key: string
  fingerprint: string
  response: { status: number; body: unknown }
}

/**
 * One client request: its letters are charged and stored together or not at all (one for
 * `POST /single` and `POST /card`, many for a bulk request).
 */
export interface LetterOrder {
  accountId: string
  /**
   * False for a test key's order: checked as a live one (a balance that could not pay is
   * `unpaid`) but never charged; its letters and its Idempotency-Key are the test mode's.
   */
  livemode: boolean
  letters: LetterDraft[]
  idempotency?: IdempotentAnswer
}

/** The field of a letter that names something the account does not own. */
export type OwnedField = 'cardDesignId' | 'envelopeDesignId' | 'senderId' | 'signatureId'

/** What became of an order. Only `stored` wrote anything. */
export type OrderOutcome =
  | { outcome: 'stored'; balanceAfter: number }
  /** The Idempotency-Key was answered before: its stored response. */
  | { outcome: 'replay'; status: number; body: unknown }
  /** The balance, at the order's turn, could not pay for all its letters. */
  | { outcome: 'unpaid'; cost: number; balance: number }
  | { outcome: 'not-owned'; field: OwnedField }
  | { outcome: 'campaign-inactive' }
  /** Another request under the same Idempotency-Key is still being processed. */
  | { outcome: 'key-in-flight' }
  /** The Idempotency-Key was used for a different request. */
  | { outcome: 'key-reused' }
  | { outcome: 'no-account' }

/** Any outcome but `stored`: the order wrote nothing. */
export type UnstoredOutcome = Exclude<OrderOutcome, { outcome: 'stored' }>
