/** What moves an account's credits: a letter charged or refunded, a top-up, an adjustment by ops. */
export const ledgerKinds = ['charge', 'refund', 'top_up', 'adjustment'] as const
export type LedgerKind = (typeof ledgerKinds)[number]

/**
 * The reasons the service writes on the ledger entries it makes itself, in Spanish: a client
 * reads them in the dashboard and in its movements' CSV. (Entries written before they were
 * Spanish keep their English words.)
 */
export const ledgerReasons = {
  openingCredits: 'créditos iniciales',
  cancelledByClient: 'cancelada por el cliente',
  addressRejected: 'dirección rechazada',
} as const
