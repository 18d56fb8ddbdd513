import { constants, type ZlibOptions } from 'node:zlib'
import PDFDocument from 'pdfkit'
import {
  DEFAULT_CARD_FORMAT,
  DEFAULT_ENVELOPE_FORMAT,
  DEFAULT_INK,
  DRAWING_REVISION,
  joinedHands,
  printHands,
  type Drawing,
  isFontName,
  printsFront,
  type FontName,
  type InkColor,
} from '@letters/contracts'
import { barsWidth, code128Bars, code128Layout, type Bar } from './barcode.js'
import type { DesignToRender } from './design.js'
import { fontOf, type HandChoice, type OwnFont } from './fonts.js'
import {
  BLEED,
  MM,
  cardGeometry,
  envelopeGeometry,
  imposition,
  slotAt,
  withBleed,
  type CardGeometry,
  type EnvelopeGeometry,
  type Imposition,
  type Size,
} from './geometry.js'
import { MIN_FONT_SIZE, fitSize, handWidth, pdfMeasure, pdfPen, writeByHand, type Box, type Measure, type Pen, type Wrapping } from './handwriting.js'
import { DocumentImages, fitScale, pngSize, type OpenedImage } from './images.js'
import { pathSegments } from './paths.js'
import { besideQr, cardQr, type CardQr, type LetterQr, type Rect } from './qr.js'
import { seededRandom } from './random.js'

export interface LetterToRender {
  /** Seeds the hand: the same id always gives the same strokes. */
  letterId: string
  /** The letter's short code (letters.code): barcoded and printed small on the envelope. */
  code: string
  /** A built-in hand's name, or an account font's (then `ownFont` is its file). */
  fontName: string
  /** For a letter in an account's own font: the version of its file the letter was accepted with. */
  ownFont?: OwnFont | undefined
  message: string
  /** The line the card is signed with. */
  signature: string
  /** The recipient block, line by line, as it goes on the envelope. */
  recipientLines: string[]
  /** The sender block, line by line. */
  senderLines: string[]
  /**
   * The designs the letter was accepted with. Absent on letters accepted before designs had a
   * product: those are drawn exactly as they always were, an A6 card in a C6 envelope, byte for
   * byte (their kept proofs and reprints must not change).
   */
  design?: DesignToRender | undefined
  /**
   * The drawing the letter was accepted with (letters.drawing): 4 writes each glyph as its font
   * has it, in black; 5 gives every glyph its own shape and writes in the letter's ink. Absent:
   * the current one, DRAWING_REVISION.
   */
  drawing?: Drawing | undefined
  /** The ink of drawing 5 on: the message, the envelope's writing and a drawn signature. Blue if absent. */
  ink?: InkColor | undefined
  /** The QR code the card carries, for a letter with a tracking URL. Absent: none, and the card is drawn as it always was. */
  qr?: LetterQr | undefined
}

/**
 * Which drawing a file is made with, for a letter that does not say (LetterToRender.drawing); a
 * kept proof's name carries it, so that proofs are drawn again when it changes.
 */
export { DRAWING_REVISION }

/** The hand a letter is written in: its account's font, or a built-in one. */
export function handOf(letter: Pick<LetterToRender, 'fontName' | 'ownFont'>): HandChoice {
  if (letter.ownFont) return letter.ownFont
  if (!isFontName(letter.fontName)) throw new Error(`the font ${letter.fontName} is neither a built-in hand nor given with its file`)
  return letter.fontName
}

/** The built-in hand whose single strokes the plotter writes the letter in: its own, or its account font's stand-in. */
export const plotterHand = (letter: Pick<LetterToRender, 'fontName' | 'ownFont'>): FontName => {
  const hand = handOf(letter)
  return typeof hand === 'string' ? hand : hand.plotterFont
}

/** The drawing a letter is written in. */
export const letterDrawing = (letter: Pick<LetterToRender, 'drawing'>): Drawing => letter.drawing ?? DRAWING_REVISION

/** Each ink as a ballpoint writes it: deep, a little greyed, never a printer's pure primary. */
export const inkRgb: Record<InkColor, string> = {
  blue: '#1b3a8c',
  black: '#232326',
  green: '#1f5e3b',
  purple: '#4a2c7a',
  red: '#a8262e',
}

/** The ink a letter's drawn signature is in: its writing's ink, or (drawing 4) the dark blue-black INK. */
export const signatureInk = (letter: Pick<LetterToRender, 'drawing' | 'ink'>) => (letterDrawing(letter) === 4 ? INK : inkRgb[letter.ink ?? DEFAULT_INK])

declare global {
  namespace PDFKit {
    interface PDFDocumentOptions {
      /** zlib's options for the document's streams (patches/pdfkit+0.17.2.patch); zlib's defaults if absent. */
      deflate?: ZlibOptions
      /** zlib's options for its font files; `deflate` if absent. */
      fontDeflate?: ZlibOptions
    }
  }
}

/**
 * Deflating the streams was the costliest step of a render. The page's stream is glyph
 * placements, no two alike: zlib's fastest level packs it some 8% larger than its default, in
 * half the time. Font files are glyph outlines, which repeat little: Huffman coding alone packs
 * them within 8% of any level, in half the time again.
 */
const DEFLATE: ZlibOptions = { level: constants.Z_BEST_SPEED }
const FONT_DEFLATE: ZlibOptions = { level: constants.Z_BEST_SPEED, strategy: constants.Z_HUFFMAN_ONLY }

export function newDocument(size: Size, title: string, firstPage = true) {
  // Fixed metadata: a reprint must be byte for byte the same file.
  return new PDFDocument({
    autoFirstPage: firstPage,
    size: [size.width, size.height],
    margin: 0,
    deflate: DEFLATE,
    fontDeflate: FONT_DEFLATE,
    info: { Title: title, Creator: 'letters', Producer: 'letters', CreationDate: new Date(0), ModDate: new Date(0) },
  })
}

type PDFDoc = InstanceType<typeof PDFDocument>

export function toBuffer(doc: PDFDoc): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    doc.on('data', (chunk: Buffer) => chunks.push(chunk))
    doc.on('end', () => resolve(Buffer.concat(chunks)))
    doc.on('error', reject)
    doc.end()
  })
}

/** A page of `size` at the end of the document. */
const addPage = (doc: PDFDoc, size: Size) => doc.addPage({ size: [size.width, size.height], margin: 0 })

/** The geometry of a letter's card and envelope: its design's formats, or A6 and C6 for a letter without one. */
export const cardOf = (letter: Pick<LetterToRender, 'design'>) => cardGeometry(letter.design?.card.format ?? DEFAULT_CARD_FORMAT)
export const envelopeOf = (letter: Pick<LetterToRender, 'design'>) => envelopeGeometry(letter.design?.envelope.format ?? DEFAULT_ENVELOPE_FORMAT)

/** The front a card is printed with: a `printed` card's artwork. A preprinted card's stock carries its front already. */
const frontOf = (letter: LetterToRender) => (letter.design && printsFront(letter.design.card.production) ? letter.design.card.front : null)
/** The front a card's proof shows: its artwork, printed or (a preprinted card's) the picture of its stock's front. */
const proofFrontOf = (letter: LetterToRender) => letter.design?.card.front ?? null
const logoOf = (letter: LetterToRender) => letter.design?.envelope.logo ?? null
const signatureImageOf = (letter: LetterToRender) => (letter.design?.signature?.kind === 'image' ? letter.design.signature.png : null)

/** Where the message goes on an A6 card, the card of every letter without a design. */
export const MESSAGE_BOX: Box = cardGeometry(DEFAULT_CARD_FORMAT).message

/** A signature's drawing, as a letter's design carries it. */
export type DesignSignature = NonNullable<DesignToRender['signature']>

/** Where a signature's drawing goes on the page: its top left corner, and the points per unit of the drawing. */
export interface Placement {
  x: number
  y: number
  scale: number
}

/**
 * A hand: how its font measures text (the layout) and the pen it writes with. The layout of a
 * card and an envelope is one, whatever writes it: a PDF font (the printers) or strokes (the plotter).
 */
export interface Hand {
  measure: Measure
  /** A fresh pen for one block of lines. */
  pen(): Pen
  /** Draws a signature's drawing at `place`; false when this hand cannot (a pen cannot draw an image), and the card is then signed with the name. */
  sign(drawing: DesignSignature, place: Placement): boolean
  /** Fills a code's dark areas, placed exactly as given: never moved or shrunk with the writing, which a reader would no longer decode. */
  fill(areas: Rect[]): void
  /**
   * How the hand's print measures: the recipient block's lines the post reads (postalLines) are
   * written in it, with the pen's `print`. Absent in drawing 4, whose envelopes are all in the hand.
   */
  print?: Measure
}

/** The ink a signature is drawn in, and the plotter's pen in its proofs: a dark blue-black, as a fountain pen's. */
export const INK = '#1a2a6c'
/** The line a signature's paths are drawn with: a fine pen's. */
const SIGNATURE_PEN = 0.35 * MM
/** A signature's drawing is at most this wide on an A6 card, and as much larger as a larger card is. */
const SIGNATURE_MAX_WIDTH = 45 * MM

/**
 * Where a signature's drawing goes: under the message, at the bottom right of the signature
 * strip where the name would be written, as tall as the strip lets it be and at most
 * SIGNATURE_MAX_WIDTH wide, its shape kept. The printer and the plotter place it alike.
 */
export function signaturePlace(drawing: Size, card: CardGeometry, strip: Box = card.signature): Placement {
  if (!(drawing.width > 0 && drawing.height > 0)) throw new RangeError(`a signature's drawing of ${drawing.width} × ${drawing.height} has no size`)
  const scale = fitScale(drawing, { width: Math.min(strip.width, SIGNATURE_MAX_WIDTH * card.scale), height: strip.height })
  return { x: strip.x + strip.width - drawing.width * scale, y: strip.y + strip.height - drawing.height * scale, scale }
}

/**
 * The hand of a PDF document: its current font, registered under the font's own name: pdfkit
 * caches a font by the name it was registered with, and a batch's file mixes fonts. Its
 * signatures' images are among the document's `images`.
 */
function pdfHand(doc: PDFDoc, letter: Pick<LetterToRender, 'fontName' | 'ownFont' | 'drawing' | 'ink'>, images?: DocumentImages): Hand {
  const hand = handOf(letter)
  const { font, id } = fontOf(hand)
  const name = `hand-${id}`
  doc.registerFont(name, font)
  doc.font(name)
  // An account's font is not known to join its letters: each glyph is varied whole.
  const joined = typeof hand === 'string' && joinedHands.has(hand)
  // The hand's print (an account's font prints in itself): another hand's is laid out in a document
  // of its own, as the page draws its outlines and embeds no hand's font.
  const printHand = typeof hand === 'string' ? printHands[hand] : undefined
  const drawing = letterDrawing(letter)
  const ink =
    drawing === 4
      ? undefined
      : { drawing, rgb: rgbOf(inkRgb[letter.ink ?? DEFAULT_INK]), joined, print: printHand && printHand !== hand ? layoutDocument(printHand) : doc }
  const measure = pdfMeasure(doc)
  const signatureColor = signatureInk(letter)
  return {
    measure,
    print: ink && (ink.print === doc ? measure : pdfMeasure(ink.print)),
    pen: () => pdfPen(doc, ink),
    sign: (drawing, place) => (drawSignature(doc, drawing, place, signatureColor, images), true),
    fill: (areas) => fillAreas(doc, areas),
  }
}

/** A code's dark areas filled in black, as one path: adjacent areas meet without a seam. */
function fillAreas(doc: PDFDoc, areas: readonly Rect[]): void {
  doc.save()
  for (const area of areas) doc.rect(area.x, area.y, area.width, area.height)
  doc.fillColor('black').fill().restore()
}

/** Per hand, a document in its font whose layout alone is read (a print's), made once per process. */
const layoutDocuments = new Map<FontName, PDFDoc>()

function layoutDocument(fontName: FontName): PDFDoc {
  let doc = layoutDocuments.get(fontName)
  if (!doc) {
    doc = newDocument(envelopeOf({}).size, 'layout')
    doc.registerFont(fontName, fontOf(fontName).font).font(fontName)
    layoutDocuments.set(fontName, doc)
  }
  return doc
}

/** A colour's #rrggbb as fractions of one, as a PDF sets it. */
export const rgbOf = (hex: string) => [1, 3, 5].map((at) => parseInt(hex.slice(at, at + 2), 16) / 255) as [number, number, number]

/**
 * A signature's drawing on a PDF page: its paths stroked (never filled) with a pen's line in the
 * ink, or its transparent image. Clipped to its box, widened by half the pen's line, so that a
 * drawing that overruns the box it declares never writes over the message.
 */
function drawSignature(doc: PDFDoc, drawing: DesignSignature, place: Placement, color: string, images: DocumentImages | undefined): void {
  const { x, y, scale } = place
  if (drawing.kind === 'image') {
    if (!images) throw new Error("a signature's image needs the document's images")
    doc.image(images.get(drawing.png), x, y, { width: drawing.width * scale, height: drawing.height * scale, ignoreOrientation: true })
    return
  }
  const pen = SIGNATURE_PEN / scale
  doc.save().translate(x, y).scale(scale)
  doc
    .rect(-pen / 2, -pen / 2, drawing.width + pen, drawing.height + pen)
    .clip()
    .lineWidth(pen)
    .lineCap('round')
    .lineJoin('round')
    .strokeColor(color)
  for (const path of drawing.paths) {
    for (const segment of pathSegments(path)) {
      if (segment.kind === 'move') doc.moveTo(...segment.to)
      else if (segment.kind === 'line') doc.lineTo(...segment.to)
      else if (segment.kind === 'curve') doc.bezierCurveTo(...segment.c1, ...segment.c2, ...segment.to)
      else doc.closePath()
    }
    doc.stroke()
  }
  doc.restore()
}

/** The size and lines the message is written at: the largest that fits the card's message box (less a QR code's place). */
export function cardLayout(letter: Pick<LetterToRender, 'fontName' | 'ownFont' | 'message' | 'design' | 'qr'>): {
  size: number
  lines: string[]
  lineHeight: number
} {
  const card = cardOf(letter)
  return messageLayout(pdfHand(newDocument(card.size, 'layout'), letter).measure, letter.message, card, cardPlaces(letter).message)
}

export const messageLayout = (measure: Measure, message: string, card: CardGeometry = cardGeometry(DEFAULT_CARD_FORMAT), box: Box = card.message) =>
  fitSize(measure, message, box, card.maxFontSize)

/** Where a card's writing and its QR code go: the boxes of the card's geometry, less the code's square and its clearance. */
export interface CardPlaces {
  message: Box
  /** The strip the card is signed in, and its right and bottom edges, which the name is written against. */
  signature: Box
  right: number
  bottom: number
  /** Null: the letter has no QR code. */
  qr: CardQr | null
}

export function cardPlaces(letter: Pick<LetterToRender, 'design' | 'qr'>): CardPlaces {
  const card = cardOf(letter)
  const { margin } = card
  // Without a code, the card's own boxes and edges: its letters keep their bytes.
  if (!letter.qr) return { message: card.message, signature: card.signature, right: card.size.width - margin, bottom: card.size.height - margin, qr: null }
  const qr = cardQr(letter.qr, card)
  const signature = besideQr(card.signature, qr.square, card)
  return { message: besideQr(card.message, qr.square, card), signature, right: signature.x + signature.width, bottom: signature.y + signature.height, qr }
}

/**
 * The card, its trim's top left corner at the origin: the message, shrunk to fit, then under it
 * the signature's drawing, or the sender's name written at the bottom right; a QR code in its
 * corner, the writing kept clear of it.
 */
export function drawCard(hand: Hand, letter: LetterToRender): void {
  const card = cardOf(letter)
  const places = cardPlaces(letter)
  const random = seededRandom(`${letter.letterId}:card`)
  const { size, lines, lineHeight } = messageLayout(hand.measure, letter.message, card, places.message)
  writeByHand(hand.pen(), lines, places.message, size, lineHeight, random, letterDrawing(letter))
  if (places.qr) hand.fill(places.qr.runs)
  const drawing = letter.design?.signature
  if (drawing && hand.sign(drawing, signaturePlace(drawing, card, places.signature))) return

  // Right-aligned at the bottom, at the message's size but no smaller than 12 (on A6: a name
  // under a long message stays legible); a name too long for one line shrinks, then wraps upwards.
  const signature = fitSize(hand.measure, letter.signature, places.signature, Math.min(card.maxFontSize, Math.max(size, 12 * card.scale)))
  const lastLineY = places.bottom - signature.size * 1.2
  signature.lines.forEach((line, index) => {
    const x = Math.max(places.signature.x, places.right - handWidth(hand.measure, line, signature.size))
    const y = lastLineY - (signature.lines.length - 1 - index) * signature.size * lineHeight
    writeByHand(hand.pen(), [line], { x, y }, signature.size, lineHeight, random, letterDrawing(letter))
  })
}

/** The box a logo is fitted in, at the envelope's top left margin. */
const LOGO_BOX: Size = { width: 45 * MM, height: 18 * MM }
/** Between the logo and the return address under it. */
const LOGO_GAP = 2 * MM
/** A return address is written small, as a person writes one on the back or the corner of an envelope. */
const RETURN_ADDRESS_MAX_SIZE = 10

/** What goes in the envelope's top left corner: the logo's box, if any, and the block written under it (or at the top). */
interface SenderCorner {
  logo: Box | null
  box: Box
  maxSize: number
  lines: string[]
  wrapping: Wrapping
}

function senderCorner(letter: LetterToRender, envelope: EnvelopeGeometry): SenderCorner {
  const { design } = letter
  if (!design) return { logo: null, box: envelope.sender, maxSize: envelope.senderMaxSize, lines: letter.senderLines, wrapping: 'prose' }
  const { corner } = envelope
  let logo: Box | null = null
  if (design.envelope.logo) {
    const pixels = pngSize(design.envelope.logo)
    const scale = fitScale(pixels, LOGO_BOX)
    logo = { x: corner.x, y: corner.y, width: pixels.width * scale, height: pixels.height * scale }
  }
  const top = logo ? logo.y + logo.height + LOGO_GAP : corner.y
  const below: Box = { x: corner.x, y: top, width: corner.width, height: corner.y + corner.height - top }
  if (design.returnAddressLines) return { logo, box: below, maxSize: RETURN_ADDRESS_MAX_SIZE, lines: design.returnAddressLines, wrapping: 'address' }
  // The sender's name alone, in the sender block's box as a letter without a design has it.
  return {
    logo,
    box: { ...below, height: Math.min(below.height, envelope.sender.height) },
    maxSize: envelope.senderMaxSize,
    lines: letter.senderLines,
    wrapping: 'prose',
  }
}

/**
 * The envelope: the sender's block (or the return address, under the logo's place) at the top
 * left, the recipient block in the lower right half. A design's address blocks never leave a
 * one-letter word (a door, a staircase) alone at the start of a line; letters without a design
 * keep the wrapping they were drawn with.
 */
export function drawEnvelope(hand: Hand, letter: LetterToRender): void {
  const envelope = envelopeOf(letter)
  const random = seededRandom(`${letter.letterId}:envelope`)
  const corner = senderCorner(letter, envelope)
  const sender = fitSize(hand.measure, corner.lines.join('\n'), corner.box, corner.maxSize, MIN_FONT_SIZE, corner.wrapping)
  writeByHand(hand.pen(), sender.lines, corner.box, sender.size, sender.lineHeight, random, letterDrawing(letter))
  const recipient = fitSize(
    hand.measure,
    letter.recipientLines.join('\n'),
    envelope.recipient,
    envelope.recipientMaxSize,
    MIN_FONT_SIZE,
    letter.design ? 'address' : 'prose',
    hand.print && { measure: hand.print, paragraphs: postalLines(letter.recipientLines) },
  )
  const { lines, size, lineHeight, printFrom } = recipient
  writeByHand(hand.pen(), lines, envelope.recipient, size, lineHeight, random, letterDrawing(letter), printFrom)
}

/**
 * How many of an address block's lines, at its end, the post's machines read: its last (the
 * country's abroad, the postal code's and town's at home) and the lines in capitals right above
 * it (abroad, the town's and the postal code's: recipientBlock writes the town in capitals).
 */
function postalLines(lines: readonly string[]): number {
  let from = lines.length - 1
  while (from > 0 && !/\p{Ll}/u.test(lines[from - 1]!)) from--
  return lines.length - Math.max(0, from)
}

/** A printed envelope: the logo, the hand's drawing, and the letter's code as bars with the code in small print. */
function drawPrintedEnvelope(doc: PDFDoc, letter: LetterToRender, images: DocumentImages): void {
  const envelope = envelopeOf(letter)
  const logo = logoOf(letter)
  const logoBox = logo && senderCorner(letter, envelope).logo
  if (logo && logoBox) doc.image(images.get(logo), logoBox.x, logoBox.y, { width: logoBox.width, height: logoBox.height, ignoreOrientation: true })
  drawEnvelope(pdfHand(doc, letter, images), letter)
  const code = envelopeCode(letter.code, envelope)
  for (const bar of code.bars) doc.rect(bar.x, code.top, bar.width, code.height)
  doc.fillColor('black').fill()
  doc
    .font('Helvetica')
    .fontSize(code.text.size)
    .text(letter.code, code.text.x, code.text.y, { width: code.text.width, align: 'center', characterSpacing: code.text.spacing, lineBreak: false })
}

/** Width of the narrowest bar: 0.3 mm reads with any handheld scanner and keeps a 10-character code under 45 mm. */
export const CODE_MODULE = 0.3 * MM
const BAR_HEIGHT = 10 * MM
const CODE_TEXT_SIZE = 7

/** Where a letter's code goes on its envelope, in points from the top left: its bars, and the box of the code in small print under them. */
export interface EnvelopeCode {
  bars: Bar[]
  top: number
  height: number
  /** The code's line: its box's left edge and top, the width it is centred in, its size and the spacing added between characters. */
  text: { x: number; y: number; width: number; size: number; spacing: number }
}

/**
 * The letter's code as Code 128 bars, with the same code in small print under them: at the
 * bottom left of the envelope, left of the recipient's block, so neither the post's address
 * readers nor a person mistakes it for part of the address. The printer fills these bars and the
 * plotter hatches them: one place decides them. The bars keep their size on every envelope, as
 * the scanners read them.
 */
export function envelopeCode(code: string, envelope: EnvelopeGeometry = envelopeGeometry(DEFAULT_ENVELOPE_FORMAT)): EnvelopeCode {
  const x = envelope.margin
  const bottom = envelope.size.height - envelope.margin
  const right = envelope.recipient.x - 5 * MM
  const bars = code128Layout(code, x, CODE_MODULE)
  const width = barsWidth(code128Bars(code)) * CODE_MODULE
  if (x + width > right) throw new RangeError(`the code ${code} is too long for the envelope`)
  const top = bottom - BAR_HEIGHT - CODE_TEXT_SIZE * 1.2
  return { bars, top, height: BAR_HEIGHT, text: { x, y: top + BAR_HEIGHT + 1, width, size: CODE_TEXT_SIZE, spacing: 1 } }
}

/**
 * Tells the printer where a page with a bleed is cut: the TrimBox (the card) inside the
 * BleedBox (the whole page: the artwork's overrun, cut off).
 */
function markTrim(doc: PDFDoc, trim: Size, bleed: number): void {
  const data = doc.page.dictionary.data as Record<string, unknown>
  data.TrimBox = [bleed, bleed, bleed + trim.width, bleed + trim.height]
  data.BleedBox = [0, 0, trim.width + 2 * bleed, trim.height + 2 * bleed]
}

/**
 * A card's front artwork, placed as it covers the card and its bleed, the bleed's top left
 * corner at x, y: a print page shows it whole; a proof, whose page is the trim, places it at
 * -BLEED so that the page cuts it as the guillotine will. An artwork of another shape than the
 * card's would print stretched: that is a mistake upstream, refused here.
 */
function drawFront(doc: PDFDoc, front: OpenedImage, card: CardGeometry, x: number, y: number): void {
  const { width, height } = withBleed(card.size, BLEED)
  if (Math.abs(front.width / front.height / (width / height) - 1) > 0.01)
    throw new RangeError(`the front artwork is ${front.width} × ${front.height} px, not the shape of a ${card.format} card with its bleed`)
  doc.image(front, x, y, { width, height, ignoreOrientation: true })
}

/** The card's writing on the current page, its trim's top left corner at `at` (the page's origin if absent). */
function writeCard(doc: PDFDoc, letter: LetterToRender, images: DocumentImages, at?: { x: number; y: number }): void {
  if (at) doc.save().translate(at.x, at.y)
  drawCard(pdfHand(doc, letter, images), letter)
  if (at) doc.restore()
}

/**
 * The card as its own print file. Printed with artwork: the front on page 1 and the writing on
 * page 2, both the card with its bleed, TrimBox and BleedBox set. Otherwise (preprinted stock,
 * or no artwork) the writing alone, at the card's size, where it goes on that stock.
 */
export function renderCard(letter: LetterToRender): Promise<Buffer> {
  const card = cardOf(letter)
  const front = frontOf(letter)
  const bleed = front ? BLEED : 0
  const page = withBleed(card.size, bleed)
  const doc = newDocument(page, `Tarjeta ${letter.letterId}`)
  const images = new DocumentImages(doc, [front, signatureImageOf(letter)])
  if (front) {
    markTrim(doc, card.size, bleed)
    drawFront(doc, images.get(front), card, 0, 0)
    addPage(doc, page)
    markTrim(doc, card.size, bleed)
  }
  writeCard(doc, letter, images, front ? { x: bleed, y: bleed } : undefined)
  return toBuffer(doc)
}

/**
 * What a pen cannot draw, for a floor that writes with a plotter: a printer puts it on the stock
 * first. The card's front artwork page (with its bleed and TrimBox), when the design is printed
 * with one; the envelope's logo alone on a page of its format, when it has one. Undefined when
 * there is nothing to print.
 */
export function renderPrintedParts(letter: LetterToRender): { front?: () => Promise<Buffer>; logo?: () => Promise<Buffer> } {
  const parts: { front?: () => Promise<Buffer>; logo?: () => Promise<Buffer> } = {}
  const front = frontOf(letter)
  if (front)
    parts.front = () => {
      const card = cardOf(letter)
      const doc = newDocument(withBleed(card.size, BLEED), `Anverso ${letter.letterId}`)
      markTrim(doc, card.size, BLEED)
      drawFront(doc, new DocumentImages(doc, [front]).get(front), card, 0, 0)
      return toBuffer(doc)
    }
  const logo = logoOf(letter)
  if (logo)
    parts.logo = () => {
      const envelope = envelopeOf(letter)
      const doc = newDocument(envelope.size, `Logo del sobre ${letter.letterId}`)
      const box = senderCorner(letter, envelope).logo
      if (box) doc.image(new DocumentImages(doc, [logo]).get(logo), box.x, box.y, { width: box.width, height: box.height, ignoreOrientation: true })
      return toBuffer(doc)
    }
  return parts
}

/** The envelope as its own print file, at its format. */
export function renderEnvelope(letter: LetterToRender): Promise<Buffer> {
  const doc = newDocument(envelopeOf(letter).size, `Sobre ${letter.letterId}`)
  drawPrintedEnvelope(doc, letter, new DocumentImages(doc, [logoOf(letter)]))
  return toBuffer(doc)
}

/** The one format of a batch's cards or envelopes: a batch holds one stock of each. */
function batchFormat<T extends CardGeometry | EnvelopeGeometry>(letters: LetterToRender[], of: (letter: Pick<LetterToRender, 'design'>) => T, what: string): T {
  // One geometry object per format (geometry.ts keeps them), so a set of them is a set of formats.
  const formats = [...new Set(letters.map((letter) => of(letter)))]
  if (formats.length > 1) throw new RangeError(`a batch holds one ${what} stock, and these letters need ${formats.map((format) => format.format).join(', ')}`)
  return formats[0] ?? of({})
}

/**
 * The floor's sheets of a batch's cards, in order, left to right and top to bottom, with crop
 * marks (see `imposition` for how many to a sheet: four A6 to an A4, as always, four A5 or 5×7
 * to an A3). Cards printed with artwork take two pages a sheet, for duplex printing: the fronts,
 * then their backs (the writing). The backs page assumes the printer flips on the short edge: a
 * landscape sheet turns over about its vertical centre line, so a card at the left of the fronts
 * has its back at the right of the backs page, and the backs page is the fronts' grid mirrored
 * left to right, each card's writing upright. Flipped on the long edge instead, every back would
 * print upside down behind another card's front.
 */
export function renderCardSheets(letters: LetterToRender[]): Promise<Buffer> {
  const card = batchFormat(letters, cardOf, 'card')
  const fronts = letters.map(frontOf)
  const printed = fronts.some(Boolean)
  if (printed && !fronts.every(Boolean)) throw new RangeError("a batch's cards are all printed with their front, or none is")
  const layout = imposition(card.size, printed ? BLEED : 0)
  const perSheet = layout.columns * layout.rows
  const doc = newDocument(layout.sheet, 'Tarjetas del lote', false)
  const images = new DocumentImages(
    doc,
    letters.flatMap((letter, index) => [fronts[index], signatureImageOf(letter)]),
  )
  for (let first = 0; first < letters.length; first += perSheet) {
    const sheet = letters.slice(first, first + perSheet)
    if (printed) {
      addPage(doc, layout.sheet)
      sheet.forEach((_, index) => {
        const { x, y } = slotAt(layout, index)
        drawFront(doc, images.get(fronts[first + index]!), card, x, y)
      })
      drawCutMarks(doc, layout)
    }
    addPage(doc, layout.sheet)
    sheet.forEach((letter, index) => {
      const { x, y } = slotAt(layout, index, printed)
      writeCard(doc, letter, images, { x: x + layout.bleed, y: y + layout.bleed })
    })
    if (printed) drawCutMarks(doc, layout)
    else drawCropMarks(doc, layout, sheet.length)
  }
  return toBuffer(doc)
}

const CROP_MARK = 4 * MM

/**
 * Cards without artwork butt on one another: four A6 fill an A4, two guillotine cuts along its
 * centre lines part them, and no paper is left outside the cards. The crop marks therefore lie on
 * the cut lines themselves, from each card corner outward along the cut: the blade takes them,
 * and they never reach into a card's face (on a sheet with paper around the cards, the outer ones
 * stand in it). Drawn for the slots in use (a last sheet may hold fewer).
 */
function drawCropMarks(doc: PDFDoc, layout: Imposition, cards: number): void {
  const { width, height } = layout.slot
  doc.save().lineWidth(0.25).strokeColor('black')
  for (let slot = 0; slot < cards; slot++) {
    const { x: x0, y: y0 } = slotAt(layout, slot)
    for (const [cx, cy, dx, dy] of [
      [x0, y0, -1, -1],
      [x0 + width, y0, 1, -1],
      [x0, y0 + height, -1, 1],
      [x0 + width, y0 + height, 1, 1],
    ] as const) {
      doc.moveTo(cx, cy).lineTo(cx + dx * CROP_MARK, cy)
      doc.moveTo(cx, cy).lineTo(cx, cy + dy * CROP_MARK)
    }
  }
  doc.stroke().restore()
}

/** How far the marks of a sheet with artwork keep from the cards' bleed. */
const CUT_MARK_GAP = 1 * MM

/**
 * Cards with artwork are parted by two cuts on each side, the gutter between them their two
 * bleeds, so no mark may lie between them: the marks stand in the sheet's edge, one on each cut
 * line's extension at both ends, clear of the bleed. The grid is centred, so the backs page,
 * mirrored, has its cuts in the same places and gets the same marks.
 */
function drawCutMarks(doc: PDFDoc, layout: Imposition): void {
  const { left, top, columns, rows, slot, bleed } = layout
  const right = left + columns * slot.width
  const bottom = top + rows * slot.height
  doc.save().lineWidth(0.25).strokeColor('black')
  for (let column = 0; column < columns; column++)
    for (const x of [left + column * slot.width + bleed, left + (column + 1) * slot.width - bleed]) {
      doc.moveTo(x, top - CUT_MARK_GAP).lineTo(x, top - CUT_MARK_GAP - CROP_MARK)
      doc.moveTo(x, bottom + CUT_MARK_GAP).lineTo(x, bottom + CUT_MARK_GAP + CROP_MARK)
    }
  for (let row = 0; row < rows; row++)
    for (const y of [top + row * slot.height + bleed, top + (row + 1) * slot.height - bleed]) {
      doc.moveTo(left - CUT_MARK_GAP, y).lineTo(left - CUT_MARK_GAP - CROP_MARK, y)
      doc.moveTo(right + CUT_MARK_GAP, y).lineTo(right + CUT_MARK_GAP + CROP_MARK, y)
    }
  doc.stroke().restore()
}

/** The floor's envelopes of a batch: one page each at their format, in order. */
export function renderEnvelopes(letters: LetterToRender[]): Promise<Buffer> {
  const envelope = batchFormat(letters, envelopeOf, 'envelope')
  const doc = newDocument(envelope.size, 'Sobres del lote', false)
  const images = new DocumentImages(doc, letters.map(logoOf))
  for (const letter of letters) {
    addPage(doc, envelope.size)
    drawPrintedEnvelope(doc, letter, images)
  }
  return toBuffer(doc)
}

/**
 * What a printer letter's proof shows beyond its print files, in a kept proof's name: drawn again
 * when it changes. 2: a preprinted card's front, from its design's artwork.
 */
export const PROOF_REVISION = 2

/**
 * The proof a client looks at: the pages the floor prints, drawn exactly as the print files are
 * (same seeds, same sizes), each at the size of the finished card or envelope: the front (for a
 * card with artwork, printed or preprinted) cut to the card's trim as the guillotine will cut it,
 * the card's writing, and the envelope on paper of its colour, so that kraft looks like kraft.
 * The print files never carry the paper's colour (the floor loads the paper), nor a preprinted
 * card's front (its stock has it).
 */
export function renderProof(letter: LetterToRender): Promise<Buffer> {
  const card = cardOf(letter)
  const envelope = envelopeOf(letter)
  const front = proofFrontOf(letter)
  const doc = newDocument(card.size, `Prueba ${letter.letterId}`)
  const images = new DocumentImages(doc, [front, signatureImageOf(letter), logoOf(letter)])
  if (front) {
    drawFront(doc, images.get(front), card, -BLEED, -BLEED)
    addPage(doc, card.size)
  }
  writeCard(doc, letter, images)
  addPage(doc, envelope.size)
  const paper = letter.design?.envelope.paperColor
  if (paper) doc.save().rect(0, 0, envelope.size.width, envelope.size.height).fill(paper).restore()
  drawPrintedEnvelope(doc, letter, images)
  return toBuffer(doc)
}

/** The lines of an address block, as the post expects them. */
export function addressLines(address: {
  name: string
  surname: string
  company: string | null
  address: string
  zip: string
  city: string
  province: string | null
  countryName?: string
}): string[] {
  const place = [address.zip, address.city, address.province && address.province !== address.city ? `(${address.province})` : ''].filter(Boolean).join(' ')
  return [`${address.name} ${address.surname}`.trim(), address.company ?? '', address.address, place, address.countryName ?? ''].filter((line) => line.trim())
}

/** What a letter row holds that the drawing needs. */
export interface LetterRecord {
  letterId: string
  code: string
  fontName: string
  message: string
  /** The sender's name: it signs the card and heads the envelope's sender block. */
  senderName: string
  /** The verified address, or the recipient as sent before verification. */
  recipient: Parameters<typeof addressLines>[0] & { country: string }
  /** The floor's country (FLOOR_COUNTRY): mail that stays in it carries no country line. */
  floorCountry: string
}

/** The one place that decides what goes on the card and the envelope of a letter. */
export function describeLetter(letter: LetterRecord): LetterToRender {
  const domestic = letter.recipient.country === letter.floorCountry
  return {
    letterId: letter.letterId,
    code: letter.code,
    fontName: letter.fontName,
    message: letter.message,
    signature: letter.senderName,
    recipientLines: addressLines(domestic ? { ...letter.recipient, countryName: '' } : letter.recipient),
    senderLines: [letter.senderName],
  }
}
