/** Why an upload is refused, as the API answers it: the status and a message in Spanish for the client. */
export interface Refusal {
  refused: true
  status: 400 | 413 | 415
  message: string
}

export function refusal(status: Refusal['status'], message: string): Refusal {
  return { refused: true, status, message }
}

export function isRefusal(value: unknown): value is Refusal {
  return typeof value === 'object' && value !== null && (value as { refused?: unknown }).refused === true
}

/**
 * Thrown by the checks deep inside a parser's callbacks, where returning is not possible, and
 * turned back into a Refusal at the top: it never leaves the package.
 */
export class RefusedError extends Error {
  readonly refusal: Refusal
  constructor(status: Refusal['status'], message: string) {
    super(message)
    this.name = 'RefusedError'
    this.refusal = refusal(status, message)
  }
}

export function refuse(message: string, status: Refusal['status'] = 400): never {
  throw new RefusedError(status, message)
}

const formats = new Map<number, Intl.NumberFormat>()

/** A number as a Spanish reader writes it: decimal comma, at most `digits` decimals, thousands grouped from five digits ("1,41", "1748", "10.000"). */
export function num(value: number, digits = 0): string {
  let format = formats.get(digits)
  if (!format) {
    format = new Intl.NumberFormat('es-ES', { maximumFractionDigits: digits })
    formats.set(digits, format)
  }
  return format.format(value)
}

/** A ratio always with two decimals, so two ratios in one message compare at a glance ("1,41" against "1,50"). */
export function ratio(value: number): string {
  return new Intl.NumberFormat('es-ES', { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(value)
}

/** A size in millimetres: "148 × 105 mm", "177,8 × 127 mm". */
export function mm(size: { width: number; height: number }, digits = 1): string {
  return `${num(size.width, digits)} × ${num(size.height, digits)} mm`
}

/** A size in pixels: "1748 × 1240 px". */
export function px(size: { width: number; height: number }): string {
  return `${num(size.width)} × ${num(size.height)} px`
}

/** Part of a client's own text quoted in a message: short, on one line. */
export function quote(text: string, max = 60): string {
  const line = text.replace(/\s+/g, ' ').trim()
  return `«${line.length > max ? `${line.slice(0, max - 1)}…` : line}»`
}
