import { CLOSE, CURVE, LINE } from './shape.js'

/** What a page's writing is written into: its operators and numbers, as text or straight into a compressed stream (flate-writer.ts). */
export interface PageStream {
  /** Text as it is (operators, names, numbers already formatted): latin1, one byte per character. */
  text(value: string): void
  /** A number with four decimals, and a space. */
  fixed4(value: number): void
  /** A whole number, and a space. */
  int(value: number): void
  /**
   * An outline's path with the points of `points` (ems, written in `units` per em, rounded), in
   * the page stream's operators. Each contour is closed by the fill that follows, so `h` is not
   * written.
   */
  path(ops: Uint8Array, points: Float64Array, count: number, units: number): void
  /** A glyph: its path (as `path`) under the matrix a to f (a written to four decimals, e and f whole), filled. */
  shape(a: number, b: number, c: number, d: number, e: number, f: number, ops: Uint8Array, points: Float64Array, count: number, units: number): void
}

/**
 * A page stream written as bytes: a card's shaped glyphs are some 40,000 numbers, and building
 * them as strings (a string per number, per glyph, then one join) cost more than drawing them.
 * Callers reserve room for what they are about to write (`reserve`), then write without checks.
 */
export class AsciiWriter implements PageStream {
  bytes = new Uint8Array(1 << 17)
  at = 0

  /** Room for `count` more bytes. */
  reserve(count: number): void {
    if (this.at + count <= this.bytes.length) return
    const larger = new Uint8Array(Math.max(this.bytes.length * 2, this.at + count))
    larger.set(this.bytes.subarray(0, this.at))
    this.bytes = larger
  }

  /** Text as it is (operators, names, numbers already formatted): latin1, one byte per character. */
  text(value: string): void {
    this.reserve(value.length)
    const { bytes } = this
    for (let i = 0; i < value.length; i++) bytes[this.at + i] = value.charCodeAt(i)
    this.at += value.length
  }

  /** A number with four decimals, and a space. */
  fixed4(value: number): void {
    this.reserve(24)
    let n = Math.round(value * 10000)
    const { bytes } = this
    if (n < 0) {
      bytes[this.at++] = 45
      n = -n
    }
    const whole = Math.floor(n / 10000)
    const fraction = n - whole * 10000
    this.at = writeInt(bytes, this.at, whole) - 1
    bytes[this.at] = 46 // .
    bytes[this.at + 1] = 48 + Math.floor(fraction / 1000)
    bytes[this.at + 2] = 48 + (Math.floor(fraction / 100) % 10)
    bytes[this.at + 3] = 48 + (Math.floor(fraction / 10) % 10)
    bytes[this.at + 4] = 48 + (fraction % 10)
    bytes[this.at + 5] = 32
    this.at += 6
  }

  /** An integer of at most 9 digits, and a space. */
  int(value: number): void {
    this.reserve(INT_BYTES)
    this.at = writeInt(this.bytes, this.at, value)
  }

  path(ops: Uint8Array, points: Float64Array, count: number, units: number): void {
    this.reserve(count * INT_BYTES + ops.length * 2)
    const bytes = this.bytes
    let at = this.at
    let point = 0
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]!
      if (op === CLOSE) continue
      const end = point + (op === CURVE ? 6 : 2)
      for (; point < end; point++) at = writeInt(bytes, at, Math.round(points[point]! * units))
      bytes[at++] = op === CURVE ? 99 : op === LINE ? 108 : 109 // c, l, m
      bytes[at++] = 32
    }
    this.at = at
  }

  shape(a: number, b: number, c: number, d: number, e: number, f: number, ops: Uint8Array, points: Float64Array, count: number, units: number): void {
    this.text('q ')
    this.fixed4(a)
    this.fixed4(b)
    this.fixed4(c)
    this.fixed4(d)
    this.int(e)
    this.int(f)
    this.text('cm ')
    this.path(ops, points, count, units)
    this.text('f Q\n')
  }

  /** What was written, as a buffer of its own. */
  take(): Buffer {
    return Buffer.from(this.bytes.buffer, 0, this.at)
  }
}

/** The most bytes `writeInt` writes for a number of at most 9 digits. */
export const INT_BYTES = 11

/** The digits of 0 to 999, three bytes each, with how many count first: four bytes a number. */
const SMALL = new Uint8Array(4000)
for (let n = 0; n < 1000; n++) {
  const digits = String(n)
  SMALL[4 * n] = digits.length
  for (let i = 0; i < digits.length; i++) SMALL[4 * n + 1 + i] = digits.charCodeAt(i)
}

/** An integer of at most 9 digits and a space after it, at `at` in `bytes`; where it ends. */
export function writeInt(bytes: Uint8Array, at: number, value: number): number {
  let n = value
  if (n < 0) {
    bytes[at++] = 45 // -
    n = -n
  }
  if (n < 1000) {
    const k = 4 * n
    const length = SMALL[k]!
    bytes[at] = SMALL[k + 1]!
    bytes[at + 1] = SMALL[k + 2]!
    bytes[at + 2] = SMALL[k + 3]!
    at += length
  } else {
    const digits = String(n)
    for (let i = 0; i < digits.length; i++) bytes[at + i] = digits.charCodeAt(i)
    at += digits.length
  }
  bytes[at++] = 32
  return at
}
