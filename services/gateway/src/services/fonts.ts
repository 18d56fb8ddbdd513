import { DEFAULT_FONT, fontFamilies, fontNames, isFontName, type FontName, type publicApi } from '@letters/contracts'
import { unwritableCharacters } from '@letters/render'
import { badRequest } from '../errors.js'

/** The font a letter is written in: the default when none is asked for, 400 for an unknown one. */
export function checkedFont(fontName: string | null | undefined): FontName {
  if (fontName === null || fontName === undefined) return DEFAULT_FONT
  if (!isFontName(fontName)) throw badRequest(`La fuente '${fontName}' no existe; las disponibles son: ${fontNames.join(', ')}`)
  return fontName
}

/** The catalogue of handwriting fonts, the default first. */
export function listFonts(): publicApi.FontList {
  const ordered = [DEFAULT_FONT, ...fontNames.filter((name) => name !== DEFAULT_FONT)]
  return { data: ordered.map((name) => ({ name, family: fontFamilies[name], default: name === DEFAULT_FONT })) }
}

/** Most characters named in a refusal: enough to find them, never a wall of text. */
const NAMED_CHARACTERS = 10

/**
 * The explicit direction controls (embeddings, overrides, isolates): the floor writes text in the
 * order it was typed, and a control would make what the client sees on screen differ from what
 * is printed (a name "reversed" by U+202E).
 */
const BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069]/u

/**
 * Refuses (400) text the font has no glyph for: drawn, each such character (Chinese, an emoji, a
 * Ł in a latin font) would come out as an empty box on a letter someone paid for; and text with
 * a direction control. `subject` names the field in the Spanish message, e.g. "El campo 'name'".
 */
export function assertWritable(fontName: FontName, subject: string, text: string | null | undefined): void {
  const control = text ? BIDI_CONTROL.exec(text)?.[0] : undefined
  if (control) {
    const code = `U+${control.codePointAt(0)!.toString(16).toUpperCase()}`
    throw badRequest(`${subject} contiene un carácter de control de dirección del texto (${code}), que haría imprimirlo en otro orden; quítalo`)
  }
  const missing = text ? unwritableCharacters(fontName, text) : []
  if (missing.length > 0)
    throw badRequest(`${subject} contiene caracteres que la letra '${fontName}' no puede escribir: ${missing.slice(0, NAMED_CHARACTERS).join(' ')}`)
}
