import { stringify } from 'csv-stringify/sync'
import { batchFileNames } from '@letters/artifacts'
import { spreadsheetText, stocksOf, type PrintSpec, type VerifiedAddress } from '@letters/contracts'
import { renderCardSheets, renderEnvelopes, type LetterToRender } from '@letters/render'

/** A letter of a batch as its files need it. */
export interface BatchLetter {
  letterId: string
  code: string
  address: Pick<VerifiedAddress, 'name' | 'surname' | 'address' | 'zip' | 'city' | 'province' | 'country'>
  /** Its designs and stocks; null for a letter accepted before designs had a product. */
  printSpec?: PrintSpec | null
}

// Spanish rules (ñ after n, accents ignored at first); numeric, so "Calle 9" comes before "Calle 10".
const collator = new Intl.Collator('es', { numeric: true, sensitivity: 'base' })

/**
 * The presorted order of a batch, the one its three files share: by destination country, then
 * postal code, then street (the post's presort), the letter's id last so the order is total and
 * a batch closed twice gets the same one.
 */
export function presorted<T extends BatchLetter>(batch: readonly T[]): T[] {
  return [...batch].sort(
    (a, b) =>
      a.address.country.localeCompare(b.address.country, 'en') ||
      collator.compare(a.address.zip, b.address.zip) ||
      collator.compare(a.address.address, b.address.address) ||
      a.letterId.localeCompare(b.letterId, 'en'),
  )
}

export const MANIFEST_COLUMNS = [
  'sequence',
  'letterId',
  'code',
  'name',
  'zip',
  'city',
  'province',
  'country',
  'cardDesign',
  'cardStock',
  'envelopeDesign',
  'envelopeStock',
] as const

/**
 * The batch's manifest, one row per letter in the files' order: CSV (RFC 4180: fields with commas,
 * quotes or line breaks quoted, quotes doubled) with CRLF line ends, in UTF-8 with a byte-order
 * mark, which is what makes Excel (in Spanish too) read it as UTF-8 rather than the system's
 * code page. `sequence` counts from 1; a client's text that Excel would run as a formula is
 * neutralised (spreadsheetText).
 */
export function manifestCsv(sorted: readonly BatchLetter[]): Buffer {
  const rows = sorted.map((letter, index) => [
    index + 1,
    letter.letterId,
    letter.code,
    spreadsheetText(`${letter.address.name} ${letter.address.surname}`.trim()),
    spreadsheetText(letter.address.zip),
    spreadsheetText(letter.address.city),
    spreadsheetText(letter.address.province ?? ''),
    spreadsheetText(letter.address.country),
    spreadsheetText(letter.printSpec?.card.name ?? ''),
    spreadsheetText(stocksOf(letter.printSpec ?? null).cardStock),
    spreadsheetText(letter.printSpec?.envelope.name ?? ''),
    spreadsheetText(stocksOf(letter.printSpec ?? null).envelopeStock),
  ])
  return Buffer.from(stringify([[...MANIFEST_COLUMNS], ...rows], { bom: true, record_delimiter: 'windows' }), 'utf8')
}

/** The three files of a batch, drawn from its letters in their presorted order. */
export async function buildBatchFiles(batchId: string, sorted: ReadonlyArray<BatchLetter & { drawing: LetterToRender }>) {
  const names = batchFileNames(batchId)
  const drawings = sorted.map((letter) => letter.drawing)
  const [cards, envelopes] = await Promise.all([renderCardSheets(drawings), renderEnvelopes(drawings)])
  return [
    { kind: 'cards', name: names.cards, data: cards },
    { kind: 'envelopes', name: names.envelopes, data: envelopes },
    { kind: 'manifest', name: names.manifest, data: manifestCsv(sorted) },
  ] as const
}
