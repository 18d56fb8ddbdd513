/**
 * A page stream written as bytes: a card's shaped glyphs are some 40,000 numbers, and building
 * them as strings (a string per number, per glyph, then one join) cost more than drawing them.
 * Callers reserve room for what they are about to write (`reserve`), then write without checks.
 */
export class AsciiWriter {
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
