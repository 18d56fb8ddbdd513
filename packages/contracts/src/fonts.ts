import { Type } from 'typebox'

/**
 * The handwriting fonts a letter can be written in. The renderer loads each from its font
 * package; `fontName` in a request must be one of these names.
 */
export const fontNames = ['caveat', 'dancing-script', 'homemade-apple', 'indie-flower', 'kalam'] as const
export type FontName = (typeof fontNames)[number]

export const DEFAULT_FONT: FontName = 'caveat'

/** The family each font is published as, for people choosing one. */
export const fontFamilies: Record<FontName, string> = {
  caveat: 'Caveat',
  'dancing-script': 'Dancing Script',
  'homemade-apple': 'Homemade Apple',
  'indie-flower': 'Indie Flower',
  kalam: 'Kalam',
}

export function isFontName(name: string): name is FontName {
  return (fontNames as readonly string[]).includes(name)
}

/**
 * `fontName` in a request body: null or absent for the default. Longer than 50 characters it
 * cannot be a font: refused by the schema, whose message lists the fonts without echoing it.
 */
export const FontNameField = Type.Optional(
  Type.Union([Type.String({ maxLength: 50 }), Type.Null()], { errorMessage: `El campo 'fontName' debe ser uno de: ${fontNames.join(', ')}` }),
)
