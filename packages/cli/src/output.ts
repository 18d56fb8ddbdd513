import Table from 'cli-table3'

/** Where the CLI writes: stdout for results, stderr for errors and notes. */
export interface Io {
  out(text: string): void
  err(text: string): void
}

export const processIo: Io = {
  out: (text) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
  err: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
}

export type Cell = string | number | boolean | null | undefined

/**
 * Tables without borders, columns two spaces apart, as `kubectl get` or `docker ps` print them:
 * they read well in a terminal and still go through grep and awk. No colours: the tables go to
 * terminals, pipes and logs alike.
 */
const borderless = {
  chars: {
    top: '',
    'top-mid': '',
    'top-left': '',
    'top-right': '',
    bottom: '',
    'bottom-mid': '',
    'bottom-left': '',
    'bottom-right': '',
    left: '',
    'left-mid': '',
    mid: '',
    'mid-mid': '',
    right: '',
    'right-mid': '',
    middle: '  ',
  },
  style: { 'padding-left': 0, 'padding-right': 0, head: [], border: [] },
}

const cell = (value: Cell) => (value === null || value === undefined ? '' : String(value))

// The last column is padded like the others; a line ends where its text does.
const rendered = (table: Table.Table) =>
  table
    .toString()
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')

/** One record, a field a line: `[['id', …], ['name', …]]`. */
export function recordTable(rows: Array<[string, Cell]>): string {
  const table = new Table(borderless)
  for (const [field, value] of rows) table.push([field, cell(value)])
  return rendered(table)
}

/** A list, a record a line, under `head`. */
export function listTable(head: string[], rows: Cell[][]): string {
  const table = new Table({ ...borderless, head })
  for (const row of rows) table.push(row.map(cell))
  return rendered(table)
}

/** Seconds as a person reads an age: 45 s, 12 min, 2 h 5 min, 3 d 4 h. */
export function age(seconds: number): string {
  if (seconds < 60) return `${seconds} s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 60) return `${minutes} min`
  const hours = Math.floor(minutes / 60)
  if (hours < 24) return minutes % 60 ? `${hours} h ${minutes % 60} min` : `${hours} h`
  const days = Math.floor(hours / 24)
  return hours % 24 ? `${days} d ${hours % 24} h` : `${days} d`
}

const numberFormats = new Map<number, Intl.NumberFormat>()

/** A number as a Spanish reader writes it, as the API's messages do: decimal comma, at most `digits` decimals. */
export function num(value: number, digits = 0): string {
  let format = numberFormats.get(digits)
  if (!format) {
    format = new Intl.NumberFormat('es-ES', { maximumFractionDigits: digits })
    numberFormats.set(digits, format)
  }
  return format.format(value)
}

/** A size in millimetres: 148 × 105 mm, 177,8 × 127 mm. */
export function millimetres(size: { width: number; height: number }): string {
  return `${num(size.width, 1)} × ${num(size.height, 1)} mm`
}

/** A file's weight: 845 B, 18,2 KB, 3,4 MB. */
export function fileSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`
  if (bytes < 1024 * 1024) return `${num(bytes / 1024, 1)} KB`
  return `${num(bytes / 1024 / 1024, 1)} MB`
}
