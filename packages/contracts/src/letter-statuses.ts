/**
 * Every status a letter can be in, the one list: the database column, the API's schemas and the
 * webhook event types are derived from it. `scheduled`: paid for, waiting for its `sendAt`.
 * `returned`: mailed, and brought back by the post (the floor marks it when the envelope arrives).
 */
export const letterStatuses = [
  'scheduled',
  'received',
  'ready_for_print',
  'printing',
  'printed',
  'mailed',
  'returned',
  'address_rejected',
  'cancelled',
  'failed',
] as const
export type LetterStatus = (typeof letterStatuses)[number]

/** Each status in Spanish, as people read it (the floor's page, the answers that name a letter's status). */
export const letterStatusNames: Record<LetterStatus, string> = {
  scheduled: 'programada',
  received: 'recibida',
  ready_for_print: 'lista para imprimir',
  printing: 'en impresión',
  printed: 'impresa',
  mailed: 'enviada',
  returned: 'devuelta',
  address_rejected: 'dirección rechazada',
  cancelled: 'cancelada',
  failed: 'fallida',
}

/**
 * The statuses a client may cancel a letter in, and be refunded: the moves into `cancelled` of the
 * transition table (packages/letters/src/transitions.ts), which checks this list against them.
 * Here so that the dashboard offers "Cancelar carta" where the API takes it.
 */
export const cancellableStatuses = ['scheduled', 'received', 'ready_for_print'] as const satisfies readonly LetterStatus[]

/**
 * The statuses in which a letter no longer needs its recipient, message or files: the floor is
 * done with it, or never will be. Only in these is its personal data erased (on request, or
 * PERSONAL_DATA_RETENTION_MS after it got there), and an erased letter never moves to any other.
 */
export const erasableStatuses = ['printed', 'mailed', 'returned', 'cancelled', 'address_rejected', 'failed'] as const satisfies readonly LetterStatus[]
export type ErasableStatus = (typeof erasableStatuses)[number]

export const isErasableStatus = (status: LetterStatus): status is ErasableStatus => (erasableStatuses as readonly LetterStatus[]).includes(status)
