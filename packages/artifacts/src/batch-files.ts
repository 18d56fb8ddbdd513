/**
 * A batch's three files (PRINTER=batch), named once for the production worker that writes them
 * and the floor's page that serves them.
 */
export const batchFileKinds = ['cards', 'envelopes', 'manifest'] as const
export type BatchFileKind = (typeof batchFileKinds)[number]

/** Each file's media type, as the floor's page serves it. */
export const batchFileMediaTypes: Record<BatchFileKind, string> = {
  cards: 'application/pdf',
  envelopes: 'application/pdf',
  manifest: 'text/csv; charset=utf-8',
}

/** The names of a batch's three files on the floor, in the order they are handed over. */
export function batchFileNames(batchId: string): Record<BatchFileKind, string> {
  return { cards: `batch-${batchId}.cards.pdf`, envelopes: `batch-${batchId}.envelopes.pdf`, manifest: `batch-${batchId}.manifest.csv` }
}

/** Where the artifact store keeps a batch's files. */
export const batchFolder = (batchId: string) => `batches/${batchId}`

/** Where the artifact store keeps a file of a batch (`name` as batchFileNames gives it). */
export const batchFileKey = (batchId: string, name: string) => `${batchFolder(batchId)}/${name}`
