import type PDFDocument from 'pdfkit'
import type * as Fontkit from 'fontkit'
import { constants, type ZlibOptions } from 'node:zlib'
import type { Drawing } from '@letters/contracts'
import { AsciiWriter, type PageStream } from './ascii.js'
import { FlateWriter } from './flate-writer.js'
import { wobble } from './random.js'
import { TEXT_LAYER_FONT, textLayerCodes, textLayerFont } from './text-layer.js'
import { outlineOf, simplifiedPath, varyOutline, type Outline, type OutlineStyle } from './shape.js'

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

/** A glyph's place as pdfkit lays it out, in thousandths of the font size. */
interface GlyphPosition {
  xAdvance: number
  xOffset: number
  yOffset: number
}

/**
 * The parts of pdfkit's font of a document (its EmbeddedFont, not in @types/pdfkit) that writing
 * glyphs ourselves needs: its resource name, the parsed font, and `encode`, which adds the glyphs
 * of a text to the document's font subset and gives their codes in it.
 */
interface PdfFont {
  id: string
  font: Fontkit.Font
  /** The ascender, in thousandths of the font size. */
  ascender: number
  encode(text: string): [string[], GlyphPosition[]]
  /** The font's glyphs for a text and their places, as `encode` lays them out (pdfkit keeps each layout). */
  layout(text: string): { glyphs: Fontkit.Glyph[]; positions: GlyphPosition[] }
  /** Per glyph code in the subset, the characters a reader gets from it (the ToUnicode map). */
  unicode: number[][]
  widthOfString(text: string, size: number): number
  ref(): unknown
}

interface DocInternals {
  _font: PdfFont
  page: { fonts: Record<string, unknown>; xobjects: Record<string, unknown>; content: { deflateOptions?: ZlibOptions } }
}

const internals = (doc: Doc) => doc as unknown as DocInternals

/**
 * The advance of each character (code point) of a font, in ems, kept with the parsed font: the
 * hand writes every character on its own, so a text is as wide as its characters added up (no
 * kerning or contextual forms between them), at any size.
 */
const advances = new WeakMap<Fontkit.Font, Map<string, number>>()

/**
 * How a hand's font measures text, in ems (multiply by the size): all the layout needs, whether
 * the hand writes a PDF font's glyphs or a plotter's strokes.
 */
export interface Measure {
  /** The width of a run of characters without spaces. */
  width(text: string): number
  /** The gap a hand leaves between words: the font's space, at least `hand.wordSpace` (wordGap). */
  space: number
  /** Line spacing as a multiple of the font size. */
  lineHeight: number
}

/** The gap a hand leaves between words, given its font's space: connected script fonts reach into their space with their exit strokes, a hand leaves more. */
export const wordGap = (fontSpace: number) => Math.max(fontSpace, hand.wordSpace)

/** The line spacing a hand keeps for a font's height (ascender to descender plus gap, in ems): capped, as a hand lets tall loops touch the line above rather than waste the card. */
export const lineSpacing = (fontHeight: number) => Math.min(1.7, Math.max(1.1, fontHeight))

/** How the document's current font measures text. */
export function pdfMeasure(doc: Doc): Measure {
  const lineHeight = lineHeightOf(doc)
  return { ...measureOf(internals(doc)._font), lineHeight }
}

function measureOf(pdfFont: PdfFont): Omit<Measure, 'lineHeight'> {
  let known = advances.get(pdfFont.font)
  if (!known) advances.set(pdfFont.font, (known = new Map()))
  const advance = (character: string) => {
    let width = known.get(character)
    if (width === undefined) known.set(character, (width = pdfFont.widthOfString(character, 1)))
    return width
  }
  return {
    width(text) {
      let width = 0
      for (const character of text) width += advance(character)
      return width
    },
    space: wordGap(advance(' ')),
  }
}

/** Line spacing as a multiple of the font size, from the font's own metrics (ascender, descender, gap). */
function lineHeightOf(doc: Doc): number {
  doc.fontSize(10)
  return lineSpacing(doc.currentLineHeight(true) / 10)
}

/** The smallest size a message is shrunk to. */
export const MIN_FONT_SIZE = 6

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' })

/**
 * A word wider than the line (`width` ems), cut into pieces that each fit it (between
 * characters, never inside one: an accent stays with its letter). Nothing of it may run off the card.
 */
function breakWord(word: string, width: number, measure: Omit<Measure, 'lineHeight'>): string[] {
  const pieces: string[] = []
  let piece = ''
  let pieceWidth = 0
  for (const { segment } of graphemes.segment(word)) {
    const segmentWidth = measure.width(segment)
    // At least one character per piece, so it always moves on.
    if (piece && pieceWidth + segmentWidth > width) {
      pieces.push(piece)
      piece = ''
      pieceWidth = 0
    }
    piece += segment
    pieceWidth += segmentWidth
  }
  pieces.push(piece)
  return pieces
}

/** A text's paragraphs as words, each with its width in ems. */
type Paragraphs = Array<Array<{ word: string; width: number }>>

/**
 * How a block breaks into lines. `prose`: between any two words. `address`: never before a word
 * of one letter or digit (a door `4º E`, a staircase `Esc. B`, a house number), which the post
 * and the postman read as part of the word before it: the two go to the next line together.
 * Messages stay prose: in Spanish a one-letter word (y, a, o) rather leads its line.
 */
export type Wrapping = 'prose' | 'address'

const ONE_CHARACTER_WORD = /^[\p{L}\p{N}][.,;:]?$/u

function paragraphsOf(paragraphs: string[], measure: Measure, wrapping: Wrapping): Paragraphs {
  const widths = new Map<string, number>()
  return paragraphs.map((paragraph) => {
    const words: Paragraphs[number] = []
    for (const word of paragraph.split(/ +/)) {
      let width = widths.get(word)
      if (width === undefined) widths.set(word, (width = measure.width(word)))
      const previous = words.at(-1)
      // Joined by a space the hand writes as it writes any (measure.space), so the pair measures as written.
      if (wrapping === 'address' && previous?.word && ONE_CHARACTER_WORD.test(word))
        words[words.length - 1] = { word: `${previous.word} ${word}`, width: previous.width + measure.space + width }
      else words.push({ word, width })
    }
    return words
  })
}

/**
 * Breaks paragraphs into lines that fit `width` ems. Widths are in ems, so one measurement of
 * each word serves every size tried.
 */
function wrap(paragraphs: Paragraphs, width: number, measure: Measure): string[] {
  const lines: string[] = []
  for (const words of paragraphs) {
    let line = ''
    let lineWidth = 0
    for (const { word, width: wordWidth } of words) {
      const candidateWidth = line ? lineWidth + measure.space + wordWidth : wordWidth
      if (candidateWidth <= width) {
        line = line ? `${line} ${word}` : word
        lineWidth = candidateWidth
      } else {
        // Alone on a line the word may fit; if it did not fit there already (line empty), it never will.
        const pieces = line && wordWidth <= width ? [word] : breakWord(word, width, measure)
        if (line) lines.push(line)
        lines.push(...pieces.slice(0, -1))
        line = pieces.at(-1)!
        lineWidth = measure.width(line)
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
 * With `print`, the text's last `paragraphs` are written in print and measured by its measure;
 * `printFrom` is the first of their lines (lines.length when none is: the one paragraph of a
 * text too long for its breaks is the hand's).
 */
export function fitSize(
  measure: Measure,
  text: string,
  box: Box,
  maxSize: number,
  minSize = MIN_FONT_SIZE,
  wrapping: Wrapping = 'prose',
  print?: { measure: Measure; paragraphs: number },
): { size: number; lines: string[]; lineHeight: number; printFrom: number } {
  const { lineHeight } = measure
  const oneParagraph = text.replace(/\s*\n\s*/g, ' ')
  const printMeasure = print && spacedOut(print.measure)
  for (const candidate of oneParagraph === text ? [text] : [text, oneParagraph]) {
    const all = candidate.split('\n')
    const cut = all.length - (print && candidate === text ? print.paragraphs : 0)
    const paragraphs = paragraphsOf(all.slice(0, cut), measure, wrapping)
    const printed = printMeasure && cut < all.length ? paragraphsOf(all.slice(cut), printMeasure, wrapping) : []
    for (let size = maxSize; size > minSize; size -= 0.5) {
      // Too many paragraphs for the box at this size whatever their widths.
      if ((paragraphs.length + printed.length) * size * lineHeight > box.height) continue
      const lines = wrap(paragraphs, box.width / size, measure)
      const printFrom = lines.length
      if (printMeasure && printed.length > 0) lines.push(...wrap(printed, box.width / size, printMeasure))
      if (lines.length * size * lineHeight <= box.height) return { size, lines, lineHeight, printFrom }
    }
  }
  const lines = wrap(paragraphsOf(oneParagraph.split('\n'), measure, wrapping), box.width / minSize, measure)
  return { size: minSize, lines, lineHeight, printFrom: lines.length }
}

/** How wide a line is written by hand at `size`, less the hand's random spacing. */
export function handWidth(measure: Measure, line: string, size: number): number {
  const words = line.split(' ')
  return size * (words.reduce((sum, word) => sum + measure.width(word), 0) + (words.length - 1) * measure.space)
}

/** One glyph of a character, offset from the character's origin, in ems. */
export interface PlacedGlyph {
  dx: number
  dy: number
}

/** How a character is written: its advance, and its glyphs (none for white space) with their offsets, in ems. */
export interface Written<G extends PlacedGlyph = PlacedGlyph> {
  advance: number
  glyphs: G[] | null
}

/**
 * What puts a hand's glyphs on a page: a PDF font's glyphs (pdfPen) or a plotter's strokes
 * (plotter/stroke-pen.ts). writeByHand decides where each glyph goes and how it is varied; the
 * pen only draws it there.
 */
export interface Pen<G extends PlacedGlyph = PlacedGlyph> {
  /** The font's ascender, in ems: a line is placed by its top. */
  ascender: number
  /** A cursive hand's letters join at their sides: the layout keeps each next to the last, on one baseline. */
  joined?: boolean
  /**
   * How the character is written: in the hand, or with `print` in the hand's print (a pen
   * without one writes it in the hand). Its glyphs are the ones glyph() draws next.
   */
  character(character: string, print?: boolean): Written<G>
  /**
   * Draws a glyph whose em space (y up, origin on the baseline) maps to the page (points, y
   * down) by the matrix (a b b -a e f): size, slant and place in one. `shape` seeds this
   * instance's own shape (shape.ts); without it the glyph is drawn as its font has it, as every
   * glyph of a letter of the drawing before shapes was. `variation` is the share of a shape's
   * full change it is given (less in a line in print: PRINTED).
   */
  glyph(glyph: G, a: number, b: number, e: number, f: number, shape?: number, variation?: number): void
  startLine?(): void
  endLine?(): void
  /** All lines are written. */
  finish?(): void
}

/**
 * The glyphs are placed in hundredths of a point (a third of a micrometre on paper, far below
 * any printer's dot), so that every number in the page's stream is an integer: short, and cheap
 * to write, where a fraction's shortest decimal string costs far more (a card has some 3,600).
 */
const UNITS_PER_POINT = 100
const units = (points: number) => Math.round(points * UNITS_PER_POINT)

/** How a hand's writing flows along a line, in the drawing with shapes: amplitudes in ems unless said. */
const flow = {
  /** The baseline rises and falls along a line as two waves: their heights, and their lengths (from, to). */
  drift: [
    { height: 0.035, length: [6, 14] },
    { height: 0.015, length: [2, 4] },
  ],
  /** A glyph's own step off the drifting baseline: none in a joined hand, whose letters meet. */
  jitter: 0.012,
  /** Each line's start moves from the last's by up to this, pulled back towards the margin by `pull`, within `indent`. */
  indentStep: 0.08,
  pull: 0.6,
  indent: [-0.12, 0.2],
  /** Each word gap wider or narrower than the font's by up to this share, the line's gaps adding up as measured. */
  wordGap: 0.2,
}

/**
 * A line in print is written more steadily than the hand's: its glyphs vary in size, slant,
 * spacing, height and shape by this share of the hand's amounts. At the full amounts a 1 that
 * leans and bends reads as a 7 or an I, an A after a digit as a 4. At 0.3 OCR still misread
 * SW1A as SUIA on 2 UK envelopes of 60 in homemade-apple; at this share it read every one of
 * 220 (60 in homemade-apple, 40 in each other hand; packages/render/test/envelope-ocr.test.ts
 * reads a few). A UK envelope keeps 78–83 % of its glyphs without an affine twin, as at 0.3.
 * The line's baseline drifts under it as under the rest.
 */
const PRINTED = 0.15

/**
 * How much farther apart than its font has them a line in print keeps its characters, in ems:
 * printed capitals stand apart, and OCR reads a W close to a 1 as an M. The gaps between words
 * are the print's own.
 */
const PRINT_SPACING = 0.08

/** How a line in print measures: its font's widths, and PRINT_SPACING after each character. */
const spacedOut = (measure: Measure): Measure => ({ ...measure, width: (text) => measure.width(text) + [...text].length * PRINT_SPACING })

/**
 * Writes lines glyph by glyph as a hand would. Each glyph is a little bigger or smaller, slanted
 * and spaced its own way, and (from drawing 5) has a shape of its own; each line starts a little
 * in or out and slopes slightly. In drawing 5 the baseline drifts smoothly along the line (a
 * glyph never jumps off it mid-word), a line's start drifts from the last's, and word gaps vary.
 * The same random sequence gives the same layout whatever the pen: a pen's shapes draw from
 * their own generators, seeded from it.
 */
export function writeByHand<G extends PlacedGlyph>(
  pen: Pen<G>,
  lines: string[],
  origin: { x: number; y: number },
  size: number,
  lineHeight: number,
  random: () => number,
  drawing: Drawing,
  printFrom = lines.length,
): void {
  if (drawing === 4) writeAsDrawing4(pen, lines, origin, size, lineHeight, random)
  else writeFlowing(pen, lines, origin, size, lineHeight, random, printFrom)
}

/**
 * Places a character's glyphs with their top left corner at (x, y), as a line of text is placed,
 * slanted about their bottom left corner. The page's space runs downwards (pdfkit turns it upside
 * down), hence the matrix's negative d: glyphs stand upright.
 */
function place<G extends PlacedGlyph>(
  pen: Pen<G>,
  glyphs: G[],
  x: number,
  y: number,
  glyphSize: number,
  angle: number,
  shape?: number,
  variation?: number,
): void {
  const a = glyphSize * Math.cos(angle)
  const b = glyphSize * Math.sin(angle)
  const drop = pen.ascender - 1
  const e = x - b * drop
  const f = y + glyphSize + a * drop
  // Mostly one glyph; a character the font composes of several (a letter and its accent)
  // places each by its offset, each with a shape of its own.
  for (let index = 0; index < glyphs.length; index++) {
    const glyph = glyphs[index]!
    pen.glyph(glyph, a, b, e + a * glyph.dx + b * glyph.dy, f + b * glyph.dx - a * glyph.dy, shape === undefined ? undefined : (shape + index) >>> 0, variation)
  }
}

function writeFlowing<G extends PlacedGlyph>(
  pen: Pen<G>,
  lines: string[],
  origin: { x: number; y: number },
  size: number,
  lineHeight: number,
  random: () => number,
  printFrom: number,
): void {
  let indent = 0
  lines.forEach((line, index) => {
    const slope = Math.tan((wobble(random) * hand.lineSlopeDegrees * Math.PI) / 180)
    indent = Math.min(flow.indent[1]!, Math.max(flow.indent[0]!, indent * flow.pull + wobble(random) * flow.indentStep))
    let x = origin.x + indent * size
    const lineY = origin.y + index * size * lineHeight
    const waves = flow.drift.map(({ height, length: [shortest, longest] }) => ({
      height: height * size * (0.5 + random() / 2),
      frequency: (2 * Math.PI) / ((shortest! + random() * (longest! - shortest!)) * size),
      phase: random() * 2 * Math.PI,
    }))
    const gaps = Array.from(line.matchAll(/ /g), () => wobble(random) * flow.wordGap)
    const meanGap = gaps.reduce((sum, gap) => sum + gap, 0) / (gaps.length || 1)
    let gap = 0
    // A joined hand's word keeps one size and one slant, its letters side by side, and one
    // baseline: a letter sized, slanted or raised on its own would move its entry off the exit
    // before it. The word keeps the baseline where it begins, as a pen keeps to its line until it lifts.
    let word: { size: number; angle: number; y: number } | null = null
    // A line in print is written steadily, its letters apart.
    const printed = index >= printFrom
    const joined = (pen.joined ?? false) && !printed
    const steadiness = printed ? PRINTED : 1
    const spacing = printed ? PRINT_SPACING * size : 0
    pen.startLine?.()
    for (const character of line) {
      const { advance, glyphs } = pen.character(character, printed)
      if (glyphs) {
        const along = x - origin.x
        let drift = 0
        for (const wave of waves) drift += wave.height * Math.sin(wave.frequency * along + wave.phase)
        const own = {
          size: size * (1 + wobble(random) * hand.size * steadiness),
          angle: (wobble(random) * hand.slantDegrees * steadiness * Math.PI) / 180,
          y: lineY + along * slope + drift + (joined ? 0 : wobble(random) * flow.jitter * steadiness * size),
        }
        if (joined) word ??= own
        const { size: glyphSize, angle, y } = joined ? word! : own
        place(pen, glyphs, x, y, glyphSize, angle, (random() * 0x100000000) >>> 0, printed ? PRINTED : undefined)
        if (joined) {
          // The next letter goes where this one's baseline, turned with its slant, ends.
          x += advance * glyphSize * Math.cos(angle)
          word!.y += advance * glyphSize * Math.sin(angle)
        } else x += advance * glyphSize + wobble(random) * hand.spacing * steadiness * size + spacing
      } else {
        word = null
        x += advance * size + (character === ' ' ? 0 : spacing)
        if (character === ' ') x += (gaps[gap++]! - meanGap) * advance * size
      }
    }
    pen.endLine?.()
  })
  pen.finish?.()
}

/** Writing as letters of drawing 4 were written, kept byte for byte: each glyph its font's outline, moved, sized and slanted, a little off the baseline. */
function writeAsDrawing4<G extends PlacedGlyph>(
  pen: Pen<G>,
  lines: string[],
  origin: { x: number; y: number },
  size: number,
  lineHeight: number,
  random: () => number,
): void {
  lines.forEach((line, index) => {
    const slope = Math.tan((wobble(random) * hand.lineSlopeDegrees * Math.PI) / 180)
    let x = origin.x + wobble(random) * hand.lineIndent * size
    const lineY = origin.y + index * size * lineHeight
    pen.startLine?.()
    for (const character of line) {
      const { advance, glyphs } = pen.character(character)
      if (glyphs) {
        const glyphSize = size * (1 + wobble(random) * hand.size)
        // The glyph's top left corner, as a line of text is placed from it.
        const y = lineY + (x - origin.x) * slope + wobble(random) * hand.baseline * size
        place(pen, glyphs, x, y, glyphSize, (wobble(random) * hand.slantDegrees * Math.PI) / 180)
      }
      x += advance * size + wobble(random) * hand.spacing * size
    }
    pen.endLine?.()
  })
  pen.finish?.()
}

/**
 * A pen writing the document's current font into the page's content directly, each glyph placed
 * by its own text matrix (position, size and slant in one) inside one text object per line:
 * drawn through pdfkit's `text`, each glyph cost a saved and restored graphics state, two
 * transformations and a text object.
 *
 * With `ink`, a glyph given a shape is drawn as its own outline (shape.ts), filled in the ink:
 * a path per glyph, in thousandths of an em under the glyph's matrix. The text stays, invisible
 * (render mode 3) where the glyph is, so that a reader still finds the words and copies them.
 * Without `ink` (drawing 4) the glyphs are the font's, in black.
 */
export function pdfPen(doc: Doc, ink?: { drawing: ShapedDrawing; rgb: readonly [number, number, number]; joined: boolean; print?: Doc }): Pen<PdfGlyph> {
  const { _font: pdfFont, page } = internals(doc)
  const content = [`q ${1 / UNITS_PER_POINT} 0 0 ${1 / UNITS_PER_POINT} 0 0 cm`]
  const text = (a: number, b: number, e: number, f: number, code: string) =>
    `${units(a)} ${units(b)} ${units(b)} ${units(-a)} ${units(e)} ${units(f)} Tm <${code}> Tj`
  if (!ink) {
    page.fonts[pdfFont.id] ??= pdfFont.ref()
    return {
      ascender: pdfFont.ascender / 1000,
      character: charactersOf(pdfFont, true),
      startLine: () => content.push(`BT /${pdfFont.id} 1 Tf`),
      glyph: ({ code }, a, b, e, f) => content.push(text(a, b, e, f, code)),
      endLine: () => content.push('ET'),
      finish() {
        content.push('Q')
        doc.addContent(content.join('\n'))
      },
    }
  }
  const drawing = shapedDrawings[ink.drawing]
  const { stream: out, end } = drawing.open(doc)
  out.text(`${content[0]}\n${ink.rgb.map((part) => part.toFixed(3)).join(' ')} rg\n`)
  page.fonts[TEXT_LAYER_FONT] ??= textLayerFont(doc)
  const outlines = outlinesOf(pdfFont.font, ink.joined, ink.joined, drawing)
  const characters = charactersOf(pdfFont, false)
  // The print: another document's font, whose layout alone is read, or the hand's own; its letters never join.
  const printFont = ink.print ? internals(ink.print)._font : pdfFont
  const printOutlines = outlinesOf(printFont.font, false, true, drawing)
  const printCharacters = charactersOf(printFont, false)
  // The outlines of the character being written, the hand's or the print's.
  let glyphOutlines = outlines
  // The invisible text, a word at a time: placed where its first glyph is and stretched (Tz) to
  // end where its last does, for a reader to find, select and copy as the eye sees it.
  let words = ''
  let word: { matrix: string; codes: string; characters: number; start: number; end: number; size: number } | null = null
  let pending: { codes: string; advance: number } | null = null
  let varied = new Float64Array(1024)
  // The glyph's matrix maps outline units to the stream's hundredths of a point.
  const scale = UNITS_PER_POINT / OUTLINE_UNITS
  const endWord = () => {
    if (!word) return
    // Each code of the layer's font is half an em wide.
    const stretch = Math.max(1, Math.round((100 * (word.end - word.start)) / (word.characters * 0.5 * word.size)))
    words += `${stretch} Tz ${word.matrix} Tm <${word.codes}> Tj\n`
    word = null
  }
  return {
    ascender: pdfFont.ascender / 1000,
    joined: ink.joined,
    character(character, print) {
      glyphOutlines = print ? printOutlines : outlines
      const written = (print ? printCharacters : characters)(character)
      const codes = written.glyphs ? textLayerCodes(character) : ''
      if (codes) pending = { codes, advance: written.advance }
      else endWord()
      return written
    },
    glyph({ glyph }, a, b, e, f, shape, variation) {
      // The character's text goes with its first glyph.
      if (pending) {
        word ??= { matrix: `${units(a)} ${units(b)} ${units(b)} ${units(-a)} ${units(e)} ${units(f)}`, codes: '', characters: 0, start: e, end: e, size: a }
        word.codes += pending.codes
        word.characters += pending.codes.length / 4
        word.end = e + pending.advance * a
        pending = null
      }
      const outline = glyphOutlines(glyph)
      if (outline.ops.length === 0) return
      if (outline.points.length > varied.length) varied = new Float64Array(outline.points.length)
      if (shape === undefined) varied.set(outline.points)
      else varyOutline(outline, shape, varied, variation)
      out.shape(a * scale, b * scale, b * scale, -a * scale, units(e), units(f), outline.ops, varied, outline.points.length, OUTLINE_UNITS)
    },
    endLine() {
      endWord()
      out.text(`q BT /${TEXT_LAYER_FONT} 1 Tf 3 Tr\n${words}ET Q\n`)
      words = ''
    },
    finish() {
      out.text('Q\n')
      end()
    },
  }
}

/** The drawings that give each glyph a shape of its own. */
export type ShapedDrawing = Exclude<Drawing, 4>

/** What each such drawing does its own way: its outlines (OutlineStyle) and the stream its writing goes into. */
interface ShapedDrawingStyle extends OutlineStyle {
  /** The drawing's number, which keys its prepared outlines. */
  drawing: ShapedDrawing
  /** A stream for a pen's writing on `doc`'s page, and what puts it on the page once written. */
  open(doc: Doc): { stream: PageStream; end(): void }
}

const shapedDrawings: Record<ShapedDrawing, ShapedDrawingStyle> = {
  5: {
    drawing: 5,
    tolerance: 0.006,
    fineTolerance: 0.006,
    minAnchors: 14,
    bentHandles: false,
    bend: 'cubic',
    open(doc) {
      const stream = new AsciiWriter()
      const end = () => {
        // The outlines' numbers, all different, barely repeat: Huffman coding alone packs them
        // within a few percent of zlib's fastest matching, in half the time.
        internals(doc).page.content.deflateOptions = SHAPED_DEFLATE
        doc.addContent(stream.take())
      }
      return { stream, end }
    },
  },
  6: {
    drawing: 6,
    // A hand whose letters stand apart strays at most 0.08 mm at a card's 14 pt from its font, far
    // less than the bend moves it, in a fifth fewer curves. A script's joins are hairlines that a
    // coarser outline pinches apart, and an envelope's printed lines are read by machines: both
    // keep drawing 5's.
    tolerance: 0.015,
    fineTolerance: 0.006,
    minAnchors: 8,
    bentHandles: true,
    bend: 'quadratic',
    open(doc) {
      const stream = new FlateWriter()
      const end = () => {
        // Compressed as it was written: a form of its own on the page, which pdfkit writes as given.
        const { page } = internals(doc)
        const name = `Hand${Object.keys(page.xobjects).length + 1}`
        const form = doc.ref({
          Type: 'XObject',
          Subtype: 'Form',
          BBox: [-FORM_REACH, -FORM_REACH, FORM_REACH, FORM_REACH],
          Resources: { Font: { [TEXT_LAYER_FONT]: page.fonts[TEXT_LAYER_FONT] } },
          Filter: 'FlateDecode',
        })
        form.end(Buffer.from(stream.take()))
        page.xobjects[name] = form
        doc.addContent(`/${name} Do`)
      }
      return { stream, end }
    },
  },
}

const SHAPED_DEFLATE: ZlibOptions = { level: constants.Z_BEST_SPEED, strategy: constants.Z_HUFFMAN_ONLY }

/** A writing form's bounds, points from the page's origin each way: wider than any page. */
const FORM_REACH = 10_000

/**
 * An outline's points are written in 400ths of an em, under a matrix written to four decimals (a
 * glyph's few hundred units land within a tenth of one): 0.012 mm at a card's 14 pt, a third of a
 * 600 dpi printer's dot; whole numbers of at most three digits keep a card's stream short.
 */
const OUTLINE_UNITS = 400

/** Per font, drawing and hand (joined or not), each glyph's outline by its id, prepared once per process. */
const preparedOutlines = new WeakMap<Fontkit.Font, Map<string, Map<number, Outline>>>()

/** `fine`: with the style's finer tolerance (a script's hand, a printed line). */
function outlinesOf(font: Fontkit.Font, joined: boolean, fine: boolean, style: ShapedDrawingStyle): (glyph: Fontkit.Glyph) => Outline {
  let perStyle = preparedOutlines.get(font)
  if (!perStyle) preparedOutlines.set(font, (perStyle = new Map()))
  const styleKey = `${style.drawing}:${joined}:${fine}`
  let known = perStyle.get(styleKey)
  if (!known) perStyle.set(styleKey, (known = new Map()))
  return (glyph) => {
    const key = glyph.id
    let outline = known.get(key)
    if (!outline) {
      const path = simplifiedPath(glyph.path, (fine ? style.fineTolerance : style.tolerance) * font.unitsPerEm)
      known.set(key, (outline = outlineOf(path, font.unitsPerEm, joined ? glyph.advanceWidth / font.unitsPerEm : null, style)))
    }
    return outline
  }
}

interface PdfGlyph extends PlacedGlyph {
  /** Its code in the document's subset of the font, when the font is embedded (drawing 4); empty otherwise. */
  code: string
  /** The font's glyph, whose outline a shaped glyph is drawn from. */
  glyph: Fontkit.Glyph
}

/**
 * Each character as the document's font writes it, worked out once per document: the glyph
 * codes are those of the document's font subset, which `encode` fills as it goes.
 */
function charactersOf(pdfFont: PdfFont, embedded: boolean): (character: string) => Written<PdfGlyph> {
  const measure = measureOf(pdfFont)
  const known = new Map<string, Written<PdfGlyph>>()
  return (character) => {
    let written = known.get(character)
    if (written) return written
    if (character === ' ') written = { advance: measure.space, glyphs: null }
    else if (!character.trim()) written = { advance: measure.width(character), glyphs: null }
    else {
      const { glyphs: fontGlyphs, positions } = pdfFont.layout(character)
      // Written as the embedded font's glyphs: their codes in the document's subset.
      const codes = embedded ? pdfFont.encode(character)[0] : fontGlyphs.map(() => '')
      if (embedded) {
        // The text a reader copies from a glyph is the character it was written for. pdfkit takes
        // it from the parsed glyph, made the first time the process met it, and shared by every
        // document since: a glyph first read as part of another (the U of a Ú) has no character,
        // and the file would depend on what the process drew before. The first glyph carries the
        // character, any others (a separate accent) nothing.
        const codePoints = Array.from(character, (part) => part.codePointAt(0)!)
        codes.forEach((code, index) => (pdfFont.unicode[parseInt(code, 16)] = index === 0 ? codePoints : []))
      }
      let pen = 0
      const glyphs = codes.map((code, index) => {
        const { xAdvance, xOffset, yOffset } = positions[index]!
        const glyph = { code, glyph: fontGlyphs[index]!, dx: (pen + xOffset) / 1000, dy: yOffset / 1000 }
        pen += xAdvance
        return glyph
      })
      written = { advance: measure.width(character), glyphs }
    }
    known.set(character, written)
    return written
  }
}
