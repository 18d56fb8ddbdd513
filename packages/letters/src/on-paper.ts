import type { PrintJournal } from '@letters/artifacts'

/** The event of a letter whose batch was handed over: client-visible, it names the batch and the letter's place in it. */
export const batchPrintedDetail = (batchId: string, sequence: number, count: number) =>
  `Entregada a la impresora en el lote ${batchId} (n.º ${sequence} de ${count})`

/** The event of a letter found on paper by the print journal: the database had forgotten its print (a restore). */
export const JOURNAL_PRINTED_DETAIL = 'Ya se había entregado a la impresora, según el diario de impresión: no se vuelve a imprimir'

/**
 * Whether the print journal has a letter on paper, and the event that says so: every file of
 * one of its print jobs taken by the printer, or every file of a batch that holds it. Undefined
 * when it has not (nothing, or part of a job).
 */
export async function onPaperPerJournal(journal: PrintJournal, letterId: string): Promise<{ detail: string } | undefined> {
  if ((await journal.letter(letterId)).complete) return { detail: JOURNAL_PRINTED_DETAIL }
  const batch = await journal.printedBatchOf(letterId)
  if (!batch) return undefined
  const sequence = batch.letterIds.indexOf(letterId) + 1
  return { detail: `${batchPrintedDetail(batch.batchId, sequence, batch.letterIds.length)}, según el diario de impresión` }
}
