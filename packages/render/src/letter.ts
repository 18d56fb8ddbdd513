import { constants, type ZlibOptions } from 'node:zlib'
import PDFDocument from 'pdfkit'
import type { FontName } from '@letters/contracts'
import { barsWidth, code128Bars, code128Layout, type Bar } from './barcode.js'
import { handFont } from './fonts.js'
import { fitSize, handWidth, pdfMeasure, pdfPen, writeByHand, type Box, type Measure, type Pen } from './handwriting.js'
import { seededRandom } from './random.js'

/** Points per millimetre: the layout is in points, as the PDF is. */
export const MM = 72 / 25.4
/** A6 landscape: the card. */
export const CARD = { width: 148 * MM, height: 105 * MM }
/** C6: the envelope an A6 card goes in. */
export const ENVELOPE = { width: 162 * MM, height: 114 * MM }
/** A4 landscape: four A6 cards, two by two, for the floor's batches. */
const SHEET = { width: 297 * MM, height: 210 * MM }

export interface LetterToRender {
  /** Seeds the hand: the same id always gives the same strokes. */
  letterId: string
  /** The letter's short code (letters.code): barcoded and printed small on the envelope. */
  code: string
  fontName: FontName
  message: string
  /** The line the card is signed with. */
  signature: string
  /** The recipient block, line by line, as it goes on the envelope. */
  recipientLines: string[]
  /** The sender block, line by line. */
  senderLines: string[]
}

/**
 * Which drawing a file was made with. A letter's proof is kept once its content is final; bump
 * this with any change that alters the files drawn for a letter (the drawing here or in
 * handwriting.ts, pdfkit, a font package), so that kept proofs are drawn again as the floor now
 * prints them.
 */
export const DRAWING_REVISION = 3

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

export function newDocument(size: { width: number; height: number }, title: string, firstPage = true) {
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

export const CARD_MARGIN = 12 * MM
export const ENVELOPE_MARGIN = 10 * MM
/** Where the message goes: the card less its margins and the signature's strip. */
export const MESSAGE_BOX: Box = { x: CARD_MARGIN, y: CARD_MARGIN, width: CARD.width - 2 * CARD_MARGIN, height: CARD.height - 2 * CARD_MARGIN - 14 * MM }

/** The strip under the message where the card is signed. */
const SIGNATURE_BOX: Box = {
  x: CARD_MARGIN,
  y: MESSAGE_BOX.y + MESSAGE_BOX.height,
  width: MESSAGE_BOX.width,
  height: CARD.height - CARD_MARGIN - (MESSAGE_BOX.y + MESSAGE_BOX.height),
}

/**
 * A hand: how its font measures text (the layout) and the pen it writes with. The layout of a
 * card and an envelope is one, whatever writes it: a PDF font (the printers) or strokes (the plotter).
 */
export interface Hand {
  measure: Measure
  /** A fresh pen for one block of lines. */
  pen(): Pen
}

/**
 * The hand of a PDF document: its current font, registered under the font's own name: pdfkit
 * caches a font by the name it was registered with, and a batch's file mixes fonts.
 */
function pdfHand(doc: PDFDoc, fontName: FontName): Hand {
  const name = `hand-${fontName}`
  doc.registerFont(name, handFont(fontName))
  doc.font(name)
  return { measure: pdfMeasure(doc), pen: () => pdfPen(doc) }
}

/** The size and lines the message is written at: the largest that fits MESSAGE_BOX. */
export function cardLayout(letter: Pick<LetterToRender, 'fontName' | 'message'>): { size: number; lines: string[]; lineHeight: number } {
  return messageLayout(pdfHand(newDocument(CARD, 'layout'), letter.fontName).measure, letter.message)
}

export const messageLayout = (measure: Measure, message: string) => fitSize(measure, message, MESSAGE_BOX, 20)

/** The card: the message, shrunk to fit, then the signature line at the bottom right. */
export function drawCard(hand: Hand, letter: LetterToRender): void {
  const random = seededRandom(`${letter.letterId}:card`)
  const { size, lines, lineHeight } = messageLayout(hand.measure, letter.message)
  const margin = CARD_MARGIN
  writeByHand(hand.pen(), lines, MESSAGE_BOX, size, lineHeight, random)

  // Right-aligned at the bottom; a sender name too long for one line shrinks, then wraps upwards.
  const signature = fitSize(hand.measure, letter.signature, SIGNATURE_BOX, Math.min(20, Math.max(size, 12)))
  const lastLineY = CARD.height - margin - signature.size * 1.2
  signature.lines.forEach((line, index) => {
    const x = Math.max(margin, CARD.width - margin - handWidth(hand.measure, line, signature.size))
    const y = lastLineY - (signature.lines.length - 1 - index) * signature.size * lineHeight
    writeByHand(hand.pen(), [line], { x, y }, signature.size, lineHeight, random)
  })
}

/** The envelope: the sender block at the top left, the recipient block in the lower right half. */
export function drawEnvelope(hand: Hand, letter: LetterToRender): void {
  const random = seededRandom(`${letter.letterId}:envelope`)
  const margin = ENVELOPE_MARGIN
  const sender = fitSize(hand.measure, letter.senderLines.join('\n'), { x: margin, y: margin, width: ENVELOPE.width / 2 - margin, height: 30 * MM }, 11)
  writeByHand(hand.pen(), sender.lines, { x: margin, y: margin }, sender.size, sender.lineHeight, random)
  const recipient = fitSize(hand.measure, letter.recipientLines.join('\n'), RECIPIENT_BOX, 17)
  writeByHand(hand.pen(), recipient.lines, RECIPIENT_BOX, recipient.size, recipient.lineHeight, random)
}

/** The recipient's block on the envelope: the lower right half. */
const RECIPIENT_BOX: Box = {
  x: ENVELOPE.width * 0.42,
  y: ENVELOPE.height * 0.48,
  width: ENVELOPE.width * 0.58 - ENVELOPE_MARGIN,
  height: ENVELOPE.height * 0.52 - ENVELOPE_MARGIN,
}

/** A printed envelope: the hand's drawing, and the letter's code as bars with the code in small print. */
function drawPrintedEnvelope(doc: PDFDoc, letter: LetterToRender): void {
  drawEnvelope(pdfHand(doc, letter.fontName), letter)
  const code = envelopeCode(letter.code)
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
 * plotter hatches them: one place decides them.
 */
export function envelopeCode(code: string): EnvelopeCode {
  const x = ENVELOPE_MARGIN
  const bottom = ENVELOPE.height - ENVELOPE_MARGIN
  const right = RECIPIENT_BOX.x - 5 * MM
  const bars = code128Layout(code, x, CODE_MODULE)
  const width = barsWidth(code128Bars(code)) * CODE_MODULE
  if (x + width > right) throw new RangeError(`the code ${code} is too long for the envelope`)
  const top = bottom - BAR_HEIGHT - CODE_TEXT_SIZE * 1.2
  return { bars, top, height: BAR_HEIGHT, text: { x, y: top + BAR_HEIGHT + 1, width, size: CODE_TEXT_SIZE, spacing: 1 } }
}

/** The card as its own print file. */
export function renderCard(letter: LetterToRender): Promise<Buffer> {
  const doc = newDocument(CARD, `Tarjeta ${letter.letterId}`)
  drawCard(pdfHand(doc, letter.fontName), letter)
  return toBuffer(doc)
}

/** The envelope as its own print file. */
export function renderEnvelope(letter: LetterToRender): Promise<Buffer> {
  const doc = newDocument(ENVELOPE, `Sobre ${letter.letterId}`)
  drawPrintedEnvelope(doc, letter)
  return toBuffer(doc)
}

/** One page of cards for the floor: four to an A4 sheet, in order, left to right and top to bottom, with crop marks. */
export function renderCardSheets(letters: LetterToRender[]): Promise<Buffer> {
  const doc = newDocument(SHEET, 'Tarjetas del lote', false)
  letters.forEach((letter, index) => {
    const slot = index % 4
    if (slot === 0) doc.addPage({ size: [SHEET.width, SHEET.height], margin: 0 })
    const x = (SHEET.width - 2 * CARD.width) / 2 + (slot % 2) * CARD.width
    const y = (SHEET.height - 2 * CARD.height) / 2 + Math.floor(slot / 2) * CARD.height
    doc.save().translate(x, y)
    drawCard(pdfHand(doc, letter.fontName), letter)
    doc.restore()
    if (slot === 3 || index === letters.length - 1) drawCropMarks(doc, slot + 1)
  })
  return toBuffer(doc)
}

const CROP_MARK = 4 * MM

/**
 * A6 is a quarter of A4: the four cards fill the sheet, two guillotine cuts along its centre
 * lines part them, and no paper is left outside the cards. The crop marks therefore lie on the
 * cut lines themselves, from each card corner outward along the cut: the blade takes them, and
 * they never reach into a card's face. Drawn for the slots in use (a last sheet may hold fewer).
 */
function drawCropMarks(doc: PDFDoc, cards: number): void {
  const left = (SHEET.width - 2 * CARD.width) / 2
  const top = (SHEET.height - 2 * CARD.height) / 2
  doc.save().lineWidth(0.25).strokeColor('black')
  for (let slot = 0; slot < cards; slot++) {
    const x0 = left + (slot % 2) * CARD.width
    const y0 = top + Math.floor(slot / 2) * CARD.height
    for (const [cx, cy, dx, dy] of [
      [x0, y0, -1, -1],
      [x0 + CARD.width, y0, 1, -1],
      [x0, y0 + CARD.height, -1, 1],
      [x0 + CARD.width, y0 + CARD.height, 1, 1],
    ] as const) {
      doc.moveTo(cx, cy).lineTo(cx + dx * CROP_MARK, cy)
      doc.moveTo(cx, cy).lineTo(cx, cy + dy * CROP_MARK)
    }
  }
  doc.stroke().restore()
}

/** The floor's envelopes of a batch: one C6 page each, in order. */
export function renderEnvelopes(letters: LetterToRender[]): Promise<Buffer> {
  const doc = newDocument(ENVELOPE, 'Sobres del lote', false)
  for (const letter of letters) {
    doc.addPage({ size: [ENVELOPE.width, ENVELOPE.height], margin: 0 })
    drawPrintedEnvelope(doc, letter)
  }
  return toBuffer(doc)
}

/**
 * The proof a client looks at: the card on page 1 and the envelope on page 2, drawn exactly as
 * the print files are (same seeds, same sizes).
 */
export function renderProof(letter: LetterToRender): Promise<Buffer> {
  const doc = newDocument(CARD, `Prueba ${letter.letterId}`)
  drawCard(pdfHand(doc, letter.fontName), letter)
  doc.addPage({ size: [ENVELOPE.width, ENVELOPE.height], margin: 0 })
  drawPrintedEnvelope(doc, letter)
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
  fontName: FontName
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
