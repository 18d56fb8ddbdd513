import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { inflateSync } from 'node:zlib'
import type * as Fontkit from 'fontkit'
import type { FontName } from '@letters/contracts'

const require = createRequire(import.meta.url)
// The copy of fontkit pdfkit requires: the fonts parsed here are the ones pdfkit lays out and embeds.
const fontkit = require('fontkit') as typeof Fontkit

declare global {
  namespace PDFKit.Mixins {
    interface PDFFont {
      /** A font fontkit has parsed, shared by the documents of a process (patches/pdfkit+0.17.2.patch). */
      registerFont(name: string, src: Fontkit.Font): this
    }
  }
}

/** Each handwriting font's file in its font package: the latin subset covers Spanish (á, ñ, ¿, ¡). */
const fontFiles: Record<FontName, string> = {
  caveat: '@fontsource/caveat/files/caveat-latin-400-normal.woff',
  'dancing-script': '@fontsource/dancing-script/files/dancing-script-latin-400-normal.woff',
  'homemade-apple': '@fontsource/homemade-apple/files/homemade-apple-latin-400-normal.woff',
  'indie-flower': '@fontsource/indie-flower/files/indie-flower-latin-400-normal.woff',
  kalam: '@fontsource/kalam/files/kalam-latin-400-normal.woff',
}

/**
 * The plain TrueType/OpenType font a WOFF file wraps: its tables inflated, laid out again behind an
 * sfnt header. fontkit reads a WOFF font by inflating the whole table again at every access
 * (the glyph table once per glyph measured or embedded), which was three quarters of a render.
 * The tables keep their bytes and checksums, so the fonts embedded in a PDF are the same.
 */
export function sfntFromWoff(woff: Buffer): Buffer {
  if (woff.toString('latin1', 0, 4) !== 'wOFF') throw new Error('not a WOFF file')
  const numTables = woff.readUInt16BE(12)
  // The WOFF directory is sorted by tag already, as the sfnt one must be.
  const tables = Array.from({ length: numTables }, (_, index) => {
    const entry = 44 + index * 20
    const offset = woff.readUInt32BE(entry + 4)
    const compressedLength = woff.readUInt32BE(entry + 8)
    const length = woff.readUInt32BE(entry + 12)
    const stored = woff.subarray(offset, offset + compressedLength)
    const data = compressedLength < length ? inflateSync(stored) : stored
    if (data.length !== length) throw new Error(`WOFF table ${woff.toString('latin1', entry, entry + 4)} inflates to ${data.length} bytes, not ${length}`)
    return { tag: woff.subarray(entry, entry + 4), checksum: woff.readUInt32BE(entry + 16), data }
  })
  const padded = (length: number) => (length + 3) & ~3
  const headerLength = 12 + 16 * numTables
  const sfnt = Buffer.alloc(headerLength + tables.reduce((sum, table) => sum + padded(table.data.length), 0))
  const searchPower = 2 ** Math.floor(Math.log2(numTables))
  woff.copy(sfnt, 0, 4, 8) // the flavour: TrueType or CFF outlines
  sfnt.writeUInt16BE(numTables, 4)
  sfnt.writeUInt16BE(searchPower * 16, 6)
  sfnt.writeUInt16BE(Math.log2(searchPower), 8)
  sfnt.writeUInt16BE(numTables * 16 - searchPower * 16, 10)
  let offset = headerLength
  tables.forEach((table, index) => {
    const entry = 12 + index * 16
    table.tag.copy(sfnt, entry)
    sfnt.writeUInt32BE(table.checksum, entry + 4)
    sfnt.writeUInt32BE(offset, entry + 8)
    sfnt.writeUInt32BE(table.data.length, entry + 12)
    table.data.copy(sfnt, offset)
    offset += padded(table.data.length)
  })
  return sfnt
}

const parsed = new Map<FontName, Fontkit.Font>()

/**
 * The font, read, unwrapped and parsed once per process, then shared by every document drawn in
 * it and by the glyph check: its tables are decoded once, and pdfkit (patched) keeps the layout
 * of each text it shapes with the font, for the next document.
 */
export function handFont(name: FontName): Fontkit.Font {
  let font = parsed.get(name)
  if (!font) {
    const created = fontkit.create(sfntFromWoff(readFileSync(require.resolve(fontFiles[name]))))
    // A WOFF file holds one font; a collection would be a packaging mistake of ours.
    if (!('hasGlyphForCodePoint' in created)) throw new Error(`font ${name} is a collection, not a font`)
    font = created
    parsed.set(name, font)
  }
  return font
}

const UNKNOWN = 0
const WRITABLE = 1
const UNWRITABLE = 2
/** Per font, what is known of each code point of the Basic Multilingual Plane: a message is checked on every letter created. */
const knownCodePoints: Partial<Record<FontName, Uint8Array>> = {}

/**
 * The characters of `text` the font has no glyph for: drawn, each would be an empty box (a
 * Chinese name, an emoji, a Polish Ł in a latin-only font). White space and invisible format
 * characters are laid out, not drawn.
 * Distinct, in order of first appearance.
 */
export function unwritableCharacters(name: FontName, text: string): string[] {
  const font = handFont(name)
  const known = (knownCodePoints[name] ??= new Uint8Array(0x10000))
  const missing = new Set<string>()
  for (const character of text) {
    const codePoint = character.codePointAt(0)!
    let verdict = codePoint < 0x10000 ? known[codePoint]! : UNKNOWN
    if (verdict === UNKNOWN) {
      // Joiners, soft hyphens, variation selectors: laid out as nothing between letters.
      verdict = /[\s\p{Default_Ignorable_Code_Point}]/u.test(character) || font.hasGlyphForCodePoint(codePoint) ? WRITABLE : UNWRITABLE
      if (codePoint < 0x10000) known[codePoint] = verdict
    }
    if (verdict === UNWRITABLE) missing.add(character)
  }
  return [...missing]
}
