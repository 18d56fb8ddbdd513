import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import * as fontkit from 'fontkit'
import type { FontName } from '@letters/contracts'

const require = createRequire(import.meta.url)

/** Each handwriting font's file in its font package: the latin subset covers Spanish (á, ñ, ¿, ¡). */
const fontFiles: Record<FontName, string> = {
  caveat: '@fontsource/caveat/files/caveat-latin-400-normal.woff',
  'dancing-script': '@fontsource/dancing-script/files/dancing-script-latin-400-normal.woff',
  'homemade-apple': '@fontsource/homemade-apple/files/homemade-apple-latin-400-normal.woff',
  'indie-flower': '@fontsource/indie-flower/files/indie-flower-latin-400-normal.woff',
  kalam: '@fontsource/kalam/files/kalam-latin-400-normal.woff',
}

const loaded = new Map<FontName, Buffer>()

/** The font file's bytes, read once per process. */
export function fontData(name: FontName): Buffer {
  let data = loaded.get(name)
  if (!data) {
    data = readFileSync(require.resolve(fontFiles[name]))
    loaded.set(name, data)
  }
  return data
}

const parsed = new Map<FontName, fontkit.Font>()

/**
 * The characters of `text` the font has no glyph for: drawn, each would be an empty box (a
 * Chinese name, an emoji, a Polish Ł in a latin-only font). White space and invisible format
 * characters are laid out, not drawn.
 * Distinct, in order of first appearance.
 */
export function unwritableCharacters(name: FontName, text: string): string[] {
  let font = parsed.get(name)
  if (!font) {
    const created = fontkit.create(fontData(name))
    // A WOFF file holds one font; a collection would be a packaging mistake of ours.
    if (!('hasGlyphForCodePoint' in created)) throw new Error(`font ${name} is a collection, not a font`)
    font = created
    parsed.set(name, font)
  }
  const missing = new Set<string>()
  for (const character of text) {
    // Joiners, soft hyphens, variation selectors: laid out as nothing between letters.
    if (/[\s\p{Default_Ignorable_Code_Point}]/u.test(character)) continue
    if (!font.hasGlyphForCodePoint(character.codePointAt(0)!)) missing.add(character)
  }
  return [...missing]
}
