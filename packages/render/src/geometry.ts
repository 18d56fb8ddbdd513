import { BLEED_MM, SAFE_MARGIN_MM, cardFormats, envelopeFormats, type CardFormat, type EnvelopeFormat, type SizeMm } from '@letters/contracts'
import type { Box } from './handwriting.js'

/** Points per millimetre: the layout is in points, as the PDF is. */
export const MM = 72 / 25.4

/** A page or a piece of paper, in points. */
export interface Size {
  width: number
  height: number
}

const inPoints = (size: SizeMm): Size => ({ width: size.width * MM, height: size.height * MM })

/** A6 landscape: the card of every letter accepted before designs had a format, and the card the layout's proportions were drawn for. */
export const CARD = inPoints(cardFormats.A6)
/** C6: the envelope an A6 card goes in, and the envelope the layout's proportions were drawn for. */
export const ENVELOPE = inPoints(envelopeFormats.C6)
/** How far a front's artwork runs past the trim on every side. */
export const BLEED = BLEED_MM * MM

/** A size grown by `bleed` on every side. */
export const withBleed = (size: Size, bleed: number): Size => ({ width: size.width + 2 * bleed, height: size.height + 2 * bleed })

/**
 * Where everything goes on a card of one format. The boxes are those of the A6 card, grown with
 * the card's width: a bigger card reads as the same card, larger (the formats are all close to
 * √2 landscape). For A6 every number is exactly the one the layout always had, so that letters
 * drawn before formats existed keep their bytes.
 */
export interface CardGeometry {
  format: CardFormat
  /** The card as cut (its trim). */
  size: Size
  /** The card's width relative to A6's: margins, strips and the hand's largest sizes grow with it. */
  scale: number
  /** The writing's margin on every side: 12 mm on A6, and never less than SAFE_MARGIN_MM. */
  margin: number
  /** Where the message goes: the card less its margins and the signature's strip. */
  message: Box
  /** The strip under the message where the card is signed. */
  signature: Box
  /** The size a short message is written at; longer ones shrink to fit. */
  maxFontSize: number
}

/** How an A6 card is laid out; the other formats scale it. */
const A6_MARGIN_MM = 12
const A6_SIGNATURE_STRIP_MM = 14
const A6_MAX_FONT_SIZE = 20

function layCard(format: CardFormat): CardGeometry {
  const size = inPoints(cardFormats[format])
  const scale = size.width / CARD.width
  const margin = Math.max(SAFE_MARGIN_MM * MM, A6_MARGIN_MM * MM * scale)
  const message: Box = { x: margin, y: margin, width: size.width - 2 * margin, height: size.height - 2 * margin - A6_SIGNATURE_STRIP_MM * MM * scale }
  const signature: Box = {
    x: margin,
    y: message.y + message.height,
    width: message.width,
    height: size.height - margin - (message.y + message.height),
  }
  return { format, size, scale, margin, message, signature, maxFontSize: A6_MAX_FONT_SIZE * scale }
}

/**
 * Where everything goes on an envelope of one format: the C6 layout with its boxes as fractions
 * of the envelope, and its margins and largest sizes scaled by the lesser of the two ratios to C6,
 * so that a long, low DL does not get a C5's writing.
 */
export interface EnvelopeGeometry {
  format: EnvelopeFormat
  size: Size
  /** The lesser of the envelope's width and height relative to C6's. */
  scale: number
  margin: number
  /** The recipient's block: the lower right half. */
  recipient: Box
  /** The size a short recipient block is written at. */
  recipientMaxSize: number
  /** The sender's block at the top left, when it is the sender's name (letters without a return address): its box and largest size. */
  sender: Box
  senderMaxSize: number
  /** The corner the logo and the return address share: from the top left margin down to a little above the recipient's block. */
  corner: Box
}

const C6_MARGIN_MM = 10
const C6_SENDER_HEIGHT_MM = 30
const C6_RECIPIENT_MAX_SIZE = 17
const C6_SENDER_MAX_SIZE = 11
/** The least gap between the sender's corner and the recipient's block. */
const CORNER_GAP_MM = 4

function layEnvelope(format: EnvelopeFormat): EnvelopeGeometry {
  const size = inPoints(envelopeFormats[format])
  const scale = Math.min(size.width / ENVELOPE.width, size.height / ENVELOPE.height)
  const margin = Math.max(SAFE_MARGIN_MM * MM, C6_MARGIN_MM * MM * scale)
  const recipient: Box = { x: size.width * 0.42, y: size.height * 0.48, width: size.width * 0.58 - margin, height: size.height * 0.52 - margin }
  return {
    format,
    size,
    scale,
    margin,
    recipient,
    recipientMaxSize: C6_RECIPIENT_MAX_SIZE * scale,
    sender: { x: margin, y: margin, width: size.width / 2 - margin, height: C6_SENDER_HEIGHT_MM * MM * scale },
    senderMaxSize: C6_SENDER_MAX_SIZE * scale,
    corner: { x: margin, y: margin, width: size.width / 2 - margin, height: recipient.y - CORNER_GAP_MM * MM * scale - margin },
  }
}

const cards = new Map<CardFormat, CardGeometry>()
const envelopes = new Map<EnvelopeFormat, EnvelopeGeometry>()

export function cardGeometry(format: CardFormat): CardGeometry {
  let geometry = cards.get(format)
  if (!geometry) cards.set(format, (geometry = layCard(format)))
  return geometry
}

export function envelopeGeometry(format: EnvelopeFormat): EnvelopeGeometry {
  let geometry = envelopes.get(format)
  if (!geometry) envelopes.set(format, (geometry = layEnvelope(format)))
  return geometry
}

/** The sheets the floor's printers take, landscape. */
const SHEETS = { A4: inPoints({ width: 297, height: 210 }), A3: inPoints({ width: 420, height: 297 }) }

/**
 * A sheet of cards with artwork keeps this much paper outside the cards' bleed: office and
 * production printers leave 4 to 5 mm of the edge unprinted, and a bleed reaching the edge would
 * be cut off there; the crop marks go in it too. Cards without artwork need none (the legacy A6
 * sheet has none): their writing keeps its own margins.
 */
export const SHEET_EDGE = 10 * MM

/**
 * How a batch's cards are laid out on the floor's sheets: a grid of equal slots, each a card
 * with its bleed, butting on one another (between two cards with artwork, their bleeds make the
 * gutter the two cuts leave), centred on the sheet. Cards are never turned: a card's front and
 * back stay upright on their two sides, and the duplex backs are simply mirrored.
 */
export interface Imposition {
  sheet: Size
  columns: number
  rows: number
  /** A card and its bleed. */
  slot: Size
  bleed: number
  /** The top left corner of the grid. */
  left: number
  top: number
}

export function imposition(card: Size, bleed: number): Imposition {
  const slot = withBleed(card, bleed)
  const edge = bleed > 0 ? SHEET_EDGE : 0
  // The sheet that takes the most cards for its paper (four A6 to an A4, four A5 to an A3, one
  // A5 with its bleed to an A4); a tie goes to the smaller, commoner A4.
  let best: Imposition | undefined
  let bestPerA4 = 0
  for (const [name, sheet] of Object.entries(SHEETS)) {
    // A hair of tolerance: two A6 fill an A4's height exactly.
    const fit = (room: number, each: number) => Math.floor((room - 2 * edge) / each + 1e-9)
    const columns = fit(sheet.width, slot.width)
    const rows = fit(sheet.height, slot.height)
    const perA4 = (columns * rows) / (name === 'A3' ? 2 : 1)
    if (perA4 > bestPerA4) {
      bestPerA4 = perA4
      best = { sheet, columns, rows, slot, bleed, left: (sheet.width - columns * slot.width) / 2, top: (sheet.height - rows * slot.height) / 2 }
    }
  }
  if (!best) throw new RangeError(`a ${card.width / MM} × ${card.height / MM} mm card fits no sheet`)
  return best
}

/** The top left corner of slot `index` (left to right, top to bottom) of a sheet; `mirrored` for the back of a duplex sheet, turned over left to right. */
export function slotAt(layout: Imposition, index: number, mirrored = false): { x: number; y: number } {
  const column = index % layout.columns
  const row = Math.floor(index / layout.columns)
  return { x: layout.left + (mirrored ? layout.columns - 1 - column : column) * layout.slot.width, y: layout.top + row * layout.slot.height }
}
