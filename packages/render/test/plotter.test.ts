import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { getDocument, OPS } from 'pdfjs-dist/legacy/build/pdf.mjs'
import { loadConfig } from '@letters/config'
import { fontNames, joinedHands } from '@letters/contracts'
import { twinReport } from '@letters/test/support/glyph-twins'
import { pdfText } from '@letters/test/support/pdf'
import { barWidths } from '@letters/test/support/barcode'
import { cardArea, envelopeArea, plottedBars, readGcode, readSvg, type ReadStroke } from '@letters/test/support/plotter-files'
import {
  CODE_MODULE,
  codeStrokes,
  MESSAGE_BOX,
  MIN_FONT_SIZE,
  addressLines,
  code128Bars,
  envelopeCode,
  messageLayout,
  handFont,
  plotFigures,
  plotLetter,
  plotPages,
  plotSeconds,
  plotterFiles,
  renderPlotterProof,
  strokeFont,
  strokeFontOf,
  traceLetter,
  type LetterToRender,
} from '../src/index.js'
import { cardMessage } from './samples.js'

const settings = loadConfig({}).plotter
const pen = { up: settings.penUp, down: settings.penDown }

/** 1,000 characters of Spanish: every accent, ñ, ü, ç, ¿ and ¡. */
const spanish =
  'Querida Lucía: ¡qué alegría! ¿Cómo está tu niña? Mañana, en el jardín, la cigüeña y el pingüino bailarán. Ça va, Ángel, Élodie, Íñigo, Óscar, Úrsula, Ñoño. '
const thousand = spanish.repeat(8).slice(0, 1000)

const letterOfAnyDrawing: LetterToRender = {
  letterId: '3f0c6a52-8d0e-4c55-9d5e-5b1f0c1f2a10',
  code: 'BTC0VS66R9',
  fontName: 'dancing-script',
  message: thousand,
  signature: 'Ana, de Papelería Luna',
  recipientLines: addressLines({
    name: 'Lucía',
    surname: 'García Muñoz',
    company: null,
    address: 'Calle Mayor 1, 3.º izquierda',
    zip: '28013',
    city: 'Madrid',
    province: 'Madrid',
    countryName: 'España',
  }),
  senderLines: ['Papelería Luna', 'Calle Sierpes 4', '41004 Sevilla'],
}

const letter = letterOfAnyDrawing

const sha = (data: Buffer) => createHash('sha256').update(data).digest('hex')

describe('plotter files', () => {
  it.each(fontNames)('keep every coordinate of a 1,000-character card and its envelope inside the margins, and parse (%s)', (fontName) => {
    const files = plotterFiles({ ...letter, fontName }, settings)
    for (const [kind, area] of [
      ['card', cardArea],
      ['envelope', envelopeArea],
    ] as const) {
      const gcode = readGcode(files[`${kind}.gcode`].toString(), area, pen)
      expect(gcode.outside).toEqual([])
      expect(gcode.penDownAtEnd).toBe(false)
      expect(gcode.feeds.G0).toEqual(new Set([settings.travelFeed]))
      expect(gcode.feeds.G1).toEqual(new Set([settings.drawFeed]))
      const svg = readSvg(files[`${kind}.svg`].toString(), area)
      expect(svg.outside).toEqual([])
      expect(svg.viewBox).toBe(`0 0 ${area.width} ${area.height}`)
      expect(svg.width).toBe(`${area.width}mm`)
      // One path per stroke, each drawn once between a pen-down and a pen-up.
      expect(svg.paths).toBe(gcode.lifts - 1)
    }
  })

  it.each(fontNames)('fits 1,000 characters above the smallest size, every word on the card (%s)', (fontName) => {
    // The plotter's layout is the PDF's: the same boxes and rules, measured with the stroke font.
    const layout = messageLayout(strokeFont(strokeFontOf[fontName]).measure, thousand)
    expect(layout.size).toBeGreaterThan(MIN_FONT_SIZE)
    expect(layout.lines.length * layout.size * layout.lineHeight).toBeLessThanOrEqual(MESSAGE_BOX.height)
    expect(layout.lines.join(' ').replace(/ +/g, ' ')).toBe(thousand.trim())
  })

  it('writes the same bytes every time, in this process and in another', () => {
    const first = plotterFiles(letter, settings)
    const again = plotterFiles({ ...letter, recipientLines: [...letter.recipientLines] }, settings)
    for (const name of Object.keys(first) as Array<keyof typeof first>) expect(again[name].equals(first[name]), name).toBe(true)
    const script = `import { plotterFiles } from './src/index.ts'; import { createHash } from 'node:crypto'; const files = plotterFiles(${JSON.stringify(letter)}, ${JSON.stringify(settings)}); console.log(JSON.stringify(Object.fromEntries(Object.entries(files).map(([name, data]) => [name, createHash('sha256').update(data).digest('hex')]))))`
    const output = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
      encoding: 'utf8',
    })
    expect(JSON.parse(output)).toEqual(Object.fromEntries(Object.entries(first).map(([name, data]) => [name, sha(data)])))
  })

  it('draws two letters with the same text differently (the seeded hand)', () => {
    const other = plotterFiles({ ...letter, letterId: '9a1d2b3c-4e5f-4a6b-8c7d-0e1f2a3b4c5d' }, settings)
    expect(other['card.gcode'].equals(plotterFiles(letter, settings)['card.gcode'])).toBe(false)
  })

  it('writes accented letters with their accents: a composed é has more strokes than e', () => {
    for (const fontName of fontNames) {
      const font = strokeFont(strokeFontOf[fontName])
      for (const [accented, plain] of [
        ['é', 'e'],
        ['Á', 'A'],
        ['ñ', 'n'],
        ['ü', 'u'],
        ['ç', 'c'],
        ['ő', 'o'],
        ['ŵ', 'w'],
        ['Ž', 'Z'],
      ]) {
        const strokes = (character: string) => font.character(character).glyphs!.reduce((sum, glyph) => sum + glyph.strokes.length, 0)
        expect(strokes(accented!), `${fontName} ${accented}`).toBeGreaterThan(strokes(plain!))
      }
      for (const mark of ['¿', '¡']) expect(font.character(mark).glyphs!.length, `${fontName} ${mark}`).toBeGreaterThan(0)
    }
  })

  it('writes every character any handwriting font can write (a letter is accepted by those), never a question mark in its place', () => {
    for (const fontName of fontNames) {
      const font = strokeFont(strokeFontOf[fontName])
      const question = JSON.stringify(font.character('?'))
      const unwritten = handFont(fontName)
        .characterSet.map((codePoint) => String.fromCodePoint(codePoint))
        .filter((character) => character !== '?' && /\P{C}/u.test(character) && !/\p{M}/u.test(character))
        .filter((character) => /\S/u.test(character) && JSON.stringify(font.character(character)) === question)
      expect(unwritten, fontName).toEqual([])
    }
  })

  it.each(fontNames.flatMap((fontName) => (['card', 'envelope'] as const).map((kind) => [kind, fontName] as const)))(
    'orders strokes to cut pen-up travel and joins those that meet, and reports it with the plotting time at the default feeds (%s, %s)',
    (kind, fontName) => {
      const drawn = { ...letter, fontName }
      const naive = plotFigures(plotPages[kind], traceLetter(kind, drawn, settings.penWidth))
      const ordered = plotFigures(plotPages[kind], plotLetter(kind, drawn, settings.penWidth).strokes)
      // Joined strokes: fewer lifts, and the pen draws the few tenths of a millimetre between them.
      expect(ordered.strokes).toBeLessThanOrEqual(naive.strokes)
      expect(ordered.drawMm).toBeGreaterThanOrEqual(naive.drawMm - 1e-6)
      expect(ordered.drawMm).toBeLessThan(naive.drawMm + (naive.strokes - ordered.strokes) * settings.penWidth + 1e-6)
      expect(ordered.travelMm).toBeLessThan(naive.travelMm * 0.8)
      const minutes = (figures: typeof naive) => (plotSeconds(figures, settings) / 60).toFixed(1)
      // The README's figures come from these lines (npx vitest run packages/render/test/plotter.test.ts).
      console.log(
        `| ${kind} | ${fontName} → ${strokeFontOf[fontName]} | ${naive.strokes} → ${ordered.strokes} | ${ordered.drawMm.toFixed(0)} | ${naive.travelMm.toFixed(0)} | ${ordered.travelMm.toFixed(0)} (−${(100 - (100 * ordered.travelMm) / naive.travelMm).toFixed(0)}%) | ${minutes(naive)} | ${minutes(ordered)} |`,
      )
    },
  )
})

describe('renderPlotterProof', () => {
  it('draws the strokes as PDF paths, no text, card on page 1 and envelope on page 2', async () => {
    const proof = await renderPlotterProof(letter, settings.penWidth)
    expect(proof.equals(await renderPlotterProof({ ...letter }, settings.penWidth))).toBe(true)
    const { pages, text } = await pdfText(proof)
    expect(pages).toBe(2)
    expect(text).toBe('')
    const document = await getDocument({ data: new Uint8Array(proof), useSystemFonts: false, isEvalSupported: false }).promise
    for (const [number, kind] of [
      [1, 'card'],
      [2, 'envelope'],
    ] as const) {
      const { fnArray } = await (await document.getPage(number)).getOperatorList()
      const strokes = fnArray.filter((op) => op === OPS.stroke).length
      // One path stroked per stroke of the plotter.
      expect(strokes, kind).toBe(plotLetter(kind, letter, settings.penWidth).strokes.length)
    }
  })
})

describe("the letter's code on a plotter envelope", () => {
  // The code is laid out alike in every drawing; drawing 4 plots each stroke as laid out (no
  // strokes joined), so these count and compare them stroke for stroke.
  const letter: LetterToRender = { ...letterOfAnyDrawing, drawing: 4 }
  const MM = 72 / 25.4
  const module = CODE_MODULE / MM
  const code = envelopeCode(letter.code)
  const barHeight = code.height / MM

  /** The envelope's strokes as its SVG and its G-code give them (the same strokes, in the same order). */
  function envelopeStrokes(drawn: LetterToRender, penWidth: number): { svg: ReadStroke[]; gcode: ReadStroke[]; strokeWidth: number } {
    const files = plotterFiles(drawn, { ...settings, penWidth })
    const svg = readSvg(files['envelope.svg'].toString(), envelopeArea)
    const gcode = readGcode(files['envelope.gcode'].toString(), envelopeArea, pen)
    expect(svg.outside).toEqual([])
    expect(gcode.outside).toEqual([])
    return { svg: svg.strokes, gcode: gcode.strokes, strokeWidth: svg.strokeWidth }
  }

  it.each([0.3, 0.1, 0.25])('draws bars that read back as the code, where the PDF puts them, in the SVG and the G-code alike (pen %s mm)', (penWidth) => {
    const { svg, gcode, strokeWidth } = envelopeStrokes(letter, penWidth)
    expect(strokeWidth).toBe(penWidth)
    for (const strokes of [svg, gcode]) {
      const { bars } = plottedBars(strokes, penWidth, barHeight)
      expect(barWidths(bars, module)).toEqual(code128Bars(letter.code))
      // One stroke per bar: the pen zig-zags across a bar's width and lifts only between bars.
      expect(bars).toHaveLength(code.bars.length)
      // Where the printed envelope has them: the same left edges and height, to a hundredth of a
      // millimetre; each bar as wide as the printer's where the pen is no wider than the bar.
      const sorted = [...bars].sort((a, b) => a.x - b.x)
      sorted.forEach((bar, index) => {
        const printed = code.bars[index]!
        const width = Math.max(printed.width / MM, penWidth)
        expect(bar.x).toBeCloseTo(printed.x / MM + printed.width / MM / 2 - width / 2, 1)
        expect(bar.width).toBeCloseTo(width, 1)
        expect(bar.top).toBeCloseTo(code.top / MM, 1)
        expect(bar.bottom).toBeCloseTo((code.top + code.height) / MM, 1)
      })
    }
  })

  it('hatches a wide bar with lines no further apart than the pen, and keeps the ink inside the bar', () => {
    for (const penWidth of [0.1, 0.3]) {
      const { bars } = plottedBars(envelopeStrokes(letter, penWidth).svg, penWidth, barHeight)
      const { svg } = envelopeStrokes(letter, penWidth)
      const hatched = svg.filter((stroke) => plottedBars([stroke], penWidth, barHeight).bars.length === 1)
      for (const stroke of hatched) {
        const xs = [...new Set(stroke.map(([x]) => x))].sort((a, b) => a - b)
        xs.slice(1).forEach((x, index) => expect(x - xs[index]!).toBeLessThanOrEqual(penWidth + 0.005))
      }
      // The widest bar of a Code 128 symbol is 4 modules (1.2 mm): a 0.1 mm pen draws it with 12 lines, a 0.3 mm pen with 4.
      expect(Math.max(...hatched.map((stroke) => new Set(stroke.map(([x]) => x)).size))).toBe(penWidth === 0.1 ? 12 : 4)
      expect(bars.every((bar) => bar.x >= 10 && bar.x + bar.width < 162 * 0.42)).toBe(true)
    }
  })

  it('writes the code in small single-stroke print under the bars, centred under them, and nowhere else', () => {
    const penWidth = settings.penWidth
    const { svg } = envelopeStrokes(letter, penWidth)
    const { bars, others } = plottedBars(svg, penWidth, barHeight)
    const left = Math.min(...bars.map((bar) => bar.x))
    const right = Math.max(...bars.map((bar) => bar.x + bar.width))
    const barsBottom = Math.max(...bars.map((bar) => bar.bottom))
    const under = others.filter((stroke) => stroke.every(([x, y]) => x >= left && x <= right && y > barsBottom && y <= 104))
    // The code's characters in Hershey Sans, stroke for stroke.
    const font = strokeFont('hershey_sans_1')
    const expected = [...letter.code].reduce((sum, character) => sum + font.character(character).glyphs!.reduce((n, glyph) => n + glyph.strokes.length, 0), 0)
    expect(under).toHaveLength(expected)
    const xs = under.flat().map(([x]) => x)
    const ys = under.flat().map(([, y]) => y)
    // Small print: under 2.5 mm tall, centred under the bars within a millimetre.
    expect(Math.max(...ys) - Math.min(...ys)).toBeLessThan(2.5)
    expect(Math.abs((Math.min(...xs) + Math.max(...xs)) / 2 - (left + right) / 2)).toBeLessThan(1)
    // Everything else on the envelope is the hand's writing, clear of the code's area.
    const inCodeArea = ([x, y]: [number, number]) => x < right + 1 && y > code.top / MM - 1
    expect(others.filter((stroke) => !under.includes(stroke)).filter((stroke) => stroke.some(inCodeArea))).toEqual([])
    // Another code: other bars, other print.
    const other = envelopeStrokes({ ...letter, code: 'Q90DQSTMNQ' }, penWidth).svg
    expect(barWidths(plottedBars(other, penWidth, barHeight).bars, module)).toEqual(code128Bars('Q90DQSTMNQ'))
    const otherUnder = plottedBars(other, penWidth, barHeight).others.filter((stroke) => stroke.every(([, y]) => y > barsBottom && y <= 104))
    expect(JSON.stringify(otherUnder)).not.toBe(JSON.stringify(under))
  })

  it('draws the code in one run of strokes, ordered to cut travel against the order it was laid out in', () => {
    const plot = plotLetter('envelope', letter, settings.penWidth)
    const inCode = (stroke: Array<[number, number]>) => stroke.every(([x, y]) => x < 6000 && y > (code.top / MM) * 100 - 1)
    const flags = plot.strokes.map(inCode)
    const start = flags.indexOf(true)
    const end = flags.lastIndexOf(true)
    // No stroke of the hand's writing comes between two strokes of the code: the pen visits it once.
    expect(flags.slice(start, end + 1).every(Boolean)).toBe(true)
    const laidOut = codeStrokes(letter.code, settings.penWidth)
    expect(end - start + 1).toBe(laidOut.length)
    // Pen-up travel across the code: from its first stroke to its last, as plotted and as laid out (bars left to right, then the print).
    const travel = (strokes: Array<Array<[number, number]>>) =>
      strokes
        .slice(1)
        .reduce((sum, stroke, index) => sum + Math.hypot(stroke[0]![0] - strokes[index]!.at(-1)![0], stroke[0]![1] - strokes[index]!.at(-1)![1]), 0)
    expect(travel(plot.strokes.slice(start, end + 1))).toBeLessThan(travel(laidOut))
  })
})

describe('a 600-character card on the plotter (drawing 5)', () => {
  const card = (fontName: (typeof fontNames)[number]): LetterToRender => ({ ...letter, fontName, message: cardMessage(600), ink: 'green' })
  const words = cardMessage(600).split(/\s+/).filter(Boolean).length

  it.each(fontNames)('%s: lifts the pen per word as the hand does, and states the pen and the plotting time in the G-code', (fontName) => {
    const files = plotterFiles(card(fontName), settings)
    const gcode = readGcode(files['card.gcode'].toString(), cardArea, pen)
    const plot = plotLetter('card', card(fontName), settings.penWidth)
    const figures = plotFigures(plot.page, plot.strokes)
    const seconds = plotSeconds(figures, settings)
    // The pen goes up once more than it is set down: the file starts with it up.
    const lifts = gcode.lifts - 1
    expect(lifts).toBe(figures.strokes)
    expect(gcode.header.slice(1)).toEqual([`; pen: green (tinta verde), ${settings.penWidth} mm`, `; estimate: ${Math.round(seconds)} s`])
    // Read back from the file: the drawing and the travel its estimate counts.
    const drawn = gcode.strokes.reduce(
      (sum, stroke) => sum + stroke.slice(1).reduce((length, [x, y], index) => length + Math.hypot(x - stroke[index]![0], y - stroke[index]![1]), 0),
      0,
    )
    expect(drawn).toBeCloseTo(figures.drawMm, 0)
    console.log(
      `| ${fontName} → ${strokeFontOf[fontName]} | ${words} | ${lifts} | ${(lifts / words).toFixed(2)} | ${figures.drawMm.toFixed(0)} | ${figures.travelMm.toFixed(0)} | ${Math.round(seconds)} s |`,
    )
    if (joinedHands.has(fontName)) expect(lifts / words).toBeLessThanOrEqual(2.5)
  })

  it.each(fontNames)('%s: gives four in five of the pen’s strokes a shape no other stroke on the card has, after the best affine fit', (fontName) => {
    const { strokes } = readGcode(plotterFiles(card(fontName), settings)['card.gcode'].toString(), cardArea, pen)
    const report = twinReport(strokes.map((stroke) => ({ structure: String(stroke.length), points: stroke.flat() })))
    console.log(`${fontName}: ${report.withoutTwin} of ${report.shapes} pen strokes without an affine twin (${(report.share * 100).toFixed(1)} %)`)
    expect(report.share).toBeGreaterThanOrEqual(0.8)
  })
})
