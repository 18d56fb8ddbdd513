import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type * as Fontkit from 'fontkit'
import { sfntFromWoff, withoutLayoutRules } from '@letters/artwork/font-tables'
import type { FontName, OwnFontFace } from '@letters/contracts'

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

/**
 * Each handwriting font's file in its font package: the latin subset covers Spanish (á, ñ, ¿, ¡).
 * Read as the plain TrueType font it wraps (sfntFromWoff): fontkit reads a WOFF by inflating a
 * whole table again at every access.
 */
const fontFiles: Record<FontName, string> = {
  caveat: '@fontsource/caveat/files/caveat-latin-400-normal.woff',
  'dancing-script': '@fontsource/dancing-script/files/dancing-script-latin-400-normal.woff',
  'homemade-apple': '@fontsource/homemade-apple/files/homemade-apple-latin-400-normal.woff',
  'indie-flower': '@fontsource/indie-flower/files/indie-flower-latin-400-normal.woff',
  kalam: '@fontsource/kalam/files/kalam-latin-400-normal.woff',
}

const parsed = new Map<FontName, Fontkit.Font>()

/** A font file parsed by fontkit: one font, never a collection (an account's upload was checked to be one). */
function parsedFont(data: Buffer, what: string): Fontkit.Font {
  const created = fontkit.create(data)
  if (!('hasGlyphForCodePoint' in created)) throw new Error(`font ${what} is a collection, not a font`)
  return created
}

/**
 * The font, read, unwrapped and parsed once per process, then shared by every document drawn in
 * it and by the glyph check: its tables are decoded once, and pdfkit (patched) keeps the layout
 * of each text it shapes with the font, for the next document.
 */
export function handFont(name: FontName): Fontkit.Font {
  let font = parsed.get(name)
  if (!font) {
    // A WOFF file holds one font; a collection would be a packaging mistake of ours.
    font = parsedFont(sfntFromWoff(readFileSync(require.resolve(fontFiles[name]))), name)
    parsed.set(name, font)
  }
  return font
}

/** One version of an account's own font, as a letter in it is drawn: its file as the renderer parses it, and the plotter's stand-in. */
export type OwnFont = OwnFontFace & {
  /** The built-in hand whose single strokes the plotter writes it in, known to be one. */
  plotterFont: FontName
}

/**
 * Account fonts parsed in this process, the latest used last: a font is parsed once, not per
 * letter. At most OWN_FONTS_KEPT, and their faces (up to 32 MB each, unpacked) at most
 * OWN_FONTS_KEPT_BYTES in all.
 */
const OWN_FONTS_KEPT = 16
const OWN_FONTS_KEPT_BYTES = 64 * 1024 * 1024
const ownParsed = new Map<string, { font: Fontkit.Font; bytes: number }>()
let ownParsedBytes = 0

function ownFont(own: OwnFont): Fontkit.Font {
  const kept = ownParsed.get(own.key)
  let font: Fontkit.Font
  if (kept) {
    ownParsed.delete(own.key)
    ownParsedBytes -= kept.bytes
    font = kept.font
  } else {
    // Its layout rules are the client's program, left unread (withoutLayoutRules): laid out by its character map.
    font = withoutLayoutRules(parsedFont(Buffer.from(own.face.buffer, own.face.byteOffset, own.face.byteLength), own.key))
  }
  ownParsed.set(own.key, { font, bytes: own.face.byteLength })
  ownParsedBytes += own.face.byteLength
  while (ownParsed.size > OWN_FONTS_KEPT || (ownParsedBytes > OWN_FONTS_KEPT_BYTES && ownParsed.size > 1)) {
    const oldest = ownParsed.keys().next().value!
    ownParsedBytes -= ownParsed.get(oldest)!.bytes
    ownParsed.delete(oldest)
    delete knownCodePoints[`own-${oldest}`]
  }
  return font
}

/** A letter's hand: a built-in one by its name, or an account's own font. */
export type HandChoice = FontName | OwnFont

/** The hand's font, and the name documents register it under (pdfkit keeps a font by that name). */
export function fontOf(hand: HandChoice): { font: Fontkit.Font; id: string } {
  return typeof hand === 'string' ? { font: handFont(hand), id: hand } : { font: ownFont(hand), id: `own-${hand.key}` }
}

const UNKNOWN = 0
const WRITABLE = 1
const UNWRITABLE = 2
/** Per font, what is known of each code point of the Basic Multilingual Plane: a message is checked on every letter created. */
const knownCodePoints: Record<string, Uint8Array> = {}

/**
 * The characters of `text` the hand has no glyph for: drawn, each would be an empty box (a
 * Chinese name, an emoji, a Polish Ł in a latin-only font). White space and invisible format
 * characters are laid out, not drawn.
 * Distinct, in order of first appearance.
 */
export function unwritableCharacters(hand: HandChoice, text: string): string[] {
  const { font, id } = fontOf(hand)
  const known = (knownCodePoints[id] ??= new Uint8Array(0x10000))
  const missing = new Set<string>()
  for (const character of text) {
    const codePoint = character.codePointAt(0)!
    let verdict = codePoint < 0x10000 ? known[codePoint]! : UNKNOWN
    if (verdict === UNKNOWN) {
      // Joiners, soft hyphens, variation selectors: laid out as nothing between letters. Any other
      // character needs a glyph with an outline: one mapped to an empty glyph prints nothing.
      verdict =
        /[\s\p{Default_Ignorable_Code_Point}]/u.test(character) ||
        (font.hasGlyphForCodePoint(codePoint) && font.glyphForCodePoint(codePoint).path.commands.length > 0)
          ? WRITABLE
          : UNWRITABLE
      if (codePoint < 0x10000) known[codePoint] = verdict
    }
    if (verdict === UNWRITABLE) missing.add(character)
  }
  return [...missing]
}
