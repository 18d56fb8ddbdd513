import { constants, deflateSync, inflateSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { AsciiWriter, type PageStream } from '../src/ascii.js'
import { FlateWriter, canonicalCodes, codeLengths } from '../src/flate-writer.js'
import { CLOSE, CURVE, LINE, MOVE } from '../src/shape.js'

/** A seeded stream of numbers in [0, 1), so that a failure can be run again. */
function numbers(seed: number): () => number {
  let state = seed
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    return state / 4294967296
  }
}

/** The same calls on any page stream: shapes of every size, numbers past the tables, decimals, text. */
function write(stream: PageStream, seed: number): void {
  const random = numbers(seed)
  stream.text('q 0.01 0 0 0.01 0 0 cm\n0.106 0.227 0.549 rg\n')
  for (let glyph = 0; glyph < 60; glyph++) {
    const segments = 1 + Math.floor(random() * 40)
    const ops = new Uint8Array(segments + 2)
    ops[0] = MOVE
    for (let i = 1; i <= segments; i++) ops[i] = random() < 0.8 ? CURVE : LINE
    ops[segments + 1] = CLOSE
    const count = ops.reduce((sum, op) => sum + (op === CURVE ? 6 : op === CLOSE ? 0 : 2), 0)
    // Mostly within the number tables (a glyph's units), sometimes far past them.
    const spread = glyph % 7 === 0 ? 40 : 0.9
    const points = Float64Array.from({ length: count }, () => (random() - 0.3) * spread)
    stream.shape((random() - 0.5) * 8, -0.00001, random() * 2000, -3.73219, Math.round((random() - 0.5) * 4e6), -1000, ops, points, count, 400)
  }
  for (const value of [0, -1, 999, -999, 1000, -1000, 123456, -999999, 1_000_000, -123_456_789]) stream.int(value)
  for (const value of [0, 0.00004, -0.00005, 1234.56789, -7.5]) stream.fixed4(value)
  stream.text('q BT /HandText 1 Tf 3 Tr\n100 Tz 12 0 0 -12 30 40 Tm <00410042> Tj\nET Q\nÁé\u00ff')
}

describe('a page stream written straight into deflate', () => {
  it('inflates, checksum and all, to the very bytes the same calls write as text', () => {
    for (let seed = 1; seed <= 25; seed++) {
      const text = new AsciiWriter()
      const flate = new FlateWriter()
      write(text, seed)
      write(flate, seed)
      // inflateSync checks the zlib header and the Adler-32 checksum, and throws on either.
      expect(inflateSync(flate.take()).equals(text.take())).toBe(true)
    }
  })

  it('keeps its checksum exact over a long stream (a page of several hundred thousand bytes)', () => {
    const text = new AsciiWriter()
    const flate = new FlateWriter()
    for (let seed = 100; seed < 140; seed++) {
      write(text, seed)
      write(flate, seed)
    }
    const raw = text.take()
    expect(raw.length).toBeGreaterThan(300_000)
    expect(inflateSync(flate.take()).equals(raw)).toBe(true)
  })

  it('packs a page of writing about as small as zlib’s own Huffman coding does', () => {
    const text = new AsciiWriter()
    const flate = new FlateWriter()
    write(text, 7)
    write(flate, 7)
    const raw = text.take()
    const packed = flate.take().length
    const huffman = deflateSync(raw, { level: constants.Z_BEST_SPEED, strategy: constants.Z_HUFFMAN_ONLY }).length
    console.log(`${raw.length} bytes of page stream in ${packed} bytes; zlib's Huffman coding: ${huffman}`)
    expect(packed).toBeLessThan(huffman * 1.1)
  })

  it('rounds as the text writer does where a sum would round otherwise: next to a half, far below zero, past 2^31', () => {
    // In units of 1: each value is written as Math.round writes it.
    const values = [0.49999999999999994, -0.5000000000000001, 1023.4999999999999, -1024.5, 2.5, -2.5, -16777218.4, 6e9, -3e12]
    const ops = Uint8Array.from(values.map(() => LINE))
    const points = Float64Array.from(values.flatMap((value) => [value, 0]))
    const text = new AsciiWriter()
    const flate = new FlateWriter()
    text.path(ops, points, points.length, 1)
    flate.path(ops, points, points.length, 1)
    expect(inflateSync(flate.take()).toString('latin1')).toBe(text.take().toString('latin1'))
  })

  it('refuses a number that is not finite, and a whole number that is not whole, rather than write something else', () => {
    const ops = Uint8Array.of(MOVE, LINE)
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      expect(() => new FlateWriter().path(ops, Float64Array.of(0.1, 0.2, bad, 0.3), 4, 400)).toThrow(/not whole/)
      expect(() => new FlateWriter().fixed4(bad)).toThrow(/not finite/)
      expect(() => new FlateWriter().int(bad)).toThrow(/not whole/)
    }
    expect(() => new FlateWriter().int(1000.5)).toThrow(/not whole/)
  })

  it('refuses text outside latin1, which a page stream cannot hold, and writes none of it', () => {
    const flate = new FlateWriter()
    flate.text('q ')
    expect(() => flate.text('Q € ')).toThrow(/latin1/)
    flate.text('Q')
    expect(inflateSync(flate.take()).toString('latin1')).toBe('q Q')
  })

  it('gives the same bytes when its stream is taken twice', () => {
    const flate = new FlateWriter()
    write(flate, 3)
    const first = Buffer.from(flate.take())
    expect(Buffer.from(flate.take()).equals(first)).toBe(true)
    expect(inflateSync(first).length).toBeGreaterThan(0)
  })

  it('makes every code deflate accepts: complete, and no longer than 15 bits', () => {
    const random = numbers(3)
    for (let trial = 0; trial < 50; trial++) {
      // Weights as skewed as a page's bytes, and worse.
      const weights = Array.from({ length: 257 }, () => 1 + Math.floor(random() ** 8 * 1e6))
      const lengths = codeLengths(weights)
      expect(Math.max(...lengths)).toBeLessThanOrEqual(15)
      expect(Math.min(...lengths)).toBeGreaterThanOrEqual(1)
      expect(lengths.reduce((sum, length) => sum + 2 ** (15 - length), 0)).toBe(2 ** 15)
      // Canonical codes of a complete set: no code is the start of another.
      const codes = canonicalCodes(lengths)
      const bits = [...lengths].map((length, symbol) => {
        let reversed = codes[symbol]!
        let code = ''
        for (let bit = 0; bit < length; bit++, reversed >>= 1) code += reversed & 1
        return code
      })
      const sorted = [...bits].sort()
      for (let i = 1; i < sorted.length; i++) expect(sorted[i]!.startsWith(sorted[i - 1]!)).toBe(false)
    }
  })
})
