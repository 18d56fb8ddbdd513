/**
 * Every status a letter can be in, the one list: the database column, the API's schemas and the
 * webhook event types are derived from it. `scheduled`: paid for, waiting for its `sendAt`.
 */
export const letterStatuses = ['scheduled', 'received', 'ready_for_print', 'printing', 'printed', 'mailed', 'address_rejected', 'cancelled', 'failed'] as const
export type LetterStatus = (typeof letterStatuses)[number]

/** Each status in Spanish, as people read it (the floor's page, the answers that name a letter's status). */
export const letterStatusNames: Record<LetterStatus, string> = {
  scheduled: 'programada',
  received: 'recibida',
  ready_for_print: 'lista para imprimir',
  printing: 'en impresión',
  printed: 'impresa',
  mailed: 'enviada',
  address_rejected: 'dirección rechazada',
  cancelled: 'cancelada',
  failed: 'fallida',
}
