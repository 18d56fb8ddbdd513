import { Type, type Static, type TSchema } from 'typebox'
import { Literals } from './common.js'

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

/**
 * `printed`: the floor prints the design's front artwork on blank stock. `preprinted`: the floor
 * loads stock that already carries it (its `stockCode`), and prints only the handwriting.
 */
export const cardProductions = ['printed', 'preprinted'] as const
export type CardProduction = (typeof cardProductions)[number]

/** The files an artwork may be uploaded as. */
export const artworkContentTypes = ['image/svg+xml', 'application/pdf', 'image/png'] as const
export type ArtworkContentType = (typeof artworkContentTypes)[number]
export const ARTWORK_MAX_BYTES = 20 * 1024 * 1024

/** What an artwork is for: a card's front, an envelope's logo in the sender's corner, a signature. */
export const artworkUses = ['card-front', 'envelope-logo', 'signature'] as const
export type ArtworkUse = (typeof artworkUses)[number]

/** An artwork as the API shows it. Each upload is a new version; letters keep the version they were accepted with. */
export const ArtworkMeta = Type.Object({
  contentType: Literals(artworkContentTypes),
  bytes: Type.Integer(),
  sha256: Type.String(),
  version: Type.Integer({ minimum: 1 }),
})
export type ArtworkMeta = Static<typeof ArtworkMeta>

/** A signature's drawing, ready to draw: paths (SVG path data, in the drawing's own units) or a transparent PNG. */
export type SignatureDrawing = { kind: 'paths'; width: number; height: number; paths: string[] } | { kind: 'image'; width: number; height: number }

/**
 * What a letter is printed with, fixed when it is accepted (letters.print_spec): the designs as
 * they were then and the artwork versions they had. A later change or upload never alters a
 * letter already paid for. Absent (null) on letters accepted before designs had a product.
 */
export interface PrintSpec {
  card: {
    designId: string
    name: string
    format: CardFormat
    production: CardProduction
    stockCode: string | null
    artwork: { version: number; sha256: string } | null
  }
  envelope: {
    designId: string
    name: string
    format: EnvelopeFormat
    stockCode: string | null
    paperColor: string | null
    artwork: { version: number; sha256: string } | null
  }
  signature: { id: string; artwork: { version: number; sha256: string } | null } | null
  /** The sender's return address as it was normalized when the sender was saved; null when it has none. */
  returnAddress: StoredReturnAddress | null
}

/** A sender's return address, as given (`POST /admin/accounts/{id}/senders`) and as kept once normalized. */
export interface ReturnAddress {
  name: string
  company: string | null
  address: string
  zip: string
  city: string
  province: string | null
  country: string
}

/**
 * The stock the floor loads for one side of a letter: the design's `stockCode`, or when it has
 * none the design and its artwork version (stock printed for that design). A batch holds one card
 * stock and one envelope stock.
 */
export function stockOf(side: { designId: string; stockCode: string | null; artwork: { version: number } | null }): string {
  return side.stockCode ?? `${side.designId}@${side.artwork?.version ?? 0}`
}

/** The card stock and envelope stock the floor loads for a letter: '' for a letter accepted before designs had stock. */
export function stocksOf(spec: PrintSpec | null): Stocks {
  return spec ? { cardStock: stockOf(spec.card), envelopeStock: stockOf(spec.envelope) } : { cardStock: '', envelopeStock: '' }
}
export interface Stocks {
  cardStock: string
  envelopeStock: string
}

/** A return address as kept: normalized (casing, street type, postal code, province) and with its country's Spanish name. */
export interface StoredReturnAddress extends ReturnAddress {
  countryName: string
}

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])
const SizeSchema = Type.Object({ width: Type.Number({ description: 'mm' }), height: Type.Number({ description: 'mm' }) })

/** A card design as the API shows it: the product a letter's card is. */
export const CardDesign = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  format: Literals(cardFormatNames),
  size: SizeSchema,
  production: Literals(cardProductions),
  stockCode: Nullable(Type.String()),
  artwork: Nullable(ArtworkMeta),
})
export type CardDesign = Static<typeof CardDesign>

/** An envelope design as the API shows it. */
export const EnvelopeDesign = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  format: Literals(envelopeFormatNames),
  size: SizeSchema,
  stockCode: Nullable(Type.String()),
  paperColor: Nullable(Type.String()),
  artwork: Nullable(ArtworkMeta),
})
export type EnvelopeDesign = Static<typeof EnvelopeDesign>

/** A return address as the API shows it: normalized, with the country's Spanish name. */
export const ReturnAddressView = Type.Object({
  name: Type.String(),
  company: Nullable(Type.String()),
  address: Type.String(),
  zip: Type.String(),
  city: Type.String(),
  province: Nullable(Type.String()),
  country: Type.String(),
  countryName: Type.String(),
})

export const Sender = Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String(), returnAddress: Nullable(ReturnAddressView) })
export type Sender = Static<typeof Sender>

export const Signature = Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String(), artwork: Nullable(ArtworkMeta) })
export type Signature = Static<typeof Signature>
