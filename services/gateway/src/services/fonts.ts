import { DEFAULT_FONT, fontFamilies, fontNames, isFontName, type FontName, type publicApi } from '@letters/contracts'
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
