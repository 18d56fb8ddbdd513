import type PDFDocument from 'pdfkit'
import { wobble } from './random.js'

type Doc = InstanceType<typeof PDFDocument>

export interface Box {
  x: number
  y: number
  width: number
  height: number
}

/** How irregular a hand is: amplitudes per glyph and per line. */
const hand = {
  baseline: 0.06, // of the font size
  size: 0.04, // relative
  slantDegrees: 2.5,
  spacing: 0.04, // of the font size
  lineSlopeDegrees: 0.7,
  lineIndent: 0.15, // of the font size
  wordSpace: 0.4, // the least gap between words, of the font size
}

/**
 * The gap a hand leaves between words: the font's space, widened where it is narrower than
 * `hand.wordSpace` (connected script fonts reach into their space with their exit strokes).
 */
function wordSpace(doc: Doc, size: number): number {
  return Math.max(doc.widthOfString(' '), hand.wordSpace * size)
}

/** How wide a line is written by hand at `size` (the document's current size). */
function handWidth(doc: Doc, line: string, size: number): number {
  const spaces = line.split(' ').length - 1
  return doc.widthOfString(line) + spaces * (wordSpace(doc, size) - doc.widthOfString(' '))
}

/**
 * Line spacing as a multiple of the font size, from the font's own metrics (ascender,
 * descender, gap), capped: a hand lets tall loops touch the line above rather than waste the card.
 */
export function lineHeightOf(doc: Doc): number {
  doc.fontSize(10)
  return Math.min(1.7, Math.max(1.1, doc.currentLineHeight(true) / 10))
}

/** The smallest size a message is shrunk to. */
export const MIN_FONT_SIZE = 6

/** Breaks text into lines that fit `width` at the document's current font and `size`. */
function wrap(doc: Doc, text: string, width: number, size: number): string[] {
  const lines: string[] = []
  for (const paragraph of text.split('\n')) {
    let line = ''
    for (const word of paragraph.split(/ +/)) {
      const candidate = line ? `${line} ${word}` : word
      if (handWidth(doc, candidate, size) <= width || !line) line = candidate
      else {
        lines.push(line)
        line = word
      }
    }
    lines.push(line)
  }
  return lines
}

/**
 * The largest size, from `maxSize` down, at which `text` fits in `box`: 1,000 characters fit a
 * postcard at a small but legible size.
 */
export function fitSize(doc: Doc, text: string, box: Box, maxSize: number, minSize = MIN_FONT_SIZE): { size: number; lines: string[]; lineHeight: number } {
  const lineHeight = lineHeightOf(doc)
  for (let size = maxSize; size > minSize; size -= 0.5) {
    doc.fontSize(size)
    const lines = wrap(doc, text, box.width, size)
    if (lines.length * size * lineHeight <= box.height && lines.every((line) => handWidth(doc, line, size) <= box.width)) return { size, lines, lineHeight }
  }
  doc.fontSize(minSize)
  return { size: minSize, lines: wrap(doc, text, box.width, minSize), lineHeight }
}

/**
 * Writes lines glyph by glyph as a hand would: each glyph a little off the baseline, a little
 * bigger or smaller, slanted and spaced its own way; each line starting a little in or out and
 * drifting slightly up or down.
 */
export function writeByHand(doc: Doc, lines: string[], origin: { x: number; y: number }, size: number, lineHeight: number, random: () => number): void {
  lines.forEach((line, index) => {
    const slope = (wobble(random) * hand.lineSlopeDegrees * Math.PI) / 180
    let x = origin.x + wobble(random) * hand.lineIndent * size
    const lineY = origin.y + index * size * lineHeight
    for (const glyph of line) {
      doc.fontSize(size)
      const advance = glyph === ' ' ? wordSpace(doc, size) : doc.widthOfString(glyph)
      if (glyph.trim()) {
        const glyphSize = size * (1 + wobble(random) * hand.size)
        const y = lineY + (x - origin.x) * Math.tan(slope) + wobble(random) * hand.baseline * size
        doc.save()
        doc.rotate(wobble(random) * hand.slantDegrees, { origin: [x, y + glyphSize] })
        doc.fontSize(glyphSize).text(glyph, x, y, { lineBreak: false })
        doc.restore()
      }
      x += advance + wobble(random) * hand.spacing * size
    }
  })
}
