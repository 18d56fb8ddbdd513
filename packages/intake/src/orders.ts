import type { InkColor, Recipient, ReturnReason } from '@letters/contracts'

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
  /** A built-in hand's name, or the account font's. */
  fontName: string
  /** For an account font: its id and the version of its file the letter keeps; null for a built-in hand. */
  fontId: string | null
  fontVersion: number | null
  inkColor: InkColor
  message: string
  recipient: Recipient
  /** Credits, a positive whole number: charged for a live letter, shown only for a test letter. */
  cost: number
  /** When it enters the pipeline: until then it waits, paid for, as `scheduled`. Null: at once. */
  sendAt: Date | null
  /** Where its QR code sends whoever scans it, and the code of its short link; both null without a QR code. */
  trackingUrl: string | null
  trackingCode: string | null
  /**
   * The key its address is kept under in the account's suppression list (@letters/address's
   * suppressionKey): an order with a letter to a suppressed address is refused, as it is checked
   * with the designs. Null: sent whatever the list says (the request's ignoreSuppression).
   */
  suppressionKey: string | null
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
  /** When the order must be decided by: past it, nothing of it is written. Absent: no deadline but the intake's own. */
  deadline?: OrderDeadline
}

/**
 * The time a request has to be answered, shared by whoever answers it and whoever writes what it
 * asks for (the intake; the gateway's uploads). Until the order starts being written it is
 * `open`: whoever answers may `abandon` it (the client is told 503), and from then on nothing of
 * it is ever written. Once the writer has started writing it (`writing`), it cannot be
 * abandoned: the commit's outcome is the answer. JavaScript runs one of the two first, so an
 * order is either answered 503 and never written, or written and answered with what the commit
 * did.
 */
export class OrderDeadline {
  private state: 'open' | 'writing' | 'abandoned' = 'open'

  constructor(
    /** Epoch ms: an order still open then is abandoned. */
    readonly decideBy: number,
    /** Epoch ms: the latest its answer may be sent (the write, once started, must be over by then). */
    readonly answerBy: number,
  ) {}

  /** Set by the intake when it is handed the order: an abandoned order's request then knows nothing was, nor will be, written. */
  submitted = false

  get abandoned(): boolean {
    return this.state === 'abandoned'
  }

  get writing(): boolean {
    return this.state === 'writing'
  }

  /** Milliseconds left until `decideBy` (at most 0). */
  remaining(now = Date.now()): number {
    return Math.max(0, this.decideBy - now)
  }

  private readonly abandonedListeners: Array<() => void> = []

  /** Gives up on an open order; false if it is being written already. */
  abandon(): boolean {
    if (this.state === 'writing') return false
    if (this.state === 'open') {
      this.state = 'abandoned'
      for (const listener of this.abandonedListeners.splice(0)) listener()
    }
    return true
  }

  /** Called once when the order is abandoned (the intake lets go of it at once). */
  onAbandon(listener: () => void): void {
    this.abandonedListeners.push(listener)
  }

  private abandonment: AbortController | undefined

  /** Aborted when the order is abandoned: work that is only for its request (a font read for an upload) stops with it. */
  get signal(): AbortSignal {
    if (!this.abandonment) {
      const abandonment = new AbortController()
      if (this.abandoned) abandonment.abort()
      else this.onAbandon(() => abandonment.abort())
      this.abandonment = abandonment
    }
    return this.abandonment.signal
  }

  /** The writer is about to write the order: false if it was abandoned or its time is up. */
  startWriting(now = Date.now()): boolean {
    if (this.state === 'abandoned' || now >= this.decideBy) {
      this.abandon()
      return false
    }
    this.state = 'writing'
    return true
  }

  /** Undone when the transaction that was to write it rolled back: the order may be written again, or abandoned. */
  stopWriting(): void {
    if (this.state === 'writing') this.state = 'open'
  }
}

/** The order was not written: its deadline came first (the request was, or is to be, answered 503). */
export class DeadlineExceededError extends Error {
  override name = 'DeadlineExceededError'
  constructor() {
    super('the order was not stored: its deadline passed first')
  }
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
  /** A letter of the order goes to an address on the account's suppression list (its key), since a letter to it came back. */
  | { outcome: 'suppressed'; key: string; reason: ReturnReason; since: Date }
  /** Another request under the same Idempotency-Key is still being processed. */
  | { outcome: 'key-in-flight' }
  /** The Idempotency-Key was used for a different request. */
  | { outcome: 'key-reused' }
  | { outcome: 'no-account' }

/** Any outcome but `stored`: the order wrote nothing. */
export type UnstoredOutcome = Exclude<OrderOutcome, { outcome: 'stored' }>
