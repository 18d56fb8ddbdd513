import { Type } from 'typebox'
import { Literals } from './common.js'

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
 * cannot be a font: refused by the schema, whose message names the built-in hands and GET /fonts
 * (the account's own fonts are the account's to list) without echoing it.
 */
export const FontNameField = Type.Optional(
  Type.Union([Type.String({ maxLength: 50 }), Type.Null()], {
    errorMessage: `El campo 'fontName' debe ser una de las letras incluidas (${fontNames.join(', ')}) o una de las de la cuenta: GET /fonts las lista`,
  }),
)

/**
 * The inks a letter can be written in: each a ballpoint's colour (the renderer's `inkRgb`), never
 * a printer's pure primary. Blue unless the request says otherwise.
 */
export const inkColors = ['blue', 'black', 'green', 'purple', 'red'] as const
export type InkColor = (typeof inkColors)[number]

export const DEFAULT_INK: InkColor = 'blue'

/** Each ink as the floor reads it: "tinta azul". */
export const inkNames: Record<InkColor, string> = { blue: 'azul', black: 'negra', green: 'verde', purple: 'morada', red: 'roja' }

export function isInkColor(name: string): name is InkColor {
  return (inkColors as readonly string[]).includes(name)
}

const INK_RULE = `El campo 'inkColor' debe ser uno de: ${inkColors.join(', ')}`

/** `inkColor` in a request body (and a bulk request's recipient): null or absent for the next choice down (the request's, the campaign's, blue). */
export const InkColorField = Type.Optional(
  Type.Union([Literals(inkColors), Type.Null()], {
    errorMessage: INK_RULE,
    description: `The ink the letter is written in: ${inkColors.join(', ')}. Absent or null: the request's, then the campaign's, then blue.`,
  }),
)

/**
 * How a letter's writing is drawn, which each letter keeps from when it was accepted (its
 * `drawing`), so that a reprint draws the same bytes: 4 writes each glyph as its font has it, in
 * black; 5 gives every glyph a shape of its own, lets the lines flow as a hand's do, and writes in
 * the letter's ink; 6 bends each curve's handles as well as its ends (fewer, simpler curves
 * carry the same variation) and writes the page's writing already compressed. DRAWING_REVISION
 * is the one new letters get. A change to what a letter's files show makes a new drawing; the
 * old one stays as it was, for the letters that have it.
 */
export const drawings = [4, 5, 6] as const
export type Drawing = (typeof drawings)[number]
export const DRAWING_REVISION: Drawing = 6

/** Cursive hands: their letters join at their sides, and the drawing keeps the joins meeting. */
export const joinedHands: ReadonlySet<FontName> = new Set(['dancing-script', 'homemade-apple'])

/**
 * The print hand each hand writes an envelope's town and country lines in, as a person addressing
 * an envelope in a cursive hand prints them: a script's capitals join into loops that neither a
 * reader nor a sorting machine makes out. Chosen by what OCR reads back of each hand's envelopes
 * (packages/render/test/envelope-ocr.test.ts): Caveat's capitals and digits read as written; in
 * Kalam's and Indie Flower's own, a 1 reads as an I, and Kalam's A after a digit as a 4.
 */
export const printHands: Readonly<Record<FontName, FontName>> = {
  caveat: 'caveat',
  'dancing-script': 'caveat',
  'homemade-apple': 'caveat',
  'indie-flower': 'caveat',
  kalam: 'caveat',
}
