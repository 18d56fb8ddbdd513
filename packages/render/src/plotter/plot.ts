import { MM, type CardGeometry, type EnvelopeGeometry } from '../geometry.js'
import type { Pen } from '../handwriting.js'
import { DEFAULT_INK, inkNames, joinedHands, printHands, type InkColor } from '@letters/contracts'
import {
  INK,
  cardOf,
  drawCard,
  drawEnvelope,
  envelopeCode,
  envelopeOf,
  inkRgb,
  letterDrawing,
  newDocument,
  rgbOf,
  toBuffer,
  type Hand,
  type LetterToRender,
  plotterHand,
} from '../letter.js'
import { shapeRandom, varyStrokes } from '../shape.js'
import { clipToBox, flattenPath } from '../paths.js'
import type { Rect } from '../qr.js'
import { strokeFont, strokeFontOf, type StrokeGlyph } from './stroke-font.js'

/**
 * Coordinates on the plotter are whole hundredths of a millimetre (the SVG and G-code write them
 * with two decimals): far below a pen's line, and integers, so that a file is the same bytes
 * whatever the process that drew it.
 */
const UNITS_PER_MM = 100

/** A point on the page, in hundredths of a millimetre from its top left corner, y downwards. */
export type Point = [number, number]
/** One pen-down movement. */
export type PlotStroke = Point[]

export type PlotKind = 'card' | 'envelope'

/** A page and the area the pen stays in: the page less the margins the layout keeps, in millimetres. */
export interface PlotPage {
  kind: PlotKind
  width: number
  height: number
  margin: number
}

const pageOf = (kind: PlotKind, geometry: CardGeometry | EnvelopeGeometry): PlotPage => ({
  kind,
  width: geometry.size.width / MM,
  height: geometry.size.height / MM,
  margin: geometry.margin / MM,
})

/** The pages of a letter without a design: an A6 card and a C6 envelope. */
export const plotPages: Record<PlotKind, PlotPage> = { card: pageOf('card', cardOf({})), envelope: pageOf('envelope', envelopeOf({})) }

const geometryOf = (kind: PlotKind, letter: LetterToRender) => (kind === 'card' ? cardOf(letter) : envelopeOf(letter))

/**
 * A letter's page on the plotter: its design's card or envelope, cut to size. The plotter draws
 * on blank or preprinted stock and never prints: a design's front artwork and its envelope's logo
 * are not in its files (a card printed with artwork has its front printed from a PDF first, by
 * whoever runs the plotter).
 */
export const plotPage = (kind: PlotKind, letter: LetterToRender): PlotPage => pageOf(kind, geometryOf(kind, letter))

/**
 * Which stroke drawing a plotter file or proof was made with: bump with any change that alters
 * the strokes of a letter (this module, stroke-font.ts, the hersheytext package), as
 * DRAWING_REVISION is bumped for the shared layout and hand.
 */
export const PLOTTER_REVISION = 3

/** How the floor's plotter is driven (PLOTTER_* settings). */
export interface PlotterSettings {
  penUp: string
  penDown: string
  /** mm/min with the pen down. */
  drawFeed: number
  /** mm/min with the pen up. */
  travelFeed: number
  /** The width of the pen's line, mm: how far apart the lines that fill a bar are, and how wide the SVG and the proof draw a stroke. */
  penWidth: number
}

/** What lifting the pen and setting it down again takes, per stroke, in seconds: a hobby servo's travel and the firmware's wait for it to settle (the estimate's assumption). */
export const PEN_LIFT_SECONDS = 0.3

/** A pen that keeps each glyph's strokes, mapped onto the page (points, y down), as drawing 4 drew them. */
function strokePen(ascender: number, font: ReturnType<typeof strokeFont>, out: Array<Array<[number, number]>>): Pen<StrokeGlyph> {
  return {
    ascender,
    character: font.character,
    glyph({ strokes }, a, b, e, f) {
      for (const stroke of strokes) out.push(stroke.map(([u, v]) => [a * u + b * v + e, b * u - a * v + f]))
    },
  }
}

/**
 * How far, in ems of the writing, a joined hand carries the pen from one letter's exit to the
 * next letter's entry without lifting it: a cursive join drawn as the hand draws it. Letters
 * whose first stroke starts farther (a capital's flourish) are started afresh.
 */
const JOIN_REACH = 0.6
/** What a joined hand joins: letters, not punctuation or digits. */
const LETTER = /^\p{L}\p{M}*$/u
/** Within a letter, how far a joined hand carries the pen from one stroke's end to the next (an n's return up its stem). */
const INNER_REACH = 0.15

type PagePoint = [number, number]

/**
 * The pen of drawing 5: each glyph's strokes bent into a shape of their own (varyStrokes), and in
 * a joined hand each word written as the hand writes it, the pen carried from letter to letter
 * (JOIN_REACH) and from stroke to stroke of a letter (INNER_REACH); what is left (dots, accents,
 * a t's cross) is drawn on its own, in the order plotOrder finds. Characters in print are the
 * `print` font's, their letters never joined.
 */
function shapedStrokePen(
  ascender: number,
  font: ReturnType<typeof strokeFont>,
  joined: boolean,
  out: PagePoint[][],
  print: ReturnType<typeof strokeFont>,
): Pen<StrokeGlyph> {
  // The word being written: its letters, each its strokes on the page, and the writing's size.
  let letters: PagePoint[][][] = []
  let size = 0
  let advance = 0
  // The last character was no letter: the next starts a word of its own.
  let alone = false
  // The word is in print: its letters are not joined.
  let printing = false
  const endWord = () => {
    out.push(...(joined && !printing ? joinedWord(letters, size) : letters.flat()))
    letters = []
  }
  return {
    ascender,
    joined,
    character(character, inPrint = false) {
      const written = (inPrint ? print : font).character(character)
      // A letter joins the word; anything else (a comma, a full stop, a digit) is written on its
      // own, the pen lifted before and after it.
      const letter = LETTER.test(character)
      if (!written.glyphs || !letter || alone || inPrint !== printing) endWord()
      alone = !letter
      printing = inPrint
      if (written.glyphs) {
        letters.push([])
        advance = written.advance
      }
      return written
    },
    glyph({ strokes, dx }, a, b, e, f, shape, variation) {
      const bent = shape === undefined ? strokes : varyStrokes(strokes, shapeRandom(shape), joined && !printing ? advance - dx : null, variation)
      size = Math.hypot(a, b)
      letters.at(-1)?.push(...bent.map((stroke) => stroke.map(([u, v]): PagePoint => [a * u + b * v + e, b * u - a * v + f])))
    },
    endLine: endWord,
    finish: endWord,
  }
}

const gap = (a: PagePoint, b: PagePoint) => Math.hypot(a[0] - b[0], a[1] - b[1])

/**
 * A word of a joined hand as pen strokes: the pen goes on from where it is to the nearer end of
 * a letter's stroke when that end is within reach, drawing the join; a stroke out of reach starts
 * a new one. Each letter's strokes are taken nearest first.
 */
function joinedWord(letters: PagePoint[][][], size: number): PagePoint[][] {
  const strokes: PagePoint[][] = []
  let chain: PagePoint[] | null = null
  for (const letter of letters) {
    const pool = letter.slice()
    let reach = JOIN_REACH * size
    while (pool.length > 0) {
      let best = -1
      let bestGap = Infinity
      let reversed = false
      if (chain) {
        const end = chain.at(-1)!
        pool.forEach((stroke, index) => {
          if (gap(end, stroke[0]!) < bestGap) [best, bestGap, reversed] = [index, gap(end, stroke[0]!), false]
          if (gap(end, stroke.at(-1)!) < bestGap) [best, bestGap, reversed] = [index, gap(end, stroke.at(-1)!), true]
        })
      }
      if (chain && bestGap <= reach) {
        const [stroke] = pool.splice(best, 1)
        chain.push(...(reversed ? stroke!.slice().reverse() : stroke!))
      } else {
        if (chain) strokes.push(chain)
        chain = pool.shift()!.slice()
      }
      reach = INNER_REACH * size
    }
  }
  if (chain) strokes.push(chain)
  return strokes
}

/**
 * The strokes of a letter's card or envelope in the order they were written, fitted into the
 * page's pen area; a code comes last, placed exactly and filled with a pen whose line is
 * `penWidth` mm wide: a card's QR code, an envelope's Code 128 (bars, then its small print).
 */
export function traceLetter(kind: PlotKind, letter: LetterToRender, penWidth: number): PlotStroke[] {
  const strokeHand = plotterHand(letter)
  const font = strokeFont(strokeFontOf[strokeHand])
  const written: Array<Array<[number, number]>> = []
  const filled: Rect[] = []
  const shaped = letterDrawing(letter) !== 4
  const print = strokeFont(strokeFontOf[printHands[strokeHand]])
  const hand: Hand = {
    measure: font.measure,
    ...(shaped && { print: print.measure }),
    pen: () => (shaped ? shapedStrokePen(font.ascender, font, joinedHands.has(strokeHand), written, print) : strokePen(font.ascender, font, written)),
    sign(drawing, place) {
      // A pen cannot draw an image: the card is signed with the name, in the hand.
      if (drawing.kind !== 'paths') return false
      const tolerance = FLATNESS / place.scale
      for (const path of drawing.paths)
        for (const line of clipToBox(flattenPath(path, tolerance), drawing.width, drawing.height))
          written.push(line.map(([u, v]) => [place.x + u * place.scale, place.y + v * place.scale]))
      return true
    },
    fill(areas) {
      filled.push(...areas)
    },
  }
  if (kind === 'card') drawCard(hand, letter)
  else drawEnvelope(hand, letter)
  const page = plotPage(kind, letter)
  const strokes = fitInto(
    page,
    written.map((stroke) => stroke.map(([x, y]): [number, number] => [toUnits(x), toUnits(y)])),
  )
  // A code is placed exactly, never shrunk with the writing: its bars and modules must keep their widths.
  const pen = penWidth * UNITS_PER_MM
  if (kind === 'card')
    return filled.length === 0
      ? strokes
      : [
          ...strokes,
          ...inArea(
            page,
            filled.map((area) => fillStroke(area, pen)),
          ),
        ]
  return [...strokes, ...inArea(page, codeStrokes(letter.code, penWidth, envelopeOf(letter)))]
}

/** How far a signature's flattened curves may stray from the curves: a tenth of a millimetre, under a pen's line. */
const FLATNESS = 0.1 * MM

/** Points of the layout to hundredths of a millimetre (not yet rounded). */
const toUnits = (points: number) => (points / MM) * UNITS_PER_MM

/** The font of the code's small print: Hershey's plain single-stroke sans, as the PDF's is Helvetica. */
const CODE_FONT = 'hershey_sans_1'

/**
 * The letter's code as the plotter draws it, where the printer puts it (envelopeCode): each bar
 * filled by vertical lines at most a pen's width apart, as one stroke that zig-zags down and up the bar
 * (the pen stays down across the bar's width instead of lifting for every line), its outer lines
 * half a pen inside the bar's edges so that the ink covers the bar and no more; a bar narrower
 * than the pen gets one line down its middle. Under the bars, the code in small print, written
 * plainly (no hand: it is read by people checking a scan), centred as the PDF centres it.
 */
export function codeStrokes(code: string, penWidth: number, envelope?: EnvelopeGeometry): PlotStroke[] {
  const layout = envelopeCode(code, envelope)
  const pen = penWidth * UNITS_PER_MM
  const strokes: PlotStroke[] = layout.bars.map((bar) => fillStroke({ x: bar.x, y: layout.top, width: bar.width, height: layout.height }, pen))
  const font = strokeFont(CODE_FONT)
  const { text } = layout
  const characters = [...code].map((character) => font.character(character))
  const width = characters.reduce((sum, written) => sum + written.advance * text.size, 0) + text.spacing * (characters.length - 1)
  const baseline = text.y + font.ascender * text.size
  let x = text.x + (text.width - width) / 2
  for (const written of characters) {
    for (const glyph of written.glyphs ?? [])
      for (const stroke of glyph.strokes)
        strokes.push(
          rounded(stroke.map(([u, v]): [number, number] => [toUnits(x + (glyph.dx + u) * text.size), toUnits(baseline - (glyph.dy + v) * text.size)])),
        )
    x += written.advance * text.size + text.spacing
  }
  return strokes
}

/**
 * A dark area (points) filled as the pen fills a code's bar: vertical lines at most a pen's width
 * (`pen`, in units) apart, as one stroke zig-zagging down and up, its outer lines half a pen
 * inside the area's edges; an area narrower than the pen gets one line down its middle, and one
 * lower than the pen (a QR code's lone module) a dot at its middle.
 */
function fillStroke(area: Rect, pen: number): PlotStroke {
  const left = toUnits(area.x)
  const width = toUnits(area.width)
  let top = toUnits(area.y) + pen / 2
  let bottom = toUnits(area.y + area.height) - pen / 2
  if (bottom < top) top = bottom = (top + bottom) / 2
  // The fewest lines that leave no gap (the epsilon keeps a bar of whole pen widths from taking one line more).
  const lines = width <= pen ? 1 : Math.ceil((width - pen) / pen - 1e-9) + 1
  const xs = lines === 1 ? [left + width / 2] : Array.from({ length: lines }, (_, index) => left + pen / 2 + (index * (width - pen)) / (lines - 1))
  return rounded(
    xs.flatMap((x, index): Array<[number, number]> => {
      const ends: Array<[number, number]> = [
        [x, top],
        [x, bottom],
      ]
      return index % 2 === 0 ? ends : ends.reverse()
    }),
  )
}

/** Strokes placed by the layout rather than fitted: they must lie in the pen area already, or the layout is wrong. */
function inArea(page: PlotPage, strokes: PlotStroke[]): PlotStroke[] {
  const low = page.margin * UNITS_PER_MM
  const right = (page.width - page.margin) * UNITS_PER_MM
  const bottom = (page.height - page.margin) * UNITS_PER_MM
  for (const [x, y] of strokes.flat())
    if (x < low || x > right || y < low || y > bottom)
      throw new RangeError(`a stroke at ${x / UNITS_PER_MM}, ${y / UNITS_PER_MM} mm leaves the ${page.kind}'s pen area`)
  return strokes
}

/**
 * The strokes rounded to whole units, inside the page less its margins. The layout keeps its
 * boxes inside the margins, but a hand's wobble, a swash or an accent may reach a little past
 * them; then the whole page is shrunk and moved just enough (one transformation for all strokes,
 * so the writing keeps its shape). Most pages are left as they are.
 */
function fitInto(page: PlotPage, strokes: Array<Array<[number, number]>>): PlotStroke[] {
  // One unit inside each edge, so that rounding never crosses it.
  const low = page.margin * UNITS_PER_MM + 1
  const right = (page.width - page.margin) * UNITS_PER_MM - 1
  const bottom = (page.height - page.margin) * UNITS_PER_MM - 1
  const points = strokes.flat()
  let transform = (point: [number, number]) => point
  if (points.length > 0) {
    // A loop, not Math.min(...points): a long letter with a drawn signature has more points than a call takes arguments.
    let [minX, maxX, minY, maxY] = [Infinity, -Infinity, Infinity, -Infinity]
    for (const [x, y] of points) {
      if (x < minX) minX = x
      if (x > maxX) maxX = x
      if (y < minY) minY = y
      if (y > maxY) maxY = y
    }
    if (minX < low || maxX > right || minY < low || maxY > bottom) {
      const scale = Math.min(1, (right - low) / (maxX - minX || 1), (bottom - low) / (maxY - minY || 1))
      const shift = (min: number, max: number, from: number, to: number) => Math.max(from - min, 0) - Math.max(min + (max - min) * scale - to, 0)
      const dx = shift(minX, maxX, low, right)
      const dy = shift(minY, maxY, low, bottom)
      transform = ([x, y]) => [minX + (x - minX) * scale + dx, minY + (y - minY) * scale + dy]
    }
  }
  return strokes.map((stroke) => rounded(stroke.map(transform)))
}

/** A stroke in whole units, without the repeated points rounding leaves. */
function rounded(stroke: Array<[number, number]>): PlotStroke {
  const points: PlotStroke = []
  for (const [x, y] of stroke) {
    const next: Point = [Math.round(x), Math.round(y)]
    const last = points.at(-1)
    if (!last || last[0] !== next[0] || last[1] !== next[1]) points.push(next)
  }
  // A dot: the pen goes down and up on the spot.
  if (points.length === 1) points.push([...points[0]!])
  return points
}

/** Where the plotter's pen rests before and after a page: the page's bottom left corner, the G-code's origin. */
const home = (page: PlotPage): Point => [0, page.height * UNITS_PER_MM]

const distance = (a: Point, b: Point) => Math.hypot(a[0] - b[0], a[1] - b[1])

/**
 * Nearest neighbour: from where the pen is, the stroke whose nearer end is closest, drawn from
 * that end (a stroke may be drawn backwards: a pen line looks the same either way). Ties go to
 * the earlier stroke, so the order is the same on every run.
 */
export function orderStrokes(page: PlotPage, strokes: PlotStroke[]): PlotStroke[] {
  const left = strokes.slice()
  const done = new Array<boolean>(left.length).fill(false)
  const ordered: PlotStroke[] = []
  let at = home(page)
  for (let count = 0; count < left.length; count++) {
    let best = -1
    let bestDistance = Infinity
    let reversed = false
    for (let index = 0; index < left.length; index++) {
      if (done[index]) continue
      const stroke = left[index]!
      const toStart = distance(at, stroke[0]!)
      const toEnd = distance(at, stroke.at(-1)!)
      if (toStart < bestDistance) [best, bestDistance, reversed] = [index, toStart, false]
      if (toEnd < bestDistance) [best, bestDistance, reversed] = [index, toEnd, true]
    }
    done[best] = true
    const stroke = reversed ? left[best]!.slice().reverse() : left[best]!
    ordered.push(stroke)
    at = stroke.at(-1)!
  }
  return ordered
}

/**
 * The plotting order of drawing 5: nearest neighbour (orderStrokes), then improved by 2-opt with
 * stroke reversal (a stretch of the order run backwards, each of its strokes drawn the other
 * way) while that saves time, travel at the travel feed and a pen lift for every move longer
 * than the pen's width; then strokes one pen's width or less apart are joined, the pen staying
 * down. Deterministic: the same strokes give the same order.
 */
export function plotOrder(page: PlotPage, strokes: PlotStroke[], penWidth: number): PlotStroke[] {
  const tour = orderStrokes(page, strokes)
  const pen = penWidth * UNITS_PER_MM
  // Seconds per unit of travel, and a lift's seconds: what a move costs.
  const perUnit = 60 / UNITS_PER_MM / ORDER_TRAVEL_FEED
  const cost = (from: Point, to: Point) => {
    const length = distance(from, to)
    return length * perUnit + (length > pen ? PEN_LIFT_SECONDS : 0)
  }
  const start = home(page)
  const ends = (index: number): [Point, Point] => (index < 0 || index >= tour.length ? [start, start] : [tour[index]![0]!, tour[index]!.at(-1)!])
  for (let pass = 0; pass < TWO_OPT_PASSES; pass++) {
    let improved = false
    for (let i = 0; i < tour.length - 1; i++) {
      const before = ends(i - 1)[1]
      const first = ends(i)[0]
      for (let j = i + 1; j < Math.min(tour.length, i + TWO_OPT_SPAN); j++) {
        const [, last] = ends(j)
        const after = ends(j + 1)[0]
        // Run i..j backwards: before → last … first → after.
        if (cost(before, last) + cost(first, after) < cost(before, first) + cost(last, after) - 1e-9) {
          const reversed = tour
            .slice(i, j + 1)
            .reverse()
            .map((stroke) => stroke.slice().reverse())
          tour.splice(i, j - i + 1, ...reversed)
          improved = true
          break
        }
      }
    }
    if (!improved) break
  }
  const joined: PlotStroke[] = []
  for (const stroke of tour) {
    const previous = joined.at(-1)
    if (previous && distance(previous.at(-1)!, stroke[0]!) <= pen) previous.push(...(distance(previous.at(-1)!, stroke[0]!) === 0 ? stroke.slice(1) : stroke))
    else joined.push(stroke.slice())
  }
  return joined
}

/**
 * The travel feed the order weighs a lift against (PLOTTER_TRAVEL_FEED's default, mm/min): fixed,
 * so that a proof, drawn where the floor's feeds are not known, shows the order the floor plots.
 */
const ORDER_TRAVEL_FEED = 6000

/** 2-opt looks at stretches of at most this many strokes, for at most this many passes: a card's 500 strokes in tens of milliseconds. */
const TWO_OPT_SPAN = 120
const TWO_OPT_PASSES = 8

/** What a page costs the plotter, in millimetres and pen lifts: travel from home and back. */
export interface PlotFigures {
  strokes: number
  drawMm: number
  travelMm: number
}

export function plotFigures(page: PlotPage, strokes: PlotStroke[]): PlotFigures {
  let at = home(page)
  let draw = 0
  let travel = 0
  for (const stroke of strokes) {
    travel += distance(at, stroke[0]!)
    for (let index = 1; index < stroke.length; index++) draw += distance(stroke[index - 1]!, stroke[index]!)
    at = stroke.at(-1)!
  }
  travel += distance(at, home(page))
  return { strokes: strokes.length, drawMm: draw / UNITS_PER_MM, travelMm: travel / UNITS_PER_MM }
}

/** Plotting time: drawing and travel at their feeds, plus a pen lift per stroke (PEN_LIFT_SECONDS). */
export function plotSeconds(figures: PlotFigures, settings: Pick<PlotterSettings, 'drawFeed' | 'travelFeed'>): number {
  return (figures.drawMm / settings.drawFeed) * 60 + (figures.travelMm / settings.travelFeed) * 60 + figures.strokes * PEN_LIFT_SECONDS
}

/** A letter's page as the plotter draws it: its strokes, in plotting order. */
export interface Plot {
  page: PlotPage
  letterId: string
  strokes: PlotStroke[]
  /** The width of the pen's line, mm. */
  penWidth: number
  /** The pen's ink (drawing 5 on); null for a letter of drawing 4, whose files name none and draw in INK. */
  ink: InkColor | null
}

/** The colour a plot's SVG and proof draw its strokes in: its ink, or INK. */
const plotColor = (plot: Plot) => (plot.ink ? inkRgb[plot.ink] : INK)

export function plotLetter(kind: PlotKind, letter: LetterToRender, penWidth: number): Plot {
  const page = plotPage(kind, letter)
  const traced = traceLetter(kind, letter, penWidth)
  const strokes = letterDrawing(letter) === 4 ? orderStrokes(page, traced) : plotOrder(page, traced, penWidth)
  return { page, letterId: letter.letterId, strokes, penWidth, ink: letterDrawing(letter) === 4 ? null : (letter.ink ?? DEFAULT_INK) }
}

const mm = (units: number) => (units / UNITS_PER_MM).toFixed(2)

const titles: Record<PlotKind, string> = { card: 'Tarjeta', envelope: 'Sobre' }

/** The page as SVG: millimetres, the page's size as viewBox, one path per stroke in plotting order. */
export function plotSvg(plot: Plot): Buffer {
  const { page } = plot
  const paths = plot.strokes.map((stroke) => `<path d="M${stroke.map(([x, y]) => `${mm(x)} ${mm(y)}`).join('L')}"/>`)
  return Buffer.from(
    [
      '<?xml version="1.0" encoding="UTF-8"?>',
      `<svg xmlns="http://www.w3.org/2000/svg" width="${page.width}mm" height="${page.height}mm" viewBox="0 0 ${page.width} ${page.height}">`,
      `<title>${titles[page.kind]} ${plot.letterId}</title>`,
      `<g fill="none" stroke="${plotColor(plot)}" stroke-width="${plot.penWidth}" stroke-linecap="round" stroke-linejoin="round">`,
      ...paths,
      '</g>',
      '</svg>',
      '',
    ].join('\n'),
  )
}

/**
 * The page as G-code: millimetres (G21), absolute coordinates (G90), the origin at the page's
 * bottom left corner with Y upwards (as the plotter's bed is), the pen lifted and set down with
 * the floor's commands, travel (G0) at the travel feed, drawing (G1) at the draw feed; it starts
 * and ends with the pen up at home.
 */
export function plotGcode(plot: Plot, settings: PlotterSettings): Buffer {
  const { page } = plot
  const height = page.height * UNITS_PER_MM
  const xy = ([x, y]: Point) => `X${mm(x)} Y${mm(height - y)}`
  const lines = [`; letters ${page.kind} ${plot.letterId}: ${page.width} x ${page.height} mm, origin bottom left`]
  // Drawing 5 on: the pen the floor loads (the letter's ink), and how long the page takes.
  if (plot.ink) {
    lines.push(`; pen: ${plot.ink} (tinta ${inkNames[plot.ink]}), ${plot.penWidth} mm`)
    lines.push(`; estimate: ${Math.round(plotSeconds(plotFigures(page, plot.strokes), settings))} s`)
  }
  lines.push('G21', 'G90', settings.penUp)
  for (const stroke of plot.strokes) {
    lines.push(`G0 ${xy(stroke[0]!)} F${settings.travelFeed}`, settings.penDown, `G1 ${xy(stroke[1]!)} F${settings.drawFeed}`)
    for (const point of stroke.slice(2)) lines.push(`G1 ${xy(point)}`)
    lines.push(settings.penUp)
  }
  lines.push(`G0 X0.00 Y0.00 F${settings.travelFeed}`, 'M2', '')
  return Buffer.from(lines.join('\n'))
}

/** The strokes of a page as PDF path operators (points, pdfkit's y-down page space). */
function strokeContent(plot: Plot): string {
  const pt = (units: number) => ((units / UNITS_PER_MM) * MM).toFixed(2)
  const paths = plot.strokes.map((stroke) => stroke.map(([x, y], index) => `${pt(x)} ${pt(y)} ${index === 0 ? 'm' : 'l'}`).join('\n') + '\nS')
  const color = rgbOf(plotColor(plot))
    .map((part) => part.toFixed(3))
    .join(' ')
  return [`q ${color} RG ${(plot.penWidth * MM).toFixed(3)} w 1 J 1 j`, ...paths, 'Q'].join('\n')
}

/**
 * The proof of a plotter letter: the same strokes the plotter draws, card on page 1 and envelope
 * on page 2, each at its format, as PDF paths as wide as the pen's line. Only what the pen draws:
 * no front artwork, logo or paper colour (see plotPage).
 */
export function renderPlotterProof(letter: LetterToRender, penWidth: number): Promise<Buffer> {
  const doc = newDocument(cardOf(letter).size, `Prueba ${letter.letterId}`)
  doc.addContent(strokeContent(plotLetter('card', letter, penWidth)))
  const envelope = envelopeOf(letter).size
  doc.addPage({ size: [envelope.width, envelope.height], margin: 0 })
  doc.addContent(strokeContent(plotLetter('envelope', letter, penWidth)))
  return toBuffer(doc)
}

/** A letter's four plotter files: card and envelope, each as SVG and G-code. */
export function plotterFiles(letter: LetterToRender, settings: PlotterSettings): Record<'card.svg' | 'card.gcode' | 'envelope.svg' | 'envelope.gcode', Buffer> {
  const card = plotLetter('card', letter, settings.penWidth)
  const envelope = plotLetter('envelope', letter, settings.penWidth)
  return {
    'card.svg': plotSvg(card),
    'card.gcode': plotGcode(card, settings),
    'envelope.svg': plotSvg(envelope),
    'envelope.gcode': plotGcode(envelope, settings),
  }
}
