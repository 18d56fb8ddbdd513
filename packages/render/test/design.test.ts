import { execFileSync } from 'node:child_process'
import { inflateSync } from 'node:zlib'
import { PDFArray, PDFDocument as PdfLib, PDFName, PDFNumber, type PDFPage } from 'pdf-lib'
import sharp from 'sharp'
import { beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '@letters/config'
import {
  BLEED_MM,
  SAFE_MARGIN_MM,
  cardFormatNames,
  cardFormats,
  envelopeFormatNames,
  envelopeFormats,
  type CardFormat,
  type EnvelopeFormat,
} from '@letters/contracts'
import { compact, pageContents, pdfText, pdfTextBoxes } from '@letters/test/support/pdf'
import { readGcode, readSvg } from '@letters/test/support/plotter-files'
import {
  BLEED,
  MM,
  cardGeometry,
  envelopeGeometry,
  fitSize,
  flattenPath,
  imposition,
  plotLetter,
  plotPage,
  plotterFiles,
  renderCard,
  renderCardSheets,
  renderEnvelope,
  renderEnvelopes,
  renderPlotterProof,
  renderPrintedParts,
  renderProof,
  signaturePlace,
  slotAt,
  type LetterToRender,
  type Measure,
} from '../src/index.js'
import { frontJpeg, logoPng, sampleDesign, signaturePaths, signaturePng, type SampleDesign } from './samples.js'

const settings = loadConfig({}).plotter

const letter: LetterToRender = {
  letterId: '7a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
  code: 'DSGN000001',
  fontName: 'caveat',
  message: 'Querida Lucía: ¡gracias por venir a la inauguración! Ya tenemos los sobres a juego, en azul y en verde. Un abrazo muy fuerte.',
  signature: 'Ana Ruiz Beltrán',
  recipientLines: ['Lucía García Muñoz', 'Calle del General Díaz Porlier 106, 4º E', '28012 Madrid'],
  senderLines: ['Ana Ruiz Beltrán'],
}

let fronts: Record<CardFormat, Uint8Array>
let logo: Uint8Array
let signatureImage: Uint8Array
beforeAll(async () => {
  fronts = Object.fromEntries(await Promise.all(cardFormatNames.map(async (format) => [format, await frontJpeg(format)] as const))) as Record<
    CardFormat,
    Uint8Array
  >
  logo = await logoPng()
  signatureImage = await signaturePng()
})

/** The letter with a design: a printed card with its format's front, a logo, unless told otherwise. */
function designed(options: SampleDesign = {}, base: LetterToRender = letter): LetterToRender {
  const card = options.card ?? 'A6'
  return { ...base, design: sampleDesign({ front: fronts[card], logo, ...options, card }) }
}

const mm = (points: number) => points / MM
const boxOf = (page: PDFPage, name: 'TrimBox' | 'BleedBox') =>
  page.node
    .lookupMaybe(PDFName.of(name), PDFArray)
    ?.asArray()
    .map((value) => (value as PDFNumber).asNumber())
const sizeOf = (page: PDFPage) => [mm(page.getWidth()), mm(page.getHeight())]

/** Every stream of a PDF inflated (content streams, and what else deflates), in file order. */
function streams(pdf: Buffer): string[] {
  const text = pdf.toString('latin1')
  const found: string[] = []
  for (const match of text.matchAll(/stream\r?\n/g)) {
    const start = match.index + match[0].length
    try {
      found.push(inflateSync(pdf.subarray(start, text.indexOf('endstream', start))).toString('latin1'))
    } catch {
      // An image's DCT data, or not a stream.
    }
  }
  return found
}

/** Where images are drawn on a page (pdfkit's `w 0 0 -h x y cm /Name Do`), in points from the top left. */
function drawnImages(content: string): Array<{ name: string; x: number; top: number; width: number; height: number }> {
  return [...content.matchAll(/(-?[\d.]+) 0 0 (-?[\d.]+) (-?[\d.]+) (-?[\d.]+) cm\n\/(\w+) Do/g)].map(([, w, h, x, y, name]) => ({
    name: name!,
    x: Number(x),
    top: Number(y) + Number(h),
    width: Number(w),
    height: -Number(h),
  }))
}

/** The colour of a page 5 mm in from its top left corner (inside the margins, where nothing is drawn), as poppler draws the page. */
async function cornerColour(pdf: Buffer, page: number): Promise<number[]> {
  const png = execFileSync('pdftoppm', ['-png', '-r', '20', '-f', String(page), '-l', String(page), '-singlefile', '-'], { input: pdf })
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true })
  const at = (4 * info.width + 4) * info.channels
  return [...data.subarray(at, at + 3)]
}

/** A page as poppler draws it at 40 dpi, RGB. */
async function pagePixels(pdf: Buffer, page: number): Promise<Buffer> {
  const png = execFileSync('pdftoppm', ['-png', '-r', '40', '-f', String(page), '-l', String(page), '-singlefile', '-'], { input: pdf })
  return sharp(png).removeAlpha().raw().toBuffer()
}

/** How many colours an RGB image has, each channel to 16 levels: one for a blank page, hundreds for a picture. */
function distinctColours(rgb: Buffer): number {
  const seen = new Set<number>()
  for (let at = 0; at + 2 < rgb.length; at += 3) seen.add(((rgb[at]! >> 4) << 8) | ((rgb[at + 1]! >> 4) << 4) | (rgb[at + 2]! >> 4))
  return seen.size
}

describe('the geometry of each format', () => {
  it.each(cardFormatNames)('keeps the %s card writing inside safe margins, the message above the signature strip', (format) => {
    const card = cardGeometry(format)
    expect([mm(card.size.width), mm(card.size.height)]).toEqual([cardFormats[format].width, cardFormats[format].height].map((v) => expect.closeTo(v, 6)))
    expect(mm(card.margin)).toBeGreaterThanOrEqual(SAFE_MARGIN_MM)
    expect(card.message.x + card.message.width).toBeCloseTo(card.size.width - card.margin, 6)
    expect(card.signature.y).toBeCloseTo(card.message.y + card.message.height, 6)
    expect(card.signature.y + card.signature.height).toBeCloseTo(card.size.height - card.margin, 6)
    // A signature's drawing: bottom right of the strip, its shape kept, at most 45 mm wide on A6 and as much larger as the card.
    const place = signaturePlace(signaturePaths, card)
    expect(place.x + signaturePaths.width * place.scale).toBeCloseTo(card.size.width - card.margin, 6)
    expect(place.y + signaturePaths.height * place.scale).toBeCloseTo(card.size.height - card.margin, 6)
    expect(place.y).toBeGreaterThanOrEqual(card.signature.y - 1e-9)
    expect(mm(signaturePaths.width * place.scale)).toBeLessThanOrEqual(45 * card.scale + 1e-9)
  })

  it.each(envelopeFormatNames)('keeps the %s envelope blocks apart, inside safe margins', (format) => {
    const envelope = envelopeGeometry(format)
    expect(mm(envelope.size.width)).toBeCloseTo(envelopeFormats[format].width, 6)
    expect(mm(envelope.margin)).toBeGreaterThanOrEqual(SAFE_MARGIN_MM)
    expect(envelope.recipient.x + envelope.recipient.width).toBeCloseTo(envelope.size.width - envelope.margin, 6)
    expect(envelope.corner.y + envelope.corner.height).toBeLessThan(envelope.recipient.y)
  })

  it('lays out sheets: four A6 to an A4 as always; with artwork, the bleed in the gutters and room for the printer', () => {
    const layouts = cardFormatNames.flatMap((format) =>
      [0, BLEED].map((bleed) => {
        const layout = imposition(cardGeometry(format).size, bleed)
        const sheet = `${Math.round(mm(layout.sheet.width))}×${Math.round(mm(layout.sheet.height))}`
        // The cards and their bleed stay on the sheet, and with artwork 10 mm clear of its edges.
        expect(layout.left).toBeGreaterThanOrEqual(bleed ? 10 * MM - 1e-9 : 0)
        expect(layout.top).toBeGreaterThanOrEqual(bleed ? 10 * MM - 1e-9 : 0)
        return `${format}${bleed ? ' printed' : ''}: ${layout.columns}×${layout.rows} on ${sheet}`
      }),
    )
    expect(layouts).toEqual([
      'A6: 2×2 on 297×210',
      'A6 printed: 2×2 on 420×297',
      'A5: 2×2 on 420×297',
      'A5 printed: 1×1 on 297×210',
      '5x7: 2×2 on 420×297',
      '5x7 printed: 2×2 on 420×297',
    ])
  })
})

describe('the card file of a letter with a design', () => {
  it.each(cardFormatNames)('printed %s: the front page, then the writing, both the card plus its bleed, with TrimBox and BleedBox', async (format) => {
    const pdf = await renderCard(designed({ card: format }))
    const document = await PdfLib.load(pdf)
    const { width, height } = cardFormats[format]
    expect(document.getPageCount()).toBe(2)
    for (const page of document.getPages()) {
      expect(sizeOf(page)).toEqual([expect.closeTo(width + 2 * BLEED_MM, 6), expect.closeTo(height + 2 * BLEED_MM, 6)])
      expect(boxOf(page, 'TrimBox')!.map(mm)).toEqual([BLEED_MM, BLEED_MM, width + BLEED_MM, height + BLEED_MM].map((v) => expect.closeTo(v, 4)))
      expect(boxOf(page, 'BleedBox')!.map(mm)).toEqual([0, 0, width + 2 * BLEED_MM, height + 2 * BLEED_MM].map((v) => expect.closeTo(v, 4)))
    }
    // The JPEG goes in as its own bytes (DCT), filling the front page; the writing is on page 2.
    expect(pdf.includes('/DCTDecode')).toBe(true)
    expect(pdf.includes(Buffer.from(fronts[format]))).toBe(true)
    const [frontPage, writing] = await pageContents(pdf)
    expect(drawnImages(frontPage!)).toEqual([
      { name: 'I1', x: 0, top: 0, width: expect.closeTo((width + 2 * BLEED_MM) * MM, 4), height: expect.closeTo((height + 2 * BLEED_MM) * MM, 4) },
    ])
    expect(drawnImages(writing!)).toEqual([])
    const { text } = await pdfText(pdf)
    expect(text).toContain(compact(letter.message))
  })

  it.each(cardFormatNames)('preprinted %s: the writing alone, at the card’s size, no image', async (format) => {
    for (const options of [{ production: 'preprinted' as const }, { production: 'printed' as const, front: null }]) {
      const pdf = await renderCard(designed({ card: format, ...options }))
      const document = await PdfLib.load(pdf)
      expect(document.getPageCount()).toBe(1)
      expect(sizeOf(document.getPage(0))).toEqual([expect.closeTo(cardFormats[format].width, 6), expect.closeTo(cardFormats[format].height, 6)])
      expect(boxOf(document.getPage(0), 'TrimBox')).toBeUndefined()
      expect(pdf.includes('/DCTDecode')).toBe(false)
    }
  })

  it("prints a preprinted card with artwork byte for byte as without it: the artwork is the proof's only", async () => {
    const withArtwork = designed({ production: 'preprinted' })
    const without = designed({ production: 'preprinted', front: null })
    expect(withArtwork.design!.card.front).not.toBeNull()
    expect((await renderCard(withArtwork)).equals(await renderCard(without))).toBe(true)
    expect(renderPrintedParts(withArtwork).front).toBeUndefined()
    const batch = (drawn: LetterToRender) => [drawn, { ...drawn, letterId: '7a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c6e', code: 'DSGN000002' }]
    expect((await renderCardSheets(batch(withArtwork))).equals(await renderCardSheets(batch(without)))).toBe(true)
  })

  it('writes the message inside the card on every format, larger on a larger card', async () => {
    const sizes = []
    for (const format of cardFormatNames) {
      const pdf = await renderCard(designed({ card: format, production: 'preprinted' }))
      const [content] = await pageContents(pdf)
      // Each glyph's text matrix: its origin, in hundredths of a point (handwriting.ts).
      const origins = [...content!.matchAll(/(-?\d+) (-?\d+) (-?\d+) (-?\d+) (-?\d+) (-?\d+) Tm/g)].map((m) => [
        Number(m[5]) / 100,
        Number(m[6]) / 100,
        Number(m[1]) / 100,
      ])
      const card = cardGeometry(format)
      for (const [x, y] of origins) {
        expect(x).toBeGreaterThan(card.margin - 5)
        expect(x).toBeLessThan(card.size.width - card.margin)
        expect(y).toBeGreaterThan(card.margin)
        expect(y).toBeLessThan(card.size.height - card.margin)
      }
      sizes.push(Math.max(...origins.map(([, , size]) => size!)))
    }
    expect(sizes[1]).toBeGreaterThan(sizes[0]!)
  })

  it('signs with the signature’s paths, stroked in ink, instead of the name', async () => {
    const pdf = await renderCard(designed({ production: 'preprinted' }))
    const [content] = await pageContents(pdf)
    // One stroke per path, nothing filled, and the name not written.
    expect(content!.match(/^S$/gm)).toHaveLength(signaturePaths.paths.length)
    // The letter's ink (blue, #1b3a8c) as the stroking colour: signed with the pen it was written with.
    expect(content).toMatch(/0\.10588\d* 0\.22745\d* 0\.54901\d* SCN/)
    const green = (await pageContents(await renderCard({ ...designed({ production: 'preprinted' }), ink: 'green' })))[0]
    // #1f5e3b
    expect(green).toMatch(/0\.12156\d* 0\.36862\d* 0\.23137\d* SCN/)
    expect((await pdfText(pdf)).text).not.toContain(compact(letter.signature))
    const named = await renderCard(designed({ production: 'preprinted', signature: null }))
    expect((await pdfText(named)).text).toContain(compact(letter.signature))
    expect((await pageContents(named))[0]).not.toMatch(/^S$/m)
  })

  it('signs with the signature’s image, a transparent PNG in the strip, instead of the name', async () => {
    const pdf = await renderCard(designed({ production: 'preprinted', signature: { kind: 'image', width: 600, height: 200, png: signatureImage } }))
    expect(pdf.toString('latin1')).toMatch(/\/SMask \d+ 0 R/)
    const [content] = await pageContents(pdf)
    const [image] = drawnImages(content!)
    const card = cardGeometry('A6')
    expect(image!.x + image!.width).toBeCloseTo(card.size.width - card.margin, 2)
    expect(image!.top + image!.height).toBeCloseTo(card.size.height - card.margin, 2)
    expect((await pdfText(pdf)).text).not.toContain(compact(letter.signature))
  })

  it('is the same bytes every time', async () => {
    const again = designed()
    expect(
      (await renderCard(designed())).equals(
        await renderCard({ ...again, design: { ...again.design!, card: { ...again.design!.card, front: new Uint8Array(fronts.A6) } } }),
      ),
    ).toBe(true)
  })
})

describe('the envelope of a letter with a design', () => {
  it.each(envelopeFormatNames)('%s: a page at the format, logo and return address at the top left, the recipient and the code', async (format) => {
    const pdf = await renderEnvelope(designed({ envelope: format }))
    const document = await PdfLib.load(pdf)
    expect(document.getPageCount()).toBe(1)
    expect(sizeOf(document.getPage(0))).toEqual([expect.closeTo(envelopeFormats[format].width, 6), expect.closeTo(envelopeFormats[format].height, 6)])
    const envelope = envelopeGeometry(format)
    const [content] = await pageContents(pdf)
    const [image] = drawnImages(content!)
    // The logo fitted in 45 × 18 mm, its shape kept (600 × 240 px: 45 × 18 mm exactly).
    expect(image).toEqual({
      name: 'P1',
      x: expect.closeTo(envelope.margin, 4),
      top: expect.closeTo(envelope.margin, 4),
      width: expect.closeTo(45 * MM, 4),
      height: expect.closeTo(18 * MM, 4),
    })
    const { text } = await pdfText(pdf)
    for (const line of [...sampleDesign({}).returnAddressLines!, ...letter.recipientLines, letter.code]) expect(text).toContain(compact(line))
    // The return address replaces the sender's block.
    expect(text).not.toContain(compact(letter.senderLines[0]!))
  })

  it('writes the sender’s block as before when the design has no return address, under the logo', async () => {
    const { text } = await pdfText(await renderEnvelope(designed({ returnAddressLines: null })))
    expect(text).toContain(compact(letter.senderLines[0]!))
    expect(text).not.toContain('Sierpes')
  })

  it('keeps a door letter with the word before it in the recipient block', () => {
    // Every character one em, a space half of one: a line of 8.5 ems takes "Calle 4º" and no more.
    const measure: Measure = { width: (text) => [...text].length, space: 0.5, lineHeight: 1.2 }
    const box = { x: 0, y: 0, width: 85, height: 1000 }
    expect(fitSize(measure, 'Calle 4º E', box, 10, 6, 'prose').lines).toEqual(['Calle 4º', 'E'])
    expect(fitSize(measure, 'Calle 4º E', box, 10, 6, 'address').lines).toEqual(['Calle', '4º E'])
    expect(fitSize(measure, 'Portal 2 Esc. B', box, 10, 6, 'address').lines).toEqual(['Portal 2', 'Esc. B'])
  })

  it('writes a letter’s door with its floor: 4º E on one line, where the same block without a design leaves E alone', async () => {
    // The envelope's text by line: glyphs within a few points of a line's height (the hand wobbles) are on it.
    const lineOf = async (drawn: LetterToRender) => {
      const [page] = await pdfTextBoxes(await renderEnvelope(drawn))
      const rows: Array<{ y: number; text: string }> = []
      for (const box of page!.boxes) {
        const row = rows.find(({ y }) => Math.abs(y - box.y) < 6)
        if (row) row.text += box.text
        else rows.push({ y: box.y, text: box.text })
      }
      return rows.map(({ text }) => compact(text))
    }
    expect(await lineOf(letter)).toContain('E')
    const rows = await lineOf(designed({ production: 'preprinted' }))
    expect(rows).not.toContain('E')
    expect(rows.some((row) => row.endsWith('4ºE'))).toBe(true)
  })
})

describe('the proof of a letter with a design', () => {
  it.each(cardFormatNames.map((card, index) => [card, envelopeFormatNames[index]!] as const))(
    '%s in %s: the front cut to the trim, the writing, the envelope on its paper colour; every page at its trim',
    async (card, envelopeFormat) => {
      const pdf = await renderProof(designed({ card, envelope: envelopeFormat, paperColor: '#c9a77c' }))
      const document = await PdfLib.load(pdf)
      expect(document.getPages().map(sizeOf)).toEqual([
        [expect.closeTo(cardFormats[card].width, 6), expect.closeTo(cardFormats[card].height, 6)],
        [expect.closeTo(cardFormats[card].width, 6), expect.closeTo(cardFormats[card].height, 6)],
        [expect.closeTo(envelopeFormats[envelopeFormat].width, 6), expect.closeTo(envelopeFormats[envelopeFormat].height, 6)],
      ])
      const [front] = await pageContents(pdf)
      // Placed at −bleed: the page cuts the artwork where the guillotine will.
      expect(drawnImages(front!)[0]).toMatchObject({ x: expect.closeTo(-BLEED, 4), top: expect.closeTo(-BLEED, 4) })
      expect(await cornerColour(pdf, 3)).toEqual([0xc9, 0xa7, 0x7c])
      expect(await cornerColour(pdf, 2)).toEqual([255, 255, 255])
    },
  )

  it("shows a preprinted card's front from its artwork, cut to the trim as a printed card's is", async () => {
    const preprinted = await renderProof(designed({ production: 'preprinted' }))
    const printed = await renderProof(designed())
    expect((await PdfLib.load(preprinted)).getPages().map(sizeOf)).toEqual((await PdfLib.load(printed)).getPages().map(sizeOf))
    const [front] = await pageContents(preprinted)
    expect(drawnImages(front!)).toEqual([expect.objectContaining({ x: expect.closeTo(-BLEED, 4), top: expect.closeTo(-BLEED, 4) })])
    // The artwork as poppler draws the page: the same picture a printed card's proof shows, over the whole card.
    const [shown, expected] = await Promise.all([pagePixels(preprinted, 1), pagePixels(printed, 1)])
    expect(shown.equals(expected)).toBe(true)
    expect(distinctColours(shown)).toBeGreaterThan(50)
  })

  it('has no front page for a preprinted card without artwork, and a white envelope without a paper colour', async () => {
    const pdf = await renderProof(designed({ production: 'preprinted', front: null, paperColor: null }))
    expect((await PdfLib.load(pdf)).getPageCount()).toBe(2)
    expect(pdf.includes('/DCTDecode')).toBe(false)
    expect(await cornerColour(pdf, 2)).toEqual([255, 255, 255])
  })

  it('never gives the print files the paper colour: the floor loads the paper', async () => {
    const kraft = designed({ paperColor: '#c9a77c' })
    expect(await cornerColour(await renderEnvelope(kraft), 1)).toEqual([255, 255, 255])
    expect(await cornerColour(await renderEnvelopes([kraft]), 1)).toEqual([255, 255, 255])
  })

  it('is the same bytes every time', async () => {
    expect((await renderProof(designed())).equals(await renderProof(designed()))).toBe(true)
  })
})

describe('the batch files of letters with a design', () => {
  const batchOf = (count: number, options: SampleDesign) =>
    Array.from({ length: count }, (_, index) =>
      designed(
        { signature: null, ...options },
        { ...letter, letterId: `7a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c${index}0`, code: `DSGN00000${index}`, message: `Tarjeta número ${index}` },
      ),
    )

  it.each(cardFormatNames)('%s printed: fronts then mirrored backs, sheet by sheet, the front embedded once', async (format) => {
    const batch = batchOf(5, { card: format })
    const pdf = await renderCardSheets(batch)
    const layout = imposition(cardGeometry(format).size, BLEED)
    const perSheet = layout.columns * layout.rows
    const sheets = Math.ceil(batch.length / perSheet)
    const document = await PdfLib.load(pdf)
    expect(document.getPageCount()).toBe(2 * sheets)
    for (const page of document.getPages()) expect(sizeOf(page)).toEqual([mm(layout.sheet.width), mm(layout.sheet.height)].map((v) => expect.closeTo(v, 6)))
    expect(pdf.toString('latin1').match(/\/DCTDecode/g)).toHaveLength(1)
    const contents = await pageContents(pdf)
    for (let sheet = 0; sheet < sheets; sheet++) {
      const cards = batch.slice(sheet * perSheet, (sheet + 1) * perSheet)
      // The fronts in order, each covering its slot; the backs (each card's writing translated to its trim) mirrored left to right.
      expect(drawnImages(contents[2 * sheet]!).map(({ x, top }) => [x, top])).toEqual(
        cards.map((_, index) => [expect.closeTo(slotAt(layout, index).x, 4), expect.closeTo(slotAt(layout, index).y, 4)]),
      )
      const backs = [...contents[2 * sheet + 1]!.matchAll(/^1 0 0 1 (-?[\d.]+) (-?[\d.]+) cm$/gm)].map(([, x, y]) => [Number(x), Number(y)])
      expect(backs).toEqual(
        cards.map((_, index) => {
          const { x, y } = slotAt(layout, index, true)
          return [expect.closeTo(x + BLEED, 4), expect.closeTo(y + BLEED, 4)]
        }),
      )
      if (layout.columns === 2) expect(backs[0]![0]).toBeGreaterThan(layout.sheet.width / 2)
    }
    // The messages in order, the backs' text only.
    const text = compact((await pdfText(pdf)).text)
    const at = batch.map((drawn) => text.indexOf(compact(drawn.message)))
    expect([...at].sort((a, b) => a - b)).toEqual(at)
    expect(at.every((position) => position >= 0)).toBe(true)
  })

  it.each(cardFormatNames)('%s preprinted: the writing alone, one page a sheet, crop marks on the cut lines', async (format) => {
    const pdf = await renderCardSheets(batchOf(5, { card: format, production: 'preprinted' }))
    const layout = imposition(cardGeometry(format).size, 0)
    const document = await PdfLib.load(pdf)
    expect(document.getPageCount()).toBe(Math.ceil(5 / (layout.columns * layout.rows)))
    expect(pdf.includes('/DCTDecode')).toBe(false)
    // Two 4 mm marks at each corner of each card.
    const marks = streams(pdf)
      .flatMap((content) => [...content.matchAll(/(-?[\d.]+) (-?[\d.]+) m\s+(-?[\d.]+) (-?[\d.]+) l/g)])
      .filter(([, x1, y1, x2, y2]) => Math.abs(Math.hypot(Number(x2) - Number(x1), Number(y2) - Number(y1)) - 4 * MM) < 0.01)
    expect(marks).toHaveLength(8 * 5)
  })

  it('puts one envelope on each page at the format, the logo embedded once', async () => {
    for (const format of envelopeFormatNames) {
      const pdf = await renderEnvelopes(batchOf(3, { envelope: format }))
      const document = await PdfLib.load(pdf)
      expect(document.getPages().map(sizeOf)).toEqual(
        Array(3).fill([expect.closeTo(envelopeFormats[format].width, 6), expect.closeTo(envelopeFormats[format].height, 6)]),
      )
      expect(pdf.toString('latin1').match(/\/SMask/g)).toHaveLength(1)
    }
  })

  it('refuses a batch of two card or envelope formats, or of cards with and without their front printed', () => {
    const a6 = batchOf(2, { card: 'A6' })
    expect(() => renderCardSheets([...a6, ...batchOf(1, { card: 'A5' })])).toThrow(RangeError)
    expect(() => renderCardSheets([...a6, ...batchOf(1, { production: 'preprinted' })])).toThrow(RangeError)
    // A letter without a design is an A6 card without a front: it goes with preprinted A6 cards.
    expect(() => renderCardSheets([...batchOf(2, { production: 'preprinted' }), letter])).not.toThrow()
    expect(() => renderEnvelopes([...batchOf(1, { envelope: 'DL' }), ...batchOf(1, { envelope: 'C5' })])).toThrow(RangeError)
  })

  it('is the same bytes every time', async () => {
    const batch = batchOf(5, {})
    expect((await renderCardSheets(batch)).equals(await renderCardSheets(batchOf(5, {})))).toBe(true)
    expect((await renderEnvelopes(batch)).equals(await renderEnvelopes(batchOf(5, {})))).toBe(true)
  })
})

describe('a letter with a design on the plotter', () => {
  const areaOf = (kind: 'card' | 'envelope', drawn: LetterToRender) => {
    const page = plotPage(kind, drawn)
    return { width: page.width, height: page.height, margin: page.margin }
  }

  it.each(cardFormatNames.map((card, index) => [card, envelopeFormatNames[index] as EnvelopeFormat] as const))(
    'draws a %s card and a %s envelope at their sizes, every point inside the pen area',
    (card, envelope) => {
      const drawn = designed({ card, envelope })
      const files = plotterFiles(drawn, settings)
      expect(areaOf('card', drawn)).toMatchObject(cardFormats[card])
      expect(areaOf('envelope', drawn)).toMatchObject(envelopeFormats[envelope])
      for (const kind of ['card', 'envelope'] as const) {
        const area = areaOf(kind, drawn)
        const svg = readSvg(files[`${kind}.svg`].toString(), area)
        expect(svg.viewBox).toBe(`0 0 ${area.width} ${area.height}`)
        expect(svg.outside).toEqual([])
        expect(readGcode(files[`${kind}.gcode`].toString(), area, { up: settings.penUp, down: settings.penDown }).outside).toEqual([])
      }
    },
  )

  it('draws the signature’s paths stroke by stroke in the signature’s place, and signs an image’s with the name', () => {
    // Drawing 4 plots each stroke as laid out, so the signature's strokes can be told from the writing's.
    const strokesOf = (drawn: LetterToRender) => plotLetter('card', { ...drawn, drawing: 4 }, settings.penWidth).strokes
    const unsigned = strokesOf(designed({ signature: null }, { ...letter, signature: '' }))
    const signed = strokesOf(designed({}))
    // The writing is the same; each path adds its strokes (one per subpath: six here).
    expect(signed.length).toBe(unsigned.length + 6)
    const place = signaturePlace(signaturePaths, cardGeometry('A6'))
    const inPlace = ([x, y]: [number, number]) =>
      x / 100 >= mm(place.x) - 0.01 &&
      x / 100 <= mm(place.x + signaturePaths.width * place.scale) + 0.01 &&
      y / 100 >= mm(place.y) - 0.01 &&
      y / 100 <= mm(place.y + signaturePaths.height * place.scale) + 0.01
    const added = signed.filter((stroke) => !unsigned.some((other) => JSON.stringify(other) === JSON.stringify(stroke)))
    expect(added).toHaveLength(6)
    expect(added.every((stroke) => stroke.every(inPlace))).toBe(true)
    // A PNG cannot be plotted: the name is written, as with no signature at all.
    const imaged = strokesOf(designed({ signature: { kind: 'image', width: 600, height: 200, png: signatureImage } }))
    expect(imaged).toEqual(strokesOf(designed({ signature: null })))
  })

  it('flattens curves within a tenth of a millimetre', () => {
    const tolerance = 0.1
    const cubic = [0, 0, 10, 40, 50, -20, 60, 30]
    const quadratic = [0, 0, 30, 60, 60, 0]
    const [polyline] = flattenPath(`M ${cubic.slice(0, 2).join(' ')} C ${cubic.slice(2).join(' ')}`, tolerance)
    const [polyQ] = flattenPath(`M 0 0 Q ${quadratic.slice(2).join(' ')} Z`, tolerance)
    const distanceTo = (points: Array<[number, number]>, [px, py]: [number, number]) =>
      Math.min(
        ...points.slice(1).map(([x2, y2], index) => {
          const [x1, y1] = points[index]!
          const t = Math.max(0, Math.min(1, ((px - x1) * (x2 - x1) + (py - y1) * (y2 - y1)) / ((x2 - x1) ** 2 + (y2 - y1) ** 2 || 1)))
          return Math.hypot(px - (x1 + t * (x2 - x1)), py - (y1 + t * (y2 - y1)))
        }),
      )
    for (let step = 0; step <= 1000; step++) {
      const t = step / 1000
      const u = 1 - t
      const c: [number, number] = [0, 1].map(
        (axis) => u ** 3 * cubic[axis]! + 3 * u * u * t * cubic[2 + axis]! + 3 * u * t * t * cubic[4 + axis]! + t ** 3 * cubic[6 + axis]!,
      ) as [number, number]
      const q: [number, number] = [0, 1].map((axis) => u * u * quadratic[axis]! + 2 * u * t * quadratic[2 + axis]! + t * t * quadratic[4 + axis]!) as [
        number,
        number,
      ]
      expect(distanceTo(polyline!, c)).toBeLessThanOrEqual(tolerance)
      expect(distanceTo(polyQ!, q)).toBeLessThanOrEqual(tolerance)
    }
    // Not needlessly fine either, and a closed path ends where it started.
    expect(polyline!.length).toBeLessThan(60)
    expect(polyQ!.at(-1)).toEqual([0, 0])
  })

  it('proofs the plotter letter at its sizes, strokes only', async () => {
    const pdf = await renderPlotterProof(designed({ card: 'A5', envelope: 'DL' }), settings.penWidth)
    const document = await PdfLib.load(pdf)
    expect(document.getPages().map(sizeOf)).toEqual([
      [expect.closeTo(210, 6), expect.closeTo(148, 6)],
      [expect.closeTo(220, 6), expect.closeTo(110, 6)],
    ])
    expect(pdf.includes('/DCTDecode')).toBe(false)
  })
})
