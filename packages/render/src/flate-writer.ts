/**
 * A page stream written straight into its compressed form (zlib's format, the PDF's FlateDecode).
 *
 * A card's shaped glyphs are some 40,000 numbers. Written as text and then deflated, each number
 * was formatted, copied and then read again by zlib, which spent as long as the drawing itself
 * finding repeats that these numbers barely have. Here each number (with the space after it) is
 * one entry of a table made once: its Huffman code and its share of the checksum, appended in a
 * few operations. The code is deflate's own (one block with a code of ours, RFC 1951), so every
 * PDF reader inflates it as it inflates anything else.
 *
 * The code is fixed, fitted to what a page of writing holds (digits and spaces, a few operators):
 * within a few percent of the best code for each page, and the same for every page, so the bytes
 * depend on the page alone.
 */
import type { PageStream } from './ascii.js'
import { CLOSE, CURVE, LINE } from './shape.js'

/**
 * How often each byte comes in a page of shaped writing, per 10,000 (measured on a card's stream);
 * every other byte is rare but must have a code too.
 */
const WEIGHTS: Record<string, number> = {
  ' ': 2884,
  '1': 1491,
  '2': 624,
  '0': 586,
  '3': 582,
  '4': 537,
  '6': 528,
  '5': 513,
  '7': 504,
  '8': 472,
  '9': 440,
  c: 376,
  '-': 129,
  '.': 96,
  m: 66,
  '\n': 31,
  f: 27,
  q: 25,
  Q: 25,
  T: 19,
  l: 15,
  z: 6,
  '<': 6,
  '>': 6,
  j: 6,
  e: 3,
  d: 2,
}

/** Deflate's longest code. */
const MAX_BITS = 15
/** The end of a block: the symbol after the 256 bytes. */
const END_OF_BLOCK = 256
const SYMBOLS = 257

/**
 * Code lengths for `weights` (one per symbol, all above 0): Huffman's, then limited to MAX_BITS
 * and made complete, as deflate's readers require (the lengths' Kraft sum exactly 1).
 */
export function codeLengths(weights: readonly number[]): Uint8Array {
  const count = weights.length
  // Huffman's tree, by merging the two lightest: parents after the leaves.
  const weight = [...weights]
  const parent = new Int32Array(2 * count).fill(-1)
  const live = weights.map((_, index) => index)
  while (live.length > 1) {
    live.sort((a, b) => weight[b]! - weight[a]! || b - a)
    const a = live.pop()!
    const b = live.pop()!
    const node = weight.length
    weight.push(weight[a]! + weight[b]!)
    parent[a] = node
    parent[b] = node
    live.push(node)
  }
  const lengths = new Uint8Array(count)
  for (let symbol = 0; symbol < count; symbol++) {
    let depth = 0
    for (let node = symbol; parent[node] !== -1; node = parent[node]!) depth++
    lengths[symbol] = Math.min(MAX_BITS, Math.max(1, depth))
  }
  // Kraft's sum in units of 2^-MAX_BITS: over 2^MAX_BITS, the lightest codes are lengthened;
  // under it, the heaviest shortened, until it is exactly that.
  const full = 1 << MAX_BITS
  const unit = (length: number) => 1 << (MAX_BITS - length)
  let kraft = lengths.reduce((sum, length) => sum + unit(length), 0)
  const byWeight = weights.map((_, index) => index).sort((a, b) => weights[a]! - weights[b]! || a - b)
  while (kraft > full) {
    const symbol = byWeight.find((index) => lengths[index]! < MAX_BITS)!
    kraft -= unit(lengths[symbol]! + 1)
    lengths[symbol]!++
  }
  for (let index = byWeight.length - 1; index >= 0 && kraft < full; index--) {
    const symbol = byWeight[index]!
    while (lengths[symbol]! > 1 && kraft + unit(lengths[symbol]!) <= full) {
      kraft += unit(lengths[symbol]!)
      lengths[symbol]!--
    }
  }
  if (kraft !== full) throw new Error('the page stream code is not complete')
  return lengths
}

/** Deflate's canonical codes for `lengths`, bit-reversed: written from the low bit, as deflate reads them. */
export function canonicalCodes(lengths: Uint8Array): Uint32Array {
  const perLength = new Uint32Array(MAX_BITS + 1)
  for (const length of lengths) if (length) perLength[length]!++
  const next = new Uint32Array(MAX_BITS + 2)
  let code = 0
  for (let length = 1; length <= MAX_BITS; length++) {
    code = (code + perLength[length - 1]!) << 1
    next[length] = code
  }
  const codes = new Uint32Array(lengths.length)
  lengths.forEach((length, symbol) => {
    if (!length) return
    let value = next[length]!++
    let reversed = 0
    for (let bit = 0; bit < length; bit++, value >>= 1) reversed = (reversed << 1) | (value & 1)
    codes[symbol] = reversed
  })
  return codes
}

const LENGTHS = codeLengths(Array.from({ length: SYMBOLS }, (_, symbol) => (symbol < 256 ? (WEIGHTS[String.fromCharCode(symbol)] ?? 0) * 100 + 1 : 1)))
const CODES = canonicalCodes(LENGTHS)

/** The whole numbers from -LARGEST to LARGEST, with a space after them, are each one entry (Tokens). */
const LARGEST = 999
/** Bits a token may have: with the up to 7 still waiting for a whole byte, within 31. */
const MAX_TOKEN_BITS = 24

/**
 * Texts written as one entry each, two numbers a text: `code`, its bits above their count (the low
 * 5 bits); `adler`, what it adds to the Adler-32 checksum: its byte count (the low 3 bits), its
 * bytes' sum (the next 10) and that sum weighted by how many bytes follow each (the rest).
 */
interface Tokens {
  code: Uint32Array
  adler: Uint32Array
}

function tokensOf(texts: readonly string[]): Tokens {
  const tokens: Tokens = { code: new Uint32Array(texts.length), adler: new Uint32Array(texts.length) }
  texts.forEach((text, index) => {
    let bits = 0
    let length = 0
    let sum = 0
    let weighted = 0
    for (let i = 0; i < text.length; i++) {
      const byte = text.charCodeAt(i)
      bits |= CODES[byte]! << length
      length += LENGTHS[byte]!
      sum += byte
      weighted += (text.length - i) * byte
    }
    if (length > MAX_TOKEN_BITS || text.length > 7 || sum > 1023) throw new Error(`the page stream's table cannot hold "${text}"`)
    tokens.code[index] = ((bits << 5) | length) >>> 0
    tokens.adler[index] = (weighted * 8192 + sum * 8 + text.length) >>> 0
  })
  return tokens
}

const NUMBERS = tokensOf(Array.from({ length: 2 * LARGEST + 1 }, (_, index) => `${index - LARGEST} `))
/** 0 to 999 as they are, with no space: the thousands of a larger number, the whole part of a decimal. */
const LEADING = tokensOf(Array.from({ length: 1000 }, (_, index) => `${index}`))
/** 000 to 999 and a space: a larger number's last three digits. */
const THREE_DIGITS = tokensOf(Array.from({ length: 1000 }, (_, index) => `${String(index).padStart(3, '0')} `))
/** 0000 to 9999 and a space: a decimal's four decimals. */
const DECIMALS = tokensOf(Array.from({ length: 10000 }, (_, index) => `${String(index).padStart(4, '0')} `))
/** An outline's operators by its command (MOVE, LINE, CURVE). */
const OPERATORS = tokensOf(['m ', 'l ', 'c '])
/** What frames a glyph's path: its state saved and its matrix set, then its fill and its state restored. */
const FRAME = tokensOf(['q ', 'cm ', 'f ', 'Q\n'])
const [SAVE, MATRIX, FILL, RESTORE] = [0, 1, 2, 3]
/** A number's sign and decimal point. */
const SIGNS = tokensOf(['-', '.'])
const [MINUS, POINT] = [0, 1]

const ADLER = 65521
/** Updates between reductions of the checksum: its sums stay far within a double's exact integers. */
const ADLER_BATCH = 4096
/**
 * Added before truncating, to round a number of the tables' range by truncation; a rounding that
 * is not Math.round's (within a few 1e-13 of a half, where the sum itself rounds) is caught and
 * done again by Math.round.
 */
const ROUNDING = 1024

/** The block's header: a code of our own (BTYPE 2), the last block (BFINAL). */
function writeHeader(writer: FlateWriter): void {
  // zlib's header: deflate with a 32 KB window, no dictionary, level "fastest" (for information),
  // and the check bits that make the two bytes a multiple of 31.
  writer.raw(0x78)
  writer.raw(0x01)
  writer.bitsOut(1, 1) // BFINAL
  writer.bitsOut(2, 2) // BTYPE: dynamic Huffman codes
  writer.bitsOut(SYMBOLS - 257, 5) // HLIT: 257 literal/length codes
  writer.bitsOut(1, 5) // HDIST: 2 distance codes (never used; two, so that their code is complete)
  writer.bitsOut(19 - 4, 4) // HCLEN: all 19 code length codes
  // The code lengths' own code: lengths 0 to 15 each in 4 bits (16 symbols, a complete code);
  // the repeat codes (16, 17, 18) unused. Sent in deflate's order.
  const order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]
  for (const symbol of order) writer.bitsOut(symbol <= 15 ? 4 : 0, 3)
  const lengthCodes = canonicalCodes(Uint8Array.from({ length: 19 }, (_, symbol) => (symbol <= 15 ? 4 : 0)))
  for (let symbol = 0; symbol < SYMBOLS; symbol++) writer.bitsOut(lengthCodes[LENGTHS[symbol]!]!, 4)
  // The two distance codes, of length 1 each.
  writer.bitsOut(lengthCodes[1]!, 4)
  writer.bitsOut(lengthCodes[1]!, 4)
}

export class FlateWriter implements PageStream {
  private out = new Uint8Array(1 << 16)
  private at = 0
  /** Bits not yet a whole byte (fewer than 8), from the low bit. */
  private bits = 0
  private pending = 0
  private adlerA = 1
  private adlerB = 0
  private sinceReduced = 0
  private taken: Uint8Array | null = null

  constructor() {
    writeHeader(this)
  }

  /** A byte as it is (the zlib header, the checksum), on a byte boundary. */
  raw(byte: number): void {
    this.reserve(1)
    this.out[this.at++] = byte
  }

  /** `length` bits of `value`, from its low bit. */
  bitsOut(value: number, length: number): void {
    this.reserve(4)
    this.bits |= value << this.pending
    this.pending += length
    while (this.pending >= 8) {
      this.out[this.at++] = this.bits & 255
      this.bits >>>= 8
      this.pending -= 8
    }
  }

  private reserve(count: number): void {
    if (this.at + count <= this.out.length) return
    const larger = new Uint8Array(Math.max(this.out.length * 2, this.at + count))
    larger.set(this.out.subarray(0, this.at))
    this.out = larger
  }

  private reduce(): void {
    this.adlerA %= ADLER
    this.adlerB %= ADLER
    this.sinceReduced = 0
  }

  /** One byte of the page's text. */
  private byte(byte: number): void {
    this.bitsOut(CODES[byte]!, LENGTHS[byte]!)
    this.adlerA += byte
    this.adlerB += this.adlerA
    if (++this.sinceReduced >= ADLER_BATCH) this.reduce()
  }

  /** A text of a table's. */
  private put(tokens: Tokens, index: number): void {
    this.reserve(4)
    const out = this.out
    const code = tokens.code[index]!
    const adler = tokens.adler[index]!
    let at = this.at
    let bits = this.bits | ((code >>> 5) << this.pending)
    let pending = this.pending + (code & 31)
    while (pending >= 8) {
      out[at++] = bits & 255
      bits >>>= 8
      pending -= 8
    }
    this.at = at
    this.bits = bits
    this.pending = pending
    this.adlerB += (adler & 7) * this.adlerA + (adler >>> 13)
    this.adlerA += (adler >>> 3) & 1023
    if (++this.sinceReduced >= ADLER_BATCH) this.reduce()
  }

  text(value: string): void {
    // Checked whole first: a refused text writes nothing.
    for (let i = 0; i < value.length; i++) if (value.charCodeAt(i) > 255) throw new Error('a page stream is written in latin1')
    for (let i = 0; i < value.length; i++) this.byte(value.charCodeAt(i))
  }

  fixed4(value: number): void {
    if (!Number.isFinite(value)) throw new Error(`a page stream's number is not finite: ${value}`)
    let n = Math.round(value * 10000)
    if (n < 0) {
      this.put(SIGNS, MINUS)
      n = -n
    }
    const whole = Math.floor(n / 10000)
    if (whole > 999) this.text(String(whole))
    else this.put(LEADING, whole)
    this.put(SIGNS, POINT)
    this.put(DECIMALS, n - whole * 10000)
  }

  int(value: number): void {
    if (!Number.isInteger(value)) throw new Error(`a page stream's whole number is not whole: ${value}`)
    if (value >= -LARGEST && value <= LARGEST) return this.put(NUMBERS, value + LARGEST)
    const magnitude = Math.abs(value)
    if (magnitude >= 1_000_000) return this.text(`${value} `)
    if (value < 0) this.put(SIGNS, MINUS)
    const thousands = Math.floor(magnitude / 1000)
    this.put(LEADING, thousands)
    this.put(THREE_DIGITS, magnitude - thousands * 1000)
  }

  shape(a: number, b: number, c: number, d: number, e: number, f: number, ops: Uint8Array, points: Float64Array, count: number, units: number): void {
    this.put(FRAME, SAVE)
    this.fixed4(a)
    this.fixed4(b)
    this.fixed4(c)
    this.fixed4(d)
    this.int(e)
    this.int(f)
    this.put(FRAME, MATRIX)
    this.path(ops, points, count, units)
    this.put(FRAME, FILL)
    this.put(FRAME, RESTORE)
  }

  /**
   * As `put`, with the writer's state in locals for the loop: the numbers' and operators' entries
   * are appended here as `put` appends them.
   */
  path(ops: Uint8Array, points: Float64Array, count: number, units: number): void {
    const numberCodes = NUMBERS.code
    const numberAdler = NUMBERS.adler
    // A segment is at most six numbers and an operator, each at most 3 bytes once coded.
    const room = ops.length * 21 + 8
    if (count > ops.length * 6) throw new Error('a path has more points than its segments take')
    this.reserve(room)
    let out = this.out
    let at = this.at
    let bits = this.bits
    let pending = this.pending
    let a = this.adlerA
    let b = this.adlerB
    let sinceReduced = this.sinceReduced
    let point = 0
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]!
      if (op === CLOSE) continue
      const end = point + (op === CURVE ? 6 : 2)
      const which = op === CURVE ? 2 : op === LINE ? 1 : 0
      // The segment's numbers, then its operator.
      for (; point <= end; point++) {
        let code: number
        let adler: number
        if (point < end) {
          const value = points[point]! * units
          let n = ((value + ROUNDING + 0.5) | 0) - ROUNDING
          // Math.round's answer lies within a half of the value, the lower half included (both exact comparisons).
          if (!(value >= n - 0.5 && value < n + 0.5)) n = Math.round(value)
          if (!(n >= -LARGEST && n <= LARGEST)) {
            // A number this path's units rarely reach: written as any larger number is.
            this.store(at, bits, pending, a, b, sinceReduced)
            // Whole again (a NaN is refused there), by Math.round, as the text writer rounds.
            this.int(Math.round(value))
            this.reserve(room)
            out = this.out
            at = this.at
            bits = this.bits
            pending = this.pending
            a = this.adlerA
            b = this.adlerB
            sinceReduced = this.sinceReduced
            continue
          }
          code = numberCodes[n + LARGEST]!
          adler = numberAdler[n + LARGEST]!
        } else {
          code = OPERATORS.code[which]!
          adler = OPERATORS.adler[which]!
        }
        bits |= (code >>> 5) << pending
        pending += code & 31
        while (pending >= 8) {
          out[at++] = bits & 255
          bits >>>= 8
          pending -= 8
        }
        b += (adler & 7) * a + (adler >>> 13)
        a += (adler >>> 3) & 1023
      }
      point = end
      // Seven texts a segment at most: within the batch the sums stay exact.
      sinceReduced += 7
      if (sinceReduced >= ADLER_BATCH) {
        a %= ADLER
        b %= ADLER
        sinceReduced = 0
      }
    }
    this.store(at, bits, pending, a, b, sinceReduced)
  }

  /** The writer's state, from the locals `path` keeps it in. */
  private store(at: number, bits: number, pending: number, adlerA: number, adlerB: number, sinceReduced: number): void {
    this.at = at
    this.bits = bits
    this.pending = pending
    this.adlerA = adlerA
    this.adlerB = adlerB
    this.sinceReduced = sinceReduced
  }

  /** The stream, ended: the block's end, the last bits, the checksum. The same bytes if asked again. */
  take(): Uint8Array {
    if (this.taken) return this.taken
    this.bitsOut(CODES[END_OF_BLOCK]!, LENGTHS[END_OF_BLOCK]!)
    if (this.pending > 0) this.bitsOut(0, 8 - this.pending)
    this.reduce()
    const checksum = ((this.adlerB << 16) | this.adlerA) >>> 0
    for (const shift of [24, 16, 8, 0]) this.raw((checksum >>> shift) & 255)
    this.taken = this.out.subarray(0, this.at)
    return this.taken
  }
}
