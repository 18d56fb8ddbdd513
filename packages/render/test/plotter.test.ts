import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { getDocument, OPS } from 'pdfjs-dist/legacy/build/pdf.mjs'
import { loadConfig } from '@letters/config'
import { fontNames } from '@letters/contracts'
import { pdfText } from '@letters/test/support/pdf'
import { cardArea, envelopeArea, readGcode, readSvg } from '@letters/test/support/plotter-files'
import {
  MESSAGE_BOX,
  MIN_FONT_SIZE,
  addressLines,
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

const settings = loadConfig({}).plotter
const pen = { up: settings.penUp, down: settings.penDown }

/** 1,000 characters of Spanish: every accent, ñ, ü, ç, ¿ and ¡. */
const spanish =
  'Querida Lucía: ¡qué alegría! ¿Cómo está tu niña? Mañana, en el jardín, la cigüeña y el pingüino bailarán. Ça va, Ángel, Élodie, Íñigo, Óscar, Úrsula, Ñoño. '
const thousand = spanish.repeat(8).slice(0, 1000)

const letter: LetterToRender = {
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

  it.each(fontNames)('orders strokes to cut pen-up travel, and reports it with the plotting time at the default feeds (%s)', (fontName) => {
    const card = { ...letter, fontName }
    const naive = plotFigures(plotPages.card, traceLetter('card', card))
    const ordered = plotFigures(plotPages.card, plotLetter('card', card).strokes)
    expect(ordered.strokes).toBe(naive.strokes)
    expect(ordered.drawMm).toBeCloseTo(naive.drawMm, 6)
    expect(ordered.travelMm).toBeLessThan(naive.travelMm * 0.8)
    const minutes = (figures: typeof naive) => (plotSeconds(figures, settings) / 60).toFixed(1)
    // The README's figures come from these lines (npx vitest run packages/render/test/plotter.test.ts).
    console.log(
      `| ${fontName} → ${strokeFontOf[fontName]} | ${naive.strokes} | ${naive.drawMm.toFixed(0)} | ${naive.travelMm.toFixed(0)} | ${ordered.travelMm.toFixed(0)} (−${(100 - (100 * ordered.travelMm) / naive.travelMm).toFixed(0)}%) | ${minutes(naive)} | ${minutes(ordered)} |`,
    )
  })
})

describe('renderPlotterProof', () => {
  it('draws the strokes as PDF paths, no text, card on page 1 and envelope on page 2', async () => {
    const proof = await renderPlotterProof(letter)
    expect(proof.equals(await renderPlotterProof({ ...letter }))).toBe(true)
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
      expect(strokes, kind).toBe(plotLetter(kind, letter).strokes.length)
    }
  })
})
