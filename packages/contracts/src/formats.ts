// Plain values, without a schema: the process that reads a client's font needs the sizes and
// imports this module alone, not the schemas of the whole contract.

/**
 * The physical products a letter is made of: a card of one size, in an envelope of one size.
 * Sizes in millimetres, landscape (width ≥ height), as the floor cuts and loads them.
 */
export const cardFormats = {
  A6: { width: 148, height: 105 },
  A5: { width: 210, height: 148 },
  '5x7': { width: 177.8, height: 127 },
} as const
export type CardFormat = keyof typeof cardFormats
export const cardFormatNames = ['A6', 'A5', '5x7'] as const satisfies readonly CardFormat[]
export const DEFAULT_CARD_FORMAT: CardFormat = 'A6'

export const envelopeFormats = {
  C6: { width: 162, height: 114 },
  DL: { width: 220, height: 110 },
  C5: { width: 229, height: 162 },
} as const
export type EnvelopeFormat = keyof typeof envelopeFormats
export const envelopeFormatNames = ['C6', 'DL', 'C5'] as const satisfies readonly EnvelopeFormat[]
export const DEFAULT_ENVELOPE_FORMAT: EnvelopeFormat = 'C6'

/** What a size is, in millimetres. */
export interface SizeMm {
  width: number
  height: number
}

/** The artwork of a card's front runs this far past the trim on every side, so the cut never shows a white edge. */
export const BLEED_MM = 3
/** The handwriting stays at least this far inside the trim. */
export const SAFE_MARGIN_MM = 5
