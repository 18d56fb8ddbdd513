import { MM, type CardGeometry, type EnvelopeGeometry } from '../geometry.js'
import type { Pen } from '../handwriting.js'
import { INK, cardOf, drawCard, drawEnvelope, envelopeCode, envelopeOf, newDocument, toBuffer, type Hand, type LetterToRender } from '../letter.js'
import { clipToBox, flattenPath } from '../paths.js'
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

/** A pen that keeps each glyph's strokes, mapped onto the page (points, y down). */
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
 * The strokes of a letter's card or envelope in the order they were written, fitted into the
 * page's pen area; an envelope's code (bars, then its small print) comes last, drawn with a pen
 * whose line is `penWidth` mm wide.
 */
export function traceLetter(kind: PlotKind, letter: LetterToRender, penWidth: number): PlotStroke[] {
  const font = strokeFont(strokeFontOf[letter.fontName])
  const written: Array<Array<[number, number]>> = []
  const hand: Hand = {
    measure: font.measure,
    pen: () => strokePen(font.ascender, font, written),
    sign(drawing, place) {
      // A pen cannot draw an image: the card is signed with the name, in the hand.
      if (drawing.kind !== 'paths') return false
      const tolerance = FLATNESS / place.scale
      for (const path of drawing.paths)
        for (const line of clipToBox(flattenPath(path, tolerance), drawing.width, drawing.height))
          written.push(line.map(([u, v]) => [place.x + u * place.scale, place.y + v * place.scale]))
      return true
    },
  }
  if (kind === 'card') drawCard(hand, letter)
  else drawEnvelope(hand, letter)
  const page = plotPage(kind, letter)
  const strokes = fitInto(
    page,
    written.map((stroke) => stroke.map(([x, y]): [number, number] => [toUnits(x), toUnits(y)])),
  )
  // The code is placed exactly, never shrunk with the writing: its bars must keep their widths.
  return kind === 'card' ? strokes : [...strokes, ...inArea(page, codeStrokes(letter.code, penWidth, envelopeOf(letter)))]
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
  const top = toUnits(layout.top) + pen / 2
  const bottom = toUnits(layout.top + layout.height) - pen / 2
  const strokes: PlotStroke[] = layout.bars.map((bar) => {
    const left = toUnits(bar.x)
    const width = toUnits(bar.width)
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
  })
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
}

export function plotLetter(kind: PlotKind, letter: LetterToRender, penWidth: number): Plot {
  const page = plotPage(kind, letter)
  return { page, letterId: letter.letterId, strokes: orderStrokes(page, traceLetter(kind, letter, penWidth)), penWidth }
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
      `<g fill="none" stroke="${INK}" stroke-width="${plot.penWidth}" stroke-linecap="round" stroke-linejoin="round">`,
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
  const lines = [`; letters ${page.kind} ${plot.letterId}: ${page.width} x ${page.height} mm, origin bottom left`, 'G21', 'G90', settings.penUp]
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
  return [`q ${INK_RGB} RG ${(plot.penWidth * MM).toFixed(3)} w 1 J 1 j`, ...paths, 'Q'].join('\n')
}

/** The ink as a PDF colour: its three channels from 0 to 1, three decimals each. */
const INK_RGB = [1, 3, 5].map((at) => (parseInt(INK.slice(at, at + 2), 16) / 255).toFixed(3)).join(' ')

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
