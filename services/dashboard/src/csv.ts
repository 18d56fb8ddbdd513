// The CSV of a bulk send, read in the browser so its columns can be matched to the API's before
// anything is sent: the same dialect the API reads (services/gateway/src/features/letters/bulk-csv.ts).

export interface CsvRow {
  /** Its row in the spreadsheet: the header is row 1. */
  line: number
  cells: string[]
}

export interface CsvTable {
  header: string[]
  rows: CsvRow[]
}

/** The separator of the header line: a semicolon (a Spanish Excel's) or a comma, as the API decides it. */
function separatorOf(text: string): ';' | ',' {
  const headerLine = text.split(/\r?\n|\r/, 1)[0] ?? ''
  const count = (character: string) => headerLine.split(character).length - 1
  return count(';') > count(',') ? ';' : ','
}

export class CsvProblem extends Error {}

/**
 * Rows of cells: quoted fields may hold separators, quotes ("" inside quotes) and line breaks.
 * Blank rows (nothing, or only separators) are left out, wherever they are.
 */
export function parseCsv(input: string): CsvTable {
  const text = input.replace(/^\uFEFF/, '')
  if (text.trim() === '') throw new CsvProblem('El archivo está vacío.')
  const separator = separatorOf(text)
  const records: CsvRow[] = []
  let cells: string[] = []
  let cell = ''
  let quoted = false
  let line = 1
  let recordLine = 1
  const endCell = () => {
    cells.push(cell)
    cell = ''
  }
  const endRecord = () => {
    endCell()
    if (cells.some((value) => value.trim() !== '')) records.push({ line: recordLine, cells })
    cells = []
    recordLine = line
  }
  for (let at = 0; at < text.length; at++) {
    const character = text[at]!
    if (quoted) {
      if (character === '"') {
        if (text[at + 1] === '"') {
          cell += '"'
          at++
        } else quoted = false
      } else {
        if (character === '\n') line++
        cell += character
      }
    } else if (character === '"' && cell === '') quoted = true
    else if (character === separator) endCell()
    else if (character === '\r' || character === '\n') {
      if (character === '\r' && text[at + 1] === '\n') at++
      line++
      endRecord()
    } else cell += character
  }
  if (quoted) throw new CsvProblem(`Unas comillas abiertas en la fila ${recordLine} no se cierran.`)
  if (cell !== '' || cells.length > 0) endRecord()
  const [header, ...rows] = records
  if (!header) throw new CsvProblem('El archivo está vacío.')
  return { header: header.cells.map((name) => name.trim()), rows }
}

const needsQuotes = /[",;\r\n]/

/** A table as the API reads it: comma-separated, quoted where needed, CRLF line ends. */
export function toCsv(header: string[], rows: string[][]): string {
  const field = (value: string) => (needsQuotes.test(value) ? `"${value.replace(/"/g, '""')}"` : value)
  return [header, ...rows].map((row) => row.map(field).join(',')).join('\r\n') + '\r\n'
}

/** A column's name reduced for matching: lower case, no accents, words separated by single spaces. */
export function normalizeHeader(name: string): string {
  return name
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[._\-/]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
}
