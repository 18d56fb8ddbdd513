/** What moves an account's credits: a letter charged or refunded, a top-up, an adjustment by ops. */
export const ledgerKinds = ['charge', 'refund', 'top_up', 'adjustment'] as const
export type LedgerKind = (typeof ledgerKinds)[number]
