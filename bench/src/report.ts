/** One line of the results table; empty cells stay empty. */
export interface Row {
  measure: string
  result: string
  p50?: string
  p99?: string
  failed?: string
  /** What the issue tracks: the result against its baseline in the same run. */
  ratio?: string
  /** The target for the row, and whether this run met it. */
  target?: string
}

const COLUMNS: Array<[keyof Row, string]> = [
  ['measure', 'Measure'],
  ['result', 'Result'],
  ['p50', 'p50'],
  ['p99', 'p99'],
  ['failed', 'Not 2xx'],
  ['ratio', 'Ratio'],
  ['target', 'Target'],
]

/** The results table, as a Markdown table of its columns. */
export function markdownTable(rows: Row[]): string {
  return grid(
    COLUMNS.map(([, title]) => title),
    rows.map((row) => COLUMNS.map(([key]) => row[key] ?? '')),
  )
}

/** A Markdown table of any columns, padded so that it also reads well in a terminal. */
export function grid(headers: string[], rows: string[][]): string {
  const cells = [headers, ...rows]
  const widths = headers.map((_, column) => Math.max(...cells.map((line) => (line[column] ?? '').length)))
  const line = (values: string[]) => `| ${widths.map((width, column) => (values[column] ?? '').padEnd(width)).join(' | ')} |`
  return [line(headers), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n')
}

const wholeNumber = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 })
const oneDecimal = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1, minimumFractionDigits: 1 })

/** 1,310 for large figures, 2.5 for small ones. */
export const figure = (value: number) => (Math.abs(value) >= 100 ? wholeNumber.format(value) : oneDecimal.format(value))
/** 1,000. */
export const whole = (value: number) => wholeNumber.format(value)
export const perSecond = (value: number, unit: string) => `${figure(value)} ${unit}/s`
export const ms = (value: number) => `${figure(value)} ms`
/** autocannon's latencies come in whole milliseconds. */
export const wholeMs = (value: number) => (value < 1 ? '< 1 ms' : `${wholeNumber.format(value)} ms`)
export const times = (value: number, of: string) => `${value >= 10 ? wholeNumber.format(value) : value.toFixed(2)}× ${of}`
export const percent = (value: number, of: string) => `${wholeNumber.format(value * 100)}% of ${of}`
export const target = (wanted: string, met: boolean) => `${wanted}: ${met ? 'met' : 'not met'}`

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length / 2
  return sorted.length % 2 === 1 ? sorted[Math.floor(middle)]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}
