import { CsvError, parse } from 'csv-parse/sync'
import { publicApi } from '@letters/contracts'
import { ApiError, badRequest } from '../../common/errors.js'
import type { CampaignForLetter } from '../campaigns/index.js'

/** A CSV body's rows, cells as text: the header, then one row per recipient. */
export interface CsvTable {
  header: string[]
  rows: string[][]
  /** More rows follow than a request may hold: parsing stopped there. */
  overLimit: boolean
}

/** A recipient as a CSV row gives it, for the same checks as a JSON one; or what is wrong with the row itself. */
export type CsvRecipient = { input: Record<string, unknown> } | { error: ApiError }

/** The recipient's own columns, as the contract names them (the rest are the campaign's variables). */
// ignoreSuppression is said for the whole file, in the query.
const RECIPIENT_COLUMNS = Object.keys(publicApi.BulkRecipient.properties).filter((name) => name !== 'variables' && name !== 'ignoreSuppression')
const REQUIRED_COLUMNS = new Set<string>(publicApi.BulkRecipient.required)

const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * The text of a `text/csv` body, its byte order mark (Excel's "CSV UTF-8" writes one) removed.
 * Any other encoding is refused rather than guessed: a name in Windows-1252 read as UTF-8 would
 * be printed wrong on a card someone paid for.
 */
export function decodeCsv(body: Buffer, charset: string | undefined): string {
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
    throw new ApiError(415, `El CSV debe estar en UTF-8; se ha enviado con charset=${charset}`)
  }
  let text: string
  try {
    text = utf8.decode(body)
  } catch {
    throw badRequest(NOT_UTF8)
  }
  // UTF-16 without a byte order mark decodes as UTF-8 full of NUL characters; no CSV has them.
  if (text.includes('\u0000')) throw badRequest(`${NOT_UTF8} (tiene caracteres nulos: parece UTF-16)`)
  return text
}

const NOT_UTF8 = 'El CSV no está en UTF-8: guárdalo como «CSV UTF-8» (en Excel: Guardar como, CSV UTF-8 delimitado por comas)'

/**
 * Where the text ends once its trailing blank rows (a spreadsheet's: nothing, or only spaces and
 * separators) are left out. A blank last line cannot be the end of a quoted field, which closes
 * with a quote.
 */
function endOfContent(text: string): number {
  // One pass from the end: `end` is where the content kept so far stops, moved back over each
  // line that holds only blanks and separators, and left where a line holds anything else.
  let end = text.length
  for (let at = text.length - 1; at >= 0; at--) {
    const character = text[at]!
    if (character === '\n' || character === '\r') end = at
    else if (character !== ',' && character !== ';' && !/\s/.test(character)) return end
  }
  return 0
}

/** The separator of the header row: a semicolon (Spanish Excel) or a comma. Column names hold neither. */
function separatorOf(text: string): ';' | ',' {
  const headerLine = text.split(/\r?\n|\r/, 1)[0] ?? ''
  const count = (character: string) => headerLine.split(character).length - 1
  return count(';') > count(',') ? ';' : ','
}

/** What csv-parse's refusals mean, in the words of someone who edits the file. */
const csvProblems: Record<string, string> = {
  CSV_QUOTE_NOT_CLOSED: 'unas comillas abiertas no se cierran',
  CSV_INVALID_CLOSING_QUOTE: 'tras unas comillas de cierre sigue texto en lugar del separador o el fin de la fila',
  INVALID_OPENING_QUOTE: 'hay unas comillas en medio de un campo sin comillas (escríbelas dobles: "")',
  CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE: 'tras unas comillas de cierre sigue texto en lugar del separador o el fin de la fila',
}

/**
 * The rows of a CSV body: separator taken from the header row, quoted fields with separators,
 * quotes and line breaks inside. Rows may differ in length (each is judged on its own later);
 * empty rows at the end (a spreadsheet's blank lines) are left out.
 */
export function parseCsv(text: string): CsvTable {
  // Trailing blank rows are cut before parsing, and parsing stops one row past the limit: a body
  // of millions of empty lines costs no more than a full request (the parser takes tens of
  // microseconds a row, and the event loop is every client's).
  const content = text.slice(0, endOfContent(text))
  if (content.trim() === '') throw badRequest('El CSV está vacío: envía una fila de cabecera y una fila por destinatario')
  const limit = publicApi.BULK_MAX_RECIPIENTS + 1
  let records: string[][]
  try {
    records = parse(content, { delimiter: separatorOf(content), bom: true, relax_column_count: true, skip_empty_lines: false, to: limit + 1 })
  } catch (error) {
    if (!(error instanceof CsvError)) throw error
    const line = (error as CsvError & { lines?: number }).lines
    throw badRequest(`El CSV no es válido${line ? ` (línea ${line})` : ''}: ${csvProblems[error.code] ?? 'no se puede leer'}`)
  }
  const blank = (row: string[]) => row.every((cell) => cell.trim() === '')
  let end = records.length
  while (end > 1 && blank(records[end - 1]!)) end--
  const [header = [], ...rows] = records.slice(0, end)
  return { header: header.map((name) => name.trim()), rows, overLimit: records.length > limit }
}

/**
 * Checks a CSV header once for the whole request (400): every column a recipient field or a
 * variable of the campaign, each once, the required fields there, and a column for every variable
 * without a default.
 */
function assertHeader(header: string[], campaign: CampaignForLetter, variables: ReadonlySet<string>): void {
  const seen = new Set<string>()
  header.forEach((name, position) => {
    if (name === '') throw badRequest(`La columna ${position + 1} de la cabecera del CSV no tiene nombre`)
    if (seen.has(name)) throw badRequest(`La columna '${name}' aparece dos veces en la cabecera del CSV`)
    seen.add(name)
    if (!RECIPIENT_COLUMNS.includes(name) && !variables.has(name)) {
      const allowed = [...RECIPIENT_COLUMNS, ...variables].join(', ')
      throw badRequest(`La columna '${name}' del CSV no es un campo del destinatario ni una variable de la campaña; las columnas admitidas son: ${allowed}`)
    }
  })
  for (const name of REQUIRED_COLUMNS) {
    if (!seen.has(name)) throw badRequest(`Falta la columna '${name}' en la cabecera del CSV`)
  }
  for (const variable of campaign.variables) {
    if (variable.defaultValue === null && !seen.has(variable.name)) {
      throw badRequest(`Falta la columna '${variable.name}' en la cabecera del CSV: es una variable de la campaña sin valor por defecto`)
    }
  }
}

/**
 * One row under a checked header as a recipient: an empty company or province is none, an empty
 * variable cell leaves the default; a column named like both a recipient field and a variable
 * fills both. A row whose length differs from the header's is a row-level error.
 */
function rowRecipient(header: string[], row: string[], variables: ReadonlySet<string>, hasVariableColumns: boolean): CsvRecipient {
  if (row.length !== header.length) {
    return { error: badRequest(`La fila tiene ${row.length} ${row.length === 1 ? 'columna' : 'columnas'} y la cabecera ${header.length}`) }
  }
  const input: Record<string, unknown> = {}
  // Without a prototype: a variable may be called `__proto__`, which on a plain object would set
  // the prototype instead of keeping the value.
  const values: Record<string, string> = Object.create(null)
  header.forEach((name, position) => {
    const cell = row[position]!
    if (RECIPIENT_COLUMNS.includes(name)) input[name] = cell === '' && !REQUIRED_COLUMNS.has(name) ? null : cell
    if (variables.has(name) && cell !== '') values[name] = cell
  })
  if (hasVariableColumns) input.variables = values
  return { input }
}

/** The recipients of a CSV table for a campaign: the header checked (assertHeader), then each row (rowRecipient). */
export function csvRecipients(table: CsvTable, campaign: CampaignForLetter): CsvRecipient[] {
  const variables = new Set(campaign.variables.map((variable) => variable.name))
  assertHeader(table.header, campaign, variables)
  const hasVariableColumns = table.header.some((name) => variables.has(name))
  return table.rows.map((row) => rowRecipient(table.header, row, variables, hasVariableColumns))
}
