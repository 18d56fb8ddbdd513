/**
 * PRINTER=batch: a tray's statuses and the moves between them, the one list of both. `open` takes
 * letters (one open batch per stocks and ink); `closing` takes no more, its order is fixed and its
 * three files are being handed over; `handed` once all three were and its letters are printed.
 * The tray closes a batch (open → closing), the closer hands it over (closing → handed); nothing
 * moves a batch back.
 */
export const printBatchStatuses = ['open', 'closing', 'handed'] as const
export type PrintBatchStatus = (typeof printBatchStatuses)[number]

export const printBatchTransitions = {
  open: ['closing'],
  closing: ['handed'],
  handed: [],
} as const satisfies Record<PrintBatchStatus, readonly PrintBatchStatus[]>

/** Each status by its name, for the call sites that read or write one. */
export const printBatchStatus = { open: 'open', closing: 'closing', handed: 'handed' } as const satisfies { [Status in PrintBatchStatus]: Status }

/** A move the table allows: the status a batch must be in (the update's guard) and the one it gets. */
export function printBatchMove<From extends PrintBatchStatus, To extends (typeof printBatchTransitions)[From][number]>(
  from: From,
  to: To,
): { from: From; to: To } {
  return { from, to }
}

/**
 * The statuses of a batch not handed over yet: every one a move leads out of. Read through
 * print_batches_status_idx as an `IN` list, where `<> 'handed'` read every batch ever printed.
 */
export const notHandedBatchStatuses = printBatchStatuses.filter((status) => printBatchTransitions[status].length > 0) as Array<
  { [Status in PrintBatchStatus]: (typeof printBatchTransitions)[Status] extends readonly [] ? never : Status }[PrintBatchStatus]
>
