import { brotliDecompressSync, inflateSync } from 'node:zlib'
import type { FontContentType } from '@letters/contracts/font-rules'
import { FONT_MAX_EXPANSION, FONT_MAX_UNPACKED_BYTES } from './limits.js'
import { num, refuse } from './refusal.js'

/**
 * The containers a font file comes in, read from their headers only: a TrueType/OpenType (sfnt)
 * file's table directory, a WOFF's, a WOFF2's. Checked before any table is parsed or inflated, so
 * that a truncated file is named as such, and a file whose tables would unpack to more than
 * FONT_MAX_UNPACKED_BYTES never gets to a decompressor.
 */

/** An sfnt's flavour: TrueType outlines (two signatures, Apple's `true` and 00 01 00 00) or CFF (`OTTO`). */
const SFNT_FLAVOURS = new Set([0x00010000, 0x74727565, 0x4f54544f])
const COLLECTION = 0x74746366 // 'ttcf'

const SFNT_HEADER = 12
const SFNT_ENTRY = 16
const WOFF_HEADER = 44
const WOFF_ENTRY = 20
const WOFF2_HEADER = 48

/** Checks the container's headers; a refusal (RefusedError) says what is wrong with them. */
export function checkFontContainer(contentType: FontContentType, data: Buffer): void {
  switch (contentType) {
    case 'font/ttf':
    case 'font/otf':
      return checkSfnt(data)
    case 'font/woff':
      woffDirectory(data)
      return
    case 'font/woff2':
      woff2Directory(data)
      return
  }
}

/** A size as a client reads it: "850 KB", "412,3 MB". */
export function size(bytes: number): string {
  return bytes < 1024 * 1024 ? `${num(Math.max(1, Math.round(bytes / 1024)))} KB` : `${num(bytes / 1024 / 1024, 1)} MB`
}

function incomplete(what: string): never {
  refuse(`El archivo de la fuente está incompleto o dañado: ${what}. Envía el archivo completo, tal como lo exporta tu programa de fuentes.`)
}

function ends(data: Buffer, needed: number, what: string): void {
  if (needed > data.length) incomplete(`${what} llega hasta el byte ${num(needed)} y el archivo tiene ${num(data.length)}`)
}

/** The tag of a table as text, for a message: printable ASCII only. */
function tagText(data: Buffer, at: number): string {
  return `«${data.toString('latin1', at, at + 4).replace(/[^\x20-\x7e]/g, '?')}»`
}

function checkSfnt(data: Buffer): void {
  ends(data, SFNT_HEADER, 'la cabecera')
  const numTables = data.readUInt16BE(4)
  if (numTables === 0) incomplete('no tiene ninguna tabla')
  ends(data, SFNT_HEADER + numTables * SFNT_ENTRY, `la lista de sus ${num(numTables)} tablas`)
  for (let index = 0; index < numTables; index++) {
    const entry = SFNT_HEADER + index * SFNT_ENTRY
    ends(data, data.readUInt32BE(entry + 8) + data.readUInt32BE(entry + 12), `la tabla ${tagText(data, entry)}`)
  }
}

function checkFlavour(flavour: number, container: string): void {
  if (flavour === COLLECTION) refuse(`El ${container} contiene una colección de fuentes, que no se admite: envía una sola fuente.`)
  if (!SFNT_FLAVOURS.has(flavour)) incomplete(`el ${container} no envuelve una fuente TrueType ni OpenType`)
}

/** What a file's headers say its tables take unpacked, and what they take compressed. */
function checkUnpacked(unpacked: number, compressed: number): void {
  if (unpacked > FONT_MAX_UNPACKED_BYTES)
    refuse(
      `Según sus cabeceras, la fuente ocupa ${size(unpacked)} una vez descomprimida: el máximo es ${size(FONT_MAX_UNPACKED_BYTES)} (una fuente de escritura a mano ocupa menos de 1 MB).`,
    )
  // A file whose tables are all empty expands nothing; its other faults are fontkit's to find.
  if (unpacked > 0 && unpacked > compressed * FONT_MAX_EXPANSION)
    refuse(
      `Los datos comprimidos de la fuente (${size(compressed)}) dicen ocupar ${size(unpacked)} descomprimidos, ${num(unpacked / Math.max(1, compressed))} veces más: una fuente real se comprime a la mitad o a un tercio, nunca más de ${num(FONT_MAX_EXPANSION)} veces. El archivo no se admite.`,
    )
}

interface WoffTable {
  tag: Buffer
  offset: number
  compLength: number
  origLength: number
  checksum: number
}

/** A WOFF's table directory, checked: every table inside the file, no table larger packed than unpacked, the whole within the limits. */
function woffDirectory(data: Buffer): { flavour: Buffer; tables: WoffTable[] } {
  ends(data, WOFF_HEADER, 'la cabecera del WOFF')
  checkFlavour(data.readUInt32BE(4), 'WOFF')
  ends(data, data.readUInt32BE(8), 'el WOFF, según su cabecera,')
  const numTables = data.readUInt16BE(12)
  if (numTables === 0) incomplete('el WOFF no tiene ninguna tabla')
  ends(data, WOFF_HEADER + numTables * WOFF_ENTRY, `la lista de las ${num(numTables)} tablas del WOFF`)
  const tables: WoffTable[] = []
  let unpacked = SFNT_HEADER + numTables * SFNT_ENTRY
  let compressed = 0
  for (let index = 0; index < numTables; index++) {
    const entry = WOFF_HEADER + index * WOFF_ENTRY
    const table = {
      tag: data.subarray(entry, entry + 4),
      offset: data.readUInt32BE(entry + 4),
      compLength: data.readUInt32BE(entry + 8),
      origLength: data.readUInt32BE(entry + 12),
      checksum: data.readUInt32BE(entry + 16),
    }
    ends(data, table.offset + table.compLength, `la tabla ${tagText(data, entry)}`)
    if (table.compLength > table.origLength)
      incomplete(`la tabla ${tagText(data, entry)} ocupa ${num(table.compLength)} bytes comprimida y dice ocupar ${num(table.origLength)} sin comprimir`)
    unpacked += padded(table.origLength)
    compressed += table.compLength
    tables.push(table)
  }
  checkUnpacked(Math.max(unpacked, data.readUInt32BE(16)), compressed)
  return { flavour: data.subarray(4, 8), tables }
}

function padded(length: number): number {
  return length + ((4 - (length % 4)) % 4)
}

/**
 * The plain TrueType/OpenType font a WOFF file wraps: its tables inflated, laid out again behind
 * an sfnt header, with their bytes and checksums. fontkit reads a WOFF by inflating a whole table
 * again at every access (the glyph table once per glyph), so the renderer parses this instead.
 * Every table is inflated to at most the size its directory entry declares.
 */
export function sfntFromWoff(woff: Buffer): Buffer {
  const { flavour, tables } = woffDirectory(woff)
  // The WOFF directory is sorted by tag already, as the sfnt one must be.
  const inflated = tables.map((table) => {
    const stored = woff.subarray(table.offset, table.offset + table.compLength)
    if (table.compLength === table.origLength) return stored
    let data: Buffer
    try {
      data = inflateSync(stored, { maxOutputLength: Math.max(1, table.origLength) })
    } catch {
      return incomplete(`la tabla ${tagText(table.tag, 0)} no se descomprime a los ${num(table.origLength)} bytes que declara`)
    }
    if (data.length !== table.origLength)
      incomplete(`la tabla ${tagText(table.tag, 0)} se descomprime a ${num(data.length)} bytes y declara ${num(table.origLength)}`)
    return data
  })
  return writeSfnt(
    flavour.readUInt32BE(0),
    tables.map((table, index) => ({ tag: table.tag.toString('latin1'), checksum: table.checksum, data: inflated[index]! })),
  )
}

/**
 * A plain TrueType/OpenType file of `tables` (in tag order, as an sfnt's directory must be; a
 * WOFF's is already), each at a four-byte boundary, with the checksums given (0 where none is).
 */
export function writeSfnt(flavour: number, tables: ReadonlyArray<{ tag: string; checksum?: number; data: Buffer }>): Buffer {
  const sorted = [...tables].sort((a, b) => (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0))
  const headerLength = SFNT_HEADER + SFNT_ENTRY * sorted.length
  const sfnt = Buffer.alloc(headerLength + sorted.reduce((sum, { data }) => sum + padded(data.length), 0))
  const searchPower = 2 ** Math.floor(Math.log2(sorted.length))
  sfnt.writeUInt32BE(flavour, 0)
  sfnt.writeUInt16BE(sorted.length, 4)
  sfnt.writeUInt16BE(searchPower * 16, 6)
  sfnt.writeUInt16BE(Math.log2(searchPower), 8)
  sfnt.writeUInt16BE(sorted.length * 16 - searchPower * 16, 10)
  let offset = headerLength
  sorted.forEach(({ tag, checksum = 0, data }, index) => {
    const entry = SFNT_HEADER + index * SFNT_ENTRY
    sfnt.write(tag, entry, 'latin1')
    sfnt.writeUInt32BE(checksum, entry + 4)
    sfnt.writeUInt32BE(offset, entry + 8)
    sfnt.writeUInt32BE(data.length, entry + 12)
    data.copy(sfnt, offset)
    offset += padded(data.length)
  })
  return sfnt
}

/** The tables whose WOFF2 transform is version 0 (any other version leaves them as they are); every other table is transformed at any version but 0. */
const TRANSFORMED_AT_0 = new Set(['glyf', 'loca'])

/** WOFF2's known tags, by the index its directory's flags give (63: the tag follows). */
const WOFF2_KNOWN_TAGS = [
  'cmap', 'head', 'hhea', 'hmtx', 'maxp', 'name', 'OS/2', 'post', 'cvt ', 'fpgm', 'glyf', 'loca', 'prep', 'CFF ', 'VORG', 'EBDT',
  'EBLC', 'gasp', 'hdmx', 'kern', 'LTSH', 'PCLT', 'VDMX', 'vhea', 'vmtx', 'BASE', 'GDEF', 'GPOS', 'GSUB', 'EBSC', 'JSTF', 'MATH',
  'CBDT', 'CBLC', 'COLR', 'CPAL', 'SVG ', 'sbix', 'acnt', 'avar', 'bdat', 'bloc', 'bsln', 'cvar', 'fdsc', 'feat', 'fmtx', 'fvar',
  'gvar', 'hsty', 'just', 'lcar', 'mort', 'morx', 'opbd', 'prop', 'trak', 'Zapf', 'Silf', 'Glat', 'Gloc', 'Feat', 'Sill',
] // prettier-ignore

/**
 * A WOFF2's header and table directory, checked, and where its compressed data is. All its tables
 * are compressed together, in one brotli stream.
 */
function woff2Directory(data: Buffer): { stream: Buffer; streamSize: number } {
  ends(data, WOFF2_HEADER, 'la cabecera del WOFF2')
  checkFlavour(data.readUInt32BE(4), 'WOFF2')
  ends(data, data.readUInt32BE(8), 'el WOFF2, según su cabecera,')
  const numTables = data.readUInt16BE(12)
  if (numTables === 0) incomplete('el WOFF2 no tiene ninguna tabla')
  const directory = `la lista de las ${num(numTables)} tablas del WOFF2`
  let at = WOFF2_HEADER
  const base128 = (): number => {
    let value = 0
    for (let index = 0; index < 5; index++) {
      ends(data, at + 1, directory)
      const byte = data[at++]!
      if (index === 0 && byte === 0x80) incomplete('la lista de tablas del WOFF2 tiene un número mal codificado')
      if (value > 0x1ffffff) incomplete('la lista de tablas del WOFF2 declara una tabla de más de 4 GB')
      value = value * 128 + (byte & 0x7f)
      if ((byte & 0x80) === 0) return value
    }
    return incomplete('la lista de tablas del WOFF2 tiene un número mal codificado')
  }
  let sfntSize = SFNT_HEADER + numTables * SFNT_ENTRY
  // What the stream decompresses to: a transformed table in its transformed length.
  let streamSize = 0
  for (let index = 0; index < numTables; index++) {
    ends(data, at + 1, directory)
    const flags = data[at++]!
    let tag = WOFF2_KNOWN_TAGS[flags & 0x3f]
    if (tag === undefined) {
      ends(data, at + 4, directory)
      tag = data.toString('latin1', at, at + 4)
      at += 4
    }
    // As fontkit reads it (and the specification says).
    const version = flags >>> 6
    const transformed = TRANSFORMED_AT_0.has(tag) ? version === 0 : version !== 0
    const origLength = base128()
    sfntSize += padded(origLength)
    streamSize += transformed ? base128() : origLength
  }
  const totalCompressedSize = data.readUInt32BE(20)
  ends(data, at + totalCompressedSize, 'el bloque de datos comprimidos del WOFF2')
  checkUnpacked(Math.max(sfntSize, streamSize, data.readUInt32BE(16)), totalCompressedSize)
  return { stream: data.subarray(at, at + totalCompressedSize), streamSize }
}

/**
 * Decompresses a WOFF2's tables with Node's brotli, stopping at the size its directory declares,
 * and checks they come to exactly that. fontkit's own decompressor (brotli.js) takes the
 * declared size as a first guess only: it grows its buffer for whatever the stream holds, so a
 * stream of a few hundred bytes that inflates to 400 MB took it 5 s and 900 MB. Checked here
 * first, the stream fontkit decompresses is one that fits.
 */
export function checkWoff2Stream(woff2: Buffer): void {
  const { stream, streamSize } = woff2Directory(woff2)
  let size: number
  try {
    size = brotliDecompressSync(stream, { maxOutputLength: Math.max(1, streamSize) }).length
  } catch (error) {
    if (error instanceof RangeError) incomplete(`sus datos comprimidos se descomprimen a más de los ${num(streamSize)} bytes que declara su lista de tablas`)
    return incomplete('sus datos comprimidos no se pueden descomprimir')
  }
  if (size !== streamSize) incomplete(`sus datos comprimidos se descomprimen a ${num(size)} bytes, y su lista de tablas declara ${num(streamSize)}`)
}

/**
 * The tables whose rules lay a font's text out beyond its character map and advance widths:
 * substitutions, positioning, kerning. An uploaded font's rules are a program of the client's:
 * one lookup can call another without limit (fontkit stops neither the depth nor the work), so a
 * few hundred bytes lay out one letter in minutes, or never. An account's font is laid out glyph
 * by glyph instead: what its character map gives, at its advances.
 */
const LAYOUT_TABLES = ['GSUB', 'GPOS', 'GDEF', 'morx', 'mort', 'kerx', 'kern'] as const

/** `font` (fontkit's) with its layout rules left unread: each table read as absent. */
export function withoutLayoutRules<Font extends object>(font: Font): Font {
  // fontkit reads a table on first use into `_tables`, and reads nothing for a tag already there.
  const tables = (font as unknown as { _tables: Record<string, unknown> })._tables
  for (const tag of LAYOUT_TABLES) tables[tag] = null
  return font
}
