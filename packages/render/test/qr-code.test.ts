import { describe, expect, it } from 'vitest'
import { loadConfig } from '@letters/config'
import {
  DEFAULT_QR_PLACEMENT,
  SAFE_MARGIN_MM,
  cardFormatNames,
  cardFormats,
  qrCorners,
  type LetterDrawingSource,
  type PrintSpec,
  type QrCorner,
  type QrPlacement,
} from '@letters/contracts'
import { sampleRecipient } from '@letters/test/support/factories'
import { cardArea, readSvg } from '@letters/test/support/plotter-files'
import { pagePixels, readQr, type PagePixels, type ReadQr } from '@letters/test/support/qr'
import {
  MM,
  QR_QUIET_ZONE,
  cardGeometry,
  cardPlaces,
  drawingOf,
  plotterFiles,
  qrModules,
  renderCard,
  renderCardSheets,
  renderPlotterProof,
  renderProof,
  type LetterToRender,
} from '../src/index.js'
import { cardMessage, sampleDesign, signaturePaths } from './samples.js'

const settings = loadConfig({}).plotter
const link = 'http://127.0.0.1:3000/q/Hk7mP2qRt9Wx'

/** A letter whose message fills its card, so that its lines run up to its boxes' edges, signed with a long name. */
const letter = (qr: LetterToRender['qr'], overrides: Partial<LetterToRender> = {}): LetterToRender => ({
  letterId: '5b8e1f2a-3c4d-4e5f-8a9b-0c1d2e3f4a5b',
  code: 'QRC0000001',
  fontName: 'caveat',
  message: `Querida Lucía: ${cardMessage(300, 7)}`,
  signature: 'Ana Ruiz Beltrán, de Papelería Luna',
  recipientLines: ['Lucía García Muñoz', 'Calle Mayor 1', '28013 Madrid'],
  senderLines: ['Ana Ruiz Beltrán'],
  design: sampleDesign({ production: 'preprinted', signature: null }),
  drawing: 5,
  ink: 'blue',
  qr,
  ...overrides,
})

interface BoxMm {
  left: number
  top: number
  right: number
  bottom: number
}

/** The square a code of `sizeMm` takes in `corner` of an A6 card: on the writing's 12 mm margin. */
function expectedSquare(corner: QrCorner, sizeMm: number): BoxMm {
  const { width, height } = cardFormats.A6
  const margin = cardGeometry('A6').margin / MM
  const left = corner.endsWith('left') ? margin : width - margin - sizeMm
  const top = corner.startsWith('top') ? margin : height - margin - sizeMm
  return { left, top, right: left + sizeMm, bottom: top + sizeMm }
}

const symbolBox = (read: ReadQr): BoxMm => {
  const xs = Object.values(read.corners).map((point) => point.x)
  const ys = Object.values(read.corners).map((point) => point.y)
  return { left: Math.min(...xs), top: Math.min(...ys), right: Math.max(...xs), bottom: Math.max(...ys) }
}

/** The pixels of a box (mm) of a page, each as [r, g, b]. */
function* pixelsIn(page: PagePixels, box: BoxMm): Generator<[number, number, number]> {
  const px = (mm: number) => Math.round((mm / 25.4) * page.dpi)
  for (let y = px(box.top); y < px(box.bottom); y++)
    for (let x = px(box.left); x < px(box.right); x++) {
      const at = (y * page.width + x) * 4
      yield [page.data[at]!, page.data[at + 1]!, page.data[at + 2]!]
    }
}

/** Pixels of the hand's blue ink in a box: the code is black, its antialiased edges grey, the hand's ink blue. */
const inkIn = (page: PagePixels, box: BoxMm) => [...pixelsIn(page, box)].filter(([r, , b]) => b - r > 30).length
/** Pixels of a box that are not paper white. */
const markedIn = (page: PagePixels, box: BoxMm) => [...pixelsIn(page, box)].filter(([r, g, b]) => Math.min(r, g, b) < 235).length

/**
 * The code read back from a card's page and where it is: exactly the short link, its symbol inside
 * the expected square by the quiet zone's width, the square inside the safe margin, no ink of the
 * hand in the square and nothing at all in its quiet zone.
 */
async function expectCodeIn(pdf: Buffer, placement: QrPlacement, page = 1): Promise<void> {
  const pixels = await pagePixels(pdf, page)
  const read = readQr(pixels)
  expect(read?.text).toBe(link)
  const square = expectedSquare(placement.corner, placement.sizeMm)
  const modules = qrModules(link).length
  const quiet = (placement.sizeMm / (modules + 2 * QR_QUIET_ZONE)) * QR_QUIET_ZONE
  const symbol = symbolBox(read!)
  for (const side of ['left', 'top'] as const) expect(symbol[side]).toBeCloseTo(square[side] + quiet, 0)
  for (const side of ['right', 'bottom'] as const) expect(symbol[side]).toBeCloseTo(square[side] - quiet, 0)
  const { width, height } = cardFormats.A6
  expect(Math.min(square.left, square.top, width - square.right, height - square.bottom)).toBeGreaterThanOrEqual(SAFE_MARGIN_MM)
  expect(inkIn(pixels, square)).toBe(0)
  // The quiet zone, less a pixel's rounding at the symbol's edge: white.
  const edge = 0.2
  const inner = { left: square.left + quiet - edge, top: square.top + quiet - edge, right: square.right - quiet + edge, bottom: square.bottom - quiet + edge }
  const ring: BoxMm[] = [
    { ...square, bottom: inner.top },
    { ...square, top: inner.bottom },
    { ...square, top: inner.top, bottom: inner.bottom, right: inner.left },
    { ...square, top: inner.top, bottom: inner.bottom, left: inner.right },
  ]
  for (const part of ring) expect(markedIn(pixels, part)).toBe(0)
}

describe("a letter's QR code on its card", () => {
  it.each(qrCorners)('prints the short link in the %s corner its design places it in, the writing kept clear of it', async (corner) => {
    const placement = { corner, sizeMm: 22 }
    await expectCodeIn(await renderCard(letter({ link, placement })), placement)
  })

  it('goes to the bottom right, 18 mm, where the design places none, and a drawn signature moves clear of it', async () => {
    const drawn = letter({ link, placement: DEFAULT_QR_PLACEMENT }, { design: sampleDesign({ production: 'preprinted', signature: signaturePaths }) })
    await expectCodeIn(await renderCard(drawn), DEFAULT_QR_PLACEMENT)
    // The proof a client looks at is drawn by the same hand: its card page shows the code too.
    await expectCodeIn(await renderProof(drawn), DEFAULT_QR_PLACEMENT)
  })

  it('is on the back of a card printed with its front, and on its card in a batch sheet of letters without one', async () => {
    const placement = { corner: 'top-right' as const, sizeMm: 18 }
    const printed = letter({ link, placement }, { design: sampleDesign({ production: 'printed', front: null, signature: null }) })
    await expectCodeIn(await renderCard(printed), placement)
    const plain = letter(undefined, { letterId: '6c9f2a3b-4d5e-4f6a-9b0c-1d2e3f4a5b6c' })
    const sheet = await renderCardSheets([plain, letter({ link, placement }), plain])
    expect(readQr(await pagePixels(sheet))?.text).toBe(link)
  })

  it.each(cardFormatNames)('keeps the %s card message and signature strip clear of a code of any size in any corner', (format) => {
    const design = sampleDesign({ card: format, production: 'preprinted', signature: null })
    const card = cardGeometry(format)
    for (const corner of qrCorners)
      for (const sizeMm of [15, 18, 40]) {
        const places = cardPlaces({ design, qr: { link, placement: { corner, sizeMm } } })
        const square = places.qr!.square
        expect(Math.min(square.x, square.y, card.size.width - square.x - square.width, card.size.height - square.y - square.height)).toBeGreaterThanOrEqual(
          SAFE_MARGIN_MM * MM - 1e-9,
        )
        expect(square.width).toBeCloseTo(sizeMm * MM, 9)
        for (const box of [places.message, places.signature]) {
          // Apart by at least 3 mm, on one side or another.
          const apart = Math.max(
            square.x - (box.x + box.width),
            box.x - (square.x + square.width),
            square.y - (box.y + box.height),
            box.y - (square.y + square.height),
          )
          expect(apart, `${format} ${corner} ${sizeMm} mm`).toBeGreaterThanOrEqual(3 * MM)
          expect(box.width * box.height).toBeGreaterThan(0)
        }
        expect(places.right).toBeCloseTo(places.signature.x + places.signature.width, 9)
      }
  })
})

describe("a letter's QR code on the plotter", () => {
  it.each(qrCorners)('fills the code in the %s corner as it fills the envelope’s bars, and the drawn card reads back', async (corner) => {
    const placement = { corner, sizeMm: 20 }
    const files = plotterFiles(letter({ link, placement }), settings)
    const square = expectedSquare(corner, placement.sizeMm)
    const svg = readSvg(files['card.svg'].toString(), cardArea)
    expect(svg.outside).toEqual([])
    const inSquare = svg.strokes.filter((stroke) => stroke.some(([x, y]) => x >= square.left && x <= square.right && y >= square.top && y <= square.bottom))
    expect(inSquare.length).toBeGreaterThan(20)
    const quiet = (placement.sizeMm / (qrModules(link).length + 2 * QR_QUIET_ZONE)) * QR_QUIET_ZONE
    for (const stroke of inSquare) {
      // Straight down or up a column, or across by at most the pen to the next line: a filled bar, never the hand's curves.
      stroke.forEach(([x, y], index) => {
        const previous = stroke[index - 1]
        expect(!previous || x === previous[0] || (y === previous[1] && Math.abs(x - previous[0]) <= settings.penWidth + 0.011)).toBe(true)
        // The ink stays off the quiet zone.
        expect(x - settings.penWidth / 2).toBeGreaterThanOrEqual(square.left + quiet - 0.011)
        expect(x + settings.penWidth / 2).toBeLessThanOrEqual(square.right - quiet + 0.011)
        expect(y).toBeGreaterThanOrEqual(square.top + quiet - 0.011)
        expect(y).toBeLessThanOrEqual(square.bottom - quiet + 0.011)
      })
    }
    // The G-code draws the same strokes: as many pen-downs as the SVG has paths.
    expect(
      files['card.gcode']
        .toString()
        .split('\n')
        .filter((line) => line === settings.penDown),
    ).toHaveLength(svg.paths)
    // Drawn with the pen's width, as the plotter proof draws these strokes, the code reads back where it was placed.
    const read = readQr(await pagePixels(await renderPlotterProof(letter({ link, placement }), settings.penWidth)))
    expect(read?.text).toBe(link)
    const symbol = symbolBox(read!)
    expect(symbol.left).toBeCloseTo(square.left + quiet, 0)
    expect(symbol.bottom).toBeCloseTo(square.bottom - quiet, 0)
  })
})

describe('drawingOf', () => {
  const spec = (qrPlacement?: QrPlacement | null): PrintSpec => ({
    card: {
      designId: '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
      name: 'Tarjeta',
      format: 'A6',
      production: 'preprinted',
      stockCode: 'LUNA-A6',
      artwork: null,
      ...(qrPlacement === undefined ? {} : { qrPlacement }),
    },
    envelope: { designId: '1b2c3d4e-5f6a-4b7c-9d8e-0f1a2b3c4d5e', name: 'Sobre', format: 'C6', stockCode: null, paperColor: null, artwork: null },
    signature: null,
    senderName: 'Ana',
    returnAddress: null,
  })
  const source = (trackingCode: string | null, printSpec: PrintSpec | null = spec()): LetterDrawingSource => ({
    letterId: '5b8e1f2a-3c4d-4e5f-8a9b-0c1d2e3f4a5b',
    code: 'QRC0000001',
    fontName: 'caveat',
    drawing: 5,
    inkColor: 'blue',
    message: 'Gracias por tu pedido.',
    senderName: 'Ana',
    recipient: sampleRecipient,
    address: null,
    addressLines: null,
    printSpec,
    artworks: new Map(),
    ownFont: null,
    trackingCode,
  })
  const base = 'https://cartas.example.com'

  it('links the code to the short link of the letter, in the corner its design chose or at the default place', () => {
    const placed = { corner: 'top-left' as const, sizeMm: 30 }
    expect(drawingOf(source('Hk7mP2qRt9Wx', spec(placed)), 'ES', base).qr).toEqual({ link: `${base}/q/Hk7mP2qRt9Wx`, placement: placed })
    for (const printSpec of [spec(), spec(null), null])
      expect(drawingOf(source('Hk7mP2qRt9Wx', printSpec), 'ES', base).qr).toEqual({ link: `${base}/q/Hk7mP2qRt9Wx`, placement: DEFAULT_QR_PLACEMENT })
  })

  it('draws a letter without a tracking code as it always was, and refuses to draw one with a code but no base URL', async () => {
    const plain = drawingOf(source(null), 'ES', base)
    expect('qr' in plain).toBe(false)
    expect((await renderCard(plain)).equals(await renderCard(drawingOf(source(null), 'ES')))).toBe(true)
    expect(() => drawingOf(source('Hk7mP2qRt9Wx'), 'ES')).toThrow(/public base URL/)
  })
})
