import { Type, type Static } from 'typebox'
import { FileVersion, Literals, Nullable, Recipient, type VerifiedAddress } from './common.js'
import { QrPlacement } from './tracking.js'
import { cardFormatNames, envelopeFormatNames } from './formats.js'

/**
 * `printed`: the floor prints the design's front artwork on blank stock. `preprinted`: the floor
 * loads stock that already carries it (its `stockCode`), and prints only the handwriting.
 */
export const cardProductions = ['printed', 'preprinted'] as const
export type CardProduction = (typeof cardProductions)[number]
export const DEFAULT_CARD_PRODUCTION: CardProduction = 'printed'

/**
 * Whether the floor prints a card design's front artwork. A `printed` card's artwork is printed
 * on blank stock. A `preprinted` card may carry artwork too, a picture of the front its stock
 * already has: it is for the proofs and previews only, so that the client sees the message with
 * its card, and it never reaches a print file.
 */
export const printsFront = (production: CardProduction): boolean => production === 'printed'

/** The files an artwork may be uploaded as. */
export const artworkContentTypes = ['image/svg+xml', 'application/pdf', 'image/png'] as const
export type ArtworkContentType = (typeof artworkContentTypes)[number]
export const ARTWORK_MAX_BYTES = 20 * 1024 * 1024

/** What an artwork is for: a card's front, an envelope's logo in the sender's corner, a signature. */
export const artworkUses = ['card-front', 'envelope-logo', 'signature'] as const
export type ArtworkUse = (typeof artworkUses)[number]

/** An artwork as the API shows it. Each upload is a new version; letters keep the version they were accepted with. */
export const ArtworkMeta = FileVersion(artworkContentTypes)
export type ArtworkMeta = Static<typeof ArtworkMeta>

/** A signature's drawing, ready to draw: paths (SVG path data, in the drawing's own units) or a transparent PNG. */
export type SignatureDrawing = { kind: 'paths'; width: number; height: number; paths: string[] } | { kind: 'image'; width: number; height: number }

/** How a letter's drawing names one version of an artwork. */
export const artworkKey = (ownerId: string, version: number) => `${ownerId}@${version}`

/**
 * The stock the floor loads for one side of a letter: the design's `stockCode`, or when it has
 * none the design and its artwork version (stock printed for that design). A batch holds one card
 * stock and one envelope stock.
 */
export function stockOf(side: { designId: string; stockCode: string | null; artwork: { version: number } | null }): string {
  return side.stockCode ?? artworkKey(side.designId, side.artwork?.version ?? 0)
}

/** A design's own stock (artworkKey) inside a stock as stockOf and stocksOf write it: the design's id and its artwork version. */
export const DESIGN_STOCK = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})@(\d+)/

/**
 * The card stock and envelope stock the floor loads for a letter, as a batch is keyed by them and
 * the floor reads them: the format, the stock, and for cards whether the front is printed on it
 * (two designs may share a stock code yet differ there, and one file cannot hold both). '' for a
 * letter accepted before designs had stock.
 */
export function stocksOf(spec: PrintSpec | null): Stocks {
  if (!spec) return { cardStock: '', envelopeStock: '' }
  const front = printsFront(spec.card.production) && spec.card.artwork ? ` ${PRINTED_FRONT}` : ''
  return { cardStock: `${spec.card.format} ${stockOf(spec.card)}${front}`, envelopeStock: `${spec.envelope.format} ${stockOf(spec.envelope)}` }
}

/** Marks a card stock on which the floor prints the front. */
export const PRINTED_FRONT = '+ anverso impreso'
export interface Stocks {
  cardStock: string
  envelopeStock: string
}

const SizeSchema = Type.Object({ width: Type.Number({ description: 'mm' }), height: Type.Number({ description: 'mm' }) })

/** A sender's return address as kept and shown: normalized by the recipients' rules, with its country's Spanish name. */
const { surname: _surname, ...returnAddressFields } = Recipient.properties
export const StoredReturnAddress = Type.Object({ ...returnAddressFields, countryName: Type.String() })
export type StoredReturnAddress = Static<typeof StoredReturnAddress>

const ArtworkVersion = Nullable(Type.Object({ version: Type.Integer({ minimum: 1 }), sha256: Type.String() }))

/**
 * What a letter is printed with, fixed when it is accepted (letters.print_spec, written by the
 * SQL function letter_print_spec): the designs as they were then, the artwork versions they had,
 * the signature, and the sender's name and return address. A later change or upload never alters
 * a letter already paid for. Null on letters accepted before designs had a product.
 */
export const PrintSpec = Type.Object({
  card: Type.Object({
    designId: Type.String(),
    name: Type.String(),
    format: Literals(cardFormatNames),
    production: Literals(cardProductions),
    stockCode: Nullable(Type.String()),
    artwork: ArtworkVersion,
    /** Absent on letters accepted before designs placed a QR code. */
    qrPlacement: Type.Optional(Nullable(QrPlacement)),
  }),
  envelope: Type.Object({
    designId: Type.String(),
    name: Type.String(),
    format: Literals(envelopeFormatNames),
    stockCode: Nullable(Type.String()),
    paperColor: Nullable(Type.String()),
    artwork: ArtworkVersion,
  }),
  signature: Nullable(Type.Object({ id: Type.String(), artwork: ArtworkVersion })),
  senderName: Type.String(),
  returnAddress: Nullable(StoredReturnAddress),
})
export type PrintSpec = Static<typeof PrintSpec>

/** A card design as the API shows it: the product a letter's card is. */
export const CardDesign = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  format: Literals(cardFormatNames),
  size: SizeSchema,
  production: Literals(cardProductions),
  stockCode: Nullable(Type.String()),
  artwork: Nullable(ArtworkMeta),
  qrPlacement: Nullable(QrPlacement),
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

export const Sender = Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String(), returnAddress: Nullable(StoredReturnAddress) })
export type Sender = Static<typeof Sender>

export const Signature = Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String(), artwork: Nullable(ArtworkMeta) })
export type Signature = Static<typeof Signature>

/**
 * What a letter's row holds that its drawing needs, with the artwork versions its print spec
 * names (by artworkKey): read by packages/letters (readLetterDrawings), drawn by
 * packages/render (drawingOf).
 */
export interface LetterDrawingSource {
  letterId: string
  code: string
  fontName: string
  /** The drawing the letter was accepted with (DRAWING_REVISION then). */
  drawing: number
  inkColor: string
  message: string
  senderName: string
  recipient: Recipient
  address: VerifiedAddress | null
  addressLines: string[] | null
  printSpec: PrintSpec | null
  artworks: ReadonlyMap<string, { print: Uint8Array; drawing: SignatureDrawing | null }>
  /** For a letter in an account's own font: the version of its file the letter was accepted with; null for a built-in hand. */
  ownFont: OwnFontFace | null
  /** The code of its QR code's short link (letters.tracking_code); null: the card carries no QR code. */
  trackingCode: string | null
}

/** One version of an account's font as the renderer parses it, and the built-in hand the plotter writes it in. */
export interface OwnFontFace {
  /** The font's id and version (ownFontKey): a version never changes, so a parse is kept by it. */
  key: string
  face: Uint8Array
  plotterFont: string
}

export const ownFontKey = (fontId: string, version: number) => `${fontId}:${version}`
