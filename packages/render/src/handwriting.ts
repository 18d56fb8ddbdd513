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

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' })

/** Splits texts into characters (graphemes), each text once: fitting tries every word at every size. */
function characterSplitter(): (text: string) => string[] {
  const split = new Map<string, string[]>()
  return (text) => split.get(text) ?? split.set(text, Array.from(graphemes.segment(text), ({ segment }) => segment)).get(text)!
}

/**
 * The width of a text as its characters' own widths added up, each measured once: close to the
 * real width (no kerning), and cheap at any length, where measuring a 1,000-character word whole
 * in a script font with many contextual forms takes tens of milliseconds.
 */
function roughMeasure(doc: Doc, characters: (text: string) => string[]): { characters: (text: string) => string[]; width: (characters: string[]) => number } {
  const widths = new Map<string, number>()
  const widthOf = (character: string) => widths.get(character) ?? widths.set(character, doc.widthOfString(character)).get(character)!
  return {
    characters,
    width: (characters) => characters.reduce((sum, character) => sum + widthOf(character), 0),
  }
}

/**
 * A word wider than the line, cut into pieces that each fit it (between characters, never
 * inside one: an accent stays with its letter). Nothing of it may run off the card.
 */
function breakWord(doc: Doc, word: string, width: number, size: number, rough: ReturnType<typeof roughMeasure>): string[] {
  const characters = rough.characters(word)
  const pieces: string[] = []
  for (let start = 0; start < characters.length; ) {
    // The rough widths say where the line ends; the piece measured whole, kerning and all, has
    // the last word. At least one character per piece, so it always moves on.
    let end = start + 1
    while (end < characters.length && rough.width(characters.slice(start, end + 1)) <= width) end++
    while (end > start + 1 && handWidth(doc, characters.slice(start, end).join(''), size) > width) end--
    pieces.push(characters.slice(start, end).join(''))
    start = end
  }
  return pieces
}

/** Breaks text into lines that fit `width` at the document's current font and `size`. */
function wrap(doc: Doc, text: string, width: number, size: number, characters: (text: string) => string[]): string[] {
  const rough = roughMeasure(doc, characters)
  const lines: string[] = []
  for (const paragraph of text.split('\n')) {
    let line = ''
    for (const word of paragraph.split(/ +/)) {
      // Twice the line by its rough width: too wide whatever its kerning, not worth measuring whole.
      const hopeless = rough.width(rough.characters(word)) > 2 * width
      const candidate = line ? `${line} ${word}` : word
      if (!hopeless && handWidth(doc, candidate, size) <= width) line = candidate
      else {
        // Alone on a line the word may fit; if it did not fit there already (line empty), it never will.
        const pieces = line && !hopeless && handWidth(doc, word, size) <= width ? [word] : breakWord(doc, word, width, size, rough)
        if (line) lines.push(line)
        lines.push(...pieces.slice(0, -1))
        line = pieces.at(-1)!
      }
    }
    lines.push(line)
  }
  return lines
}

/**
 * The largest size, from `maxSize` down, at which `text` fits in `box`: 1,000 characters fit a
 * postcard at a small but legible size. A text with more line breaks than the box has lines even
 * at the smallest size is written as one paragraph instead: its breaks are lost, not its words.
 */
export function fitSize(doc: Doc, text: string, box: Box, maxSize: number, minSize = MIN_FONT_SIZE): { size: number; lines: string[]; lineHeight: number } {
  const lineHeight = lineHeightOf(doc)
  const oneParagraph = text.replace(/\s*\n\s*/g, ' ')
  const characters = characterSplitter()
  for (const candidate of oneParagraph === text ? [text] : [text, oneParagraph]) {
    for (let size = maxSize; size > minSize; size -= 0.5) {
      doc.fontSize(size)
      const lines = wrap(doc, candidate, box.width, size, characters)
      if (lines.length * size * lineHeight <= box.height) return { size, lines, lineHeight }
    }
  }
  doc.fontSize(minSize)
  return { size: minSize, lines: wrap(doc, oneParagraph, box.width, minSize, characters), lineHeight }
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
