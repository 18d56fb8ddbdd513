import { DEFAULT_FONT, fontNames, isFontName, type FontName } from '@letters/contracts'
import { badRequest } from '../errors.js'

/** The font a letter is written in: the default when none is asked for, 400 for an unknown one. */
export function checkedFont(fontName: string | null | undefined): FontName {
  if (fontName === null || fontName === undefined) return DEFAULT_FONT
  if (!isFontName(fontName)) throw badRequest(`La fuente '${fontName}' no existe; las disponibles son: ${fontNames.join(', ')}`)
  return fontName
}
