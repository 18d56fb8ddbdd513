/**
 * Hostile font files for the tests of a font's upload: real fonts with one table rewritten (a
 * glyph of 100,000 points, one reaching 20 em, characters dropped from the cmap) and WOFF2 files
 * whose brotli stream inflates far past what they declare.
 */
import { constants, createBrotliCompress } from 'node:zlib'
import * as fontkit from 'fontkit'
import { writeSfnt as writeFontTables } from '@letters/artwork/font-tables'

// A TrueType file's tables, read and written again: the hostile fonts below are real fonts with
// one table rewritten, so that fontkit reads everything else as it would a client's.

export interface Sfnt {
  flavour: number
  tables: Map<string, Buffer>
}

export function readSfnt(data: Buffer): Sfnt {
  const tables = new Map<string, Buffer>()
  for (let index = 0; index < data.readUInt16BE(4); index++) {
    const entry = 12 + index * 16
    const offset = data.readUInt32BE(entry + 8)
    tables.set(data.toString('latin1', entry, entry + 4), Buffer.from(data.subarray(offset, offset + data.readUInt32BE(entry + 12))))
  }
  return { flavour: data.readUInt32BE(0), tables }
}

const padded = (length: number) => (length + 3) & ~3

/** The font of `sfnt`'s tables, written as the renderer's WOFF unwrapping writes one (its checksums left 0). */
export const writeSfnt = ({ flavour, tables }: Sfnt): Buffer =>
  writeFontTables(
    flavour,
    [...tables].map(([tag, data]) => ({ tag, data })),
  )

/** `ttf` with the glyphs of `replaced` (by glyph id) swapped for the given glyf records; loca is rewritten in its long form. */
export function withGlyphs(ttf: Buffer, replaced: Map<number, Buffer>): Buffer {
  const sfnt = readSfnt(ttf)
  const head = sfnt.tables.get('head')!
  const loca = sfnt.tables.get('loca')!
  const glyf = sfnt.tables.get('glyf')!
  const numGlyphs = sfnt.tables.get('maxp')!.readUInt16BE(4)
  const long = head.readInt16BE(50) === 1
  const offset = (id: number) => (long ? loca.readUInt32BE(id * 4) : loca.readUInt16BE(id * 2) * 2)
  const glyphs = Array.from({ length: numGlyphs }, (_, id) => replaced.get(id) ?? glyf.subarray(offset(id), offset(id + 1)))
  const newLoca = Buffer.alloc((numGlyphs + 1) * 4)
  let at = 0
  glyphs.forEach((glyph, id) => {
    newLoca.writeUInt32BE(at, id * 4)
    at += padded(glyph.length)
  })
  newLoca.writeUInt32BE(at, numGlyphs * 4)
  const newGlyf = Buffer.alloc(at)
  glyphs.forEach((glyph, id) => glyph.copy(newGlyf, newLoca.readUInt32BE(id * 4)))
  head.writeInt16BE(1, 50)
  sfnt.tables.set('loca', newLoca)
  sfnt.tables.set('glyf', newGlyf)
  return writeSfnt(sfnt)
}

/** A simple glyf record: `points` on-curve points zigzagging in a 10-unit square, in `contours` equal contours. */
export function zigzagGlyph(points: number, contours: number): Buffer {
  const perContour = points / contours
  const header = Buffer.alloc(10 + 2 * contours + 2)
  header.writeInt16BE(contours, 0)
  header.writeInt16BE(0, 2)
  header.writeInt16BE(0, 4)
  header.writeInt16BE(10, 6)
  header.writeInt16BE(20, 8)
  for (let contour = 0; contour < contours; contour++) header.writeUInt16BE((contour + 1) * perContour - 1, 10 + 2 * contour)
  const flags = Buffer.alloc(points)
  const xs = Buffer.alloc(points, 10)
  const ys = Buffer.alloc(points, 10)
  for (let index = 0; index < points; index++) {
    // On curve, both deltas one byte long; their signs make the path (10,10) (0,20) (10,10) (0,0) and again.
    const right = index % 2 === 0
    const up = (index >> 1) % 2 === 0
    flags[index] = 0x01 | 0x02 | 0x04 | (right ? 0x10 : 0) | (up ? 0x20 : 0)
  }
  return Buffer.concat([header, flags, xs, ys])
}

/** A simple glyf record: one triangle with a corner `reach` units to the right of the origin. */
export function farGlyph(reach: number): Buffer {
  const glyph = Buffer.alloc(10 + 2 + 2 + 3 + 6 + 6)
  glyph.writeInt16BE(1, 0)
  glyph.writeInt16BE(0, 2)
  glyph.writeInt16BE(0, 4)
  glyph.writeInt16BE(reach, 6)
  glyph.writeInt16BE(500, 8)
  glyph.writeUInt16BE(2, 10) // the contour ends at its third point
  glyph.writeUInt16BE(0, 12) // no instructions
  glyph.fill(0x01, 14, 17) // on curve, deltas of two bytes
  ;[0, reach, -reach].forEach((dx, index) => glyph.writeInt16BE(dx, 17 + 2 * index))
  ;[0, 0, 500].forEach((dy, index) => glyph.writeInt16BE(dy, 23 + 2 * index))
  return glyph
}

/** A composite glyf record: `count` copies of glyph `component`, each at the origin. */
export function compositeGlyph(component: number, count: number): Buffer {
  const glyph = Buffer.alloc(10 + 6 * count)
  glyph.writeInt16BE(-1, 0)
  glyph.writeInt16BE(500, 6)
  glyph.writeInt16BE(500, 8)
  for (let index = 0; index < count; index++) {
    const at = 10 + 6 * index
    // Offsets as x/y values, one byte each; every record but the last says more follow.
    glyph.writeUInt16BE(0x0002 | (index < count - 1 ? 0x0020 : 0), at)
    glyph.writeUInt16BE(component, at + 2)
  }
  return glyph
}

/** `ttf` with a new cmap (format 4) that maps every character it mapped but those of `drop`. */
export function withoutCharacters(ttf: Buffer, drop: string): Buffer {
  const font = fontkit.create(ttf) as fontkit.Font
  const kept = font.characterSet.filter((codePoint) => codePoint < 0xffff && !drop.includes(String.fromCodePoint(codePoint))).sort((a, b) => a - b)
  // One segment per character, and the closing 0xFFFF one.
  const segments = [
    ...kept.map((codePoint) => ({ codePoint, delta: (font.glyphForCodePoint(codePoint).id - codePoint) & 0xffff })),
    { codePoint: 0xffff, delta: 1 },
  ]
  const count = segments.length
  const subtable = Buffer.alloc(16 + 8 * count)
  const power = 2 ** Math.floor(Math.log2(count))
  subtable.writeUInt16BE(4, 0)
  subtable.writeUInt16BE(subtable.length, 2)
  subtable.writeUInt16BE(count * 2, 6)
  subtable.writeUInt16BE(power * 2, 8)
  subtable.writeUInt16BE(Math.log2(power), 10)
  subtable.writeUInt16BE(count * 2 - power * 2, 12)
  segments.forEach(({ codePoint, delta }, index) => {
    subtable.writeUInt16BE(codePoint, 14 + 2 * index) // end
    subtable.writeUInt16BE(codePoint, 16 + 2 * count + 2 * index) // start
    subtable.writeUInt16BE(delta, 16 + 4 * count + 2 * index)
  })
  const cmap = Buffer.alloc(12)
  cmap.writeUInt16BE(1, 2)
  cmap.writeUInt16BE(3, 4) // Windows
  cmap.writeUInt16BE(1, 6) // Unicode BMP
  cmap.writeUInt32BE(12, 8)
  const sfnt = readSfnt(ttf)
  sfnt.tables.set('cmap', Buffer.concat([cmap, subtable]))
  return writeSfnt(sfnt)
}

/** `ttf` with one table changed in place by `edit`. */
export function withTable(ttf: Buffer, tag: string, edit: (table: Buffer) => void): Buffer {
  const sfnt = readSfnt(ttf)
  edit(sfnt.tables.get(tag)!)
  return writeSfnt(sfnt)
}

export function base128(value: number): Buffer {
  const bytes = [value & 0x7f]
  for (let rest = Math.floor(value / 128); rest > 0; rest = Math.floor(rest / 128)) bytes.unshift((rest & 0x7f) | 0x80)
  return Buffer.from(bytes)
}

/** A WOFF2 file holding one `head` table that declares `declared` bytes, with `stream` as its compressed data. */
export function woff2Of(stream: Buffer, declared: number, totalSfntSize = declared + 12 + 16): Buffer {
  const directory = Buffer.concat([Buffer.from([1]), base128(declared)]) // `head`, not transformed
  const header = Buffer.alloc(48)
  header.write('wOF2', 0, 'latin1')
  header.writeUInt32BE(0x00010000, 4)
  header.writeUInt16BE(1, 12)
  header.writeUInt32BE(totalSfntSize, 16)
  header.writeUInt32BE(stream.length, 20)
  header.writeUInt16BE(1, 24)
  const file = Buffer.concat([header, directory, stream, Buffer.alloc(padded(stream.length) - stream.length)])
  file.writeUInt32BE(file.length, 8)
  return file
}

/** A brotli stream of `megabytes` MB of zeros, compressed chunk by chunk so that they never are in memory at once. */
export async function brotliOfZeros(megabytes: number): Promise<Buffer> {
  const compress = createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_LGWIN]: 24 } })
  const chunks: Buffer[] = []
  compress.on('data', (chunk: Buffer) => chunks.push(chunk))
  const ended = new Promise((resolve) => compress.on('end', resolve))
  const megabyte = Buffer.alloc(1024 * 1024)
  for (let index = 0; index < megabytes; index++) if (!compress.write(megabyte)) await new Promise((resolve) => compress.once('drain', resolve))
  compress.end()
  await ended
  return Buffer.concat(chunks)
}

/**
 * `ttf` with an «a» of 100,000 points, which fontkit itself parses: a simple glyph numbers its
 * points with 16 bits, so «a» is two copies of a 50,000-point outline put in the font's last glyph
 * (checked after «a»).
 */
export function withHundredThousandPointA(ttf: Buffer): Buffer {
  const font = fontkit.create(ttf) as fontkit.Font
  const last = font.numGlyphs - 1
  return withGlyphs(
    ttf,
    new Map([
      [last, zigzagGlyph(50_000, 1)],
      [font.glyphForCodePoint(0x61).id, compositeGlyph(last, 2)],
    ]),
  )
}

/**
 * `ttf` with layout rules (a GSUB table) that never end or end after 2^`depth` steps: at `glyph`
 * (by id), lookup 0 applies lookup 1 twice, which applies lookup 2 twice, and so on `depth`
 * levels deep; with `depth` 0 lookup 0 applies itself. Each lookup is a contextual substitution
 * (type 5, format 3) of one glyph, under the `ccmp` feature every text is laid out with.
 */
export function withRecursiveLayout(ttf: Buffer, glyph: number, depth: number): Buffer {
  const u16 = (...values: number[]) => {
    const out = Buffer.alloc(2 * values.length)
    values.forEach((value, index) => out.writeUInt16BE(value, 2 * index))
    return out
  }
  // ScriptList: DFLT, whose default language system requires feature 0.
  const scriptList = Buffer.concat([u16(1), Buffer.from('DFLT', 'latin1'), u16(8), u16(4, 0), u16(0, 0xffff, 1, 0)])
  // FeatureList: ccmp, applying lookup 0.
  const featureList = Buffer.concat([u16(1), Buffer.from('ccmp', 'latin1'), u16(8), u16(0, 1, 0)])
  const lookups = depth === 0 ? 1 : depth + 1
  const lookup = (index: number) => {
    const calls = depth === 0 ? [0] : index < depth ? [index + 1, index + 1] : []
    // The subtable: format 3, one glyph, its calls, then its coverage of `glyph`.
    const coverageOffset = 6 + 2 + 4 * calls.length
    const subtable = Buffer.concat([u16(3, 1, calls.length, coverageOffset), ...calls.map((next) => u16(0, next)), u16(1, 1, glyph)])
    return Buffer.concat([u16(5, 0, 1, 8), subtable])
  }
  const bodies = Array.from({ length: lookups }, (_, index) => lookup(index))
  const offsets: number[] = []
  let at = 2 + 2 * lookups
  for (const body of bodies) {
    offsets.push(at)
    at += body.length
  }
  const lookupList = Buffer.concat([u16(lookups, ...offsets), ...bodies])
  const header = 10
  const gsub = Buffer.concat([
    u16(1, 0, header, header + scriptList.length, header + scriptList.length + featureList.length),
    scriptList,
    featureList,
    lookupList,
  ])
  const sfnt = readSfnt(ttf)
  sfnt.tables.set('GSUB', gsub)
  return writeSfnt(sfnt)
}
