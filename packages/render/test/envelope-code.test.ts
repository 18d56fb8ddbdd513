import { inflateSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { barWidths } from '@letters/test/support/barcode'
import { compact, pdfText, pdfTextBoxes } from '@letters/test/support/pdf'
import { code128Bars, describeLetter, renderCardSheets, renderEnvelope, renderEnvelopes, type LetterRecord } from '../src/index.js'
import { sampleRecipient } from '@letters/test/support/factories'

const MM = 72 / 25.4
const record: LetterRecord = {
  letterId: '3f0c6a52-8d0e-4c55-9d5e-5b1f0c1f2a10',
  code: 'BTC0VS66R9',
  fontName: 'caveat',
  message: '¡Hola, Lucía! Gracias por confiar en nosotros.',
  senderName: 'Papelería Luna',
  recipient: { ...sampleRecipient, countryName: 'España' },
  floorCountry: 'ES',
}
const abroad: LetterRecord = {
  ...record,
  recipient: { ...record.recipient, zip: '75001', city: 'Paris', province: null, country: 'FR', countryName: 'Francia' },
}

/** The rectangles a PDF's page streams fill (`x y w h re`), in pdfkit's top-left coordinates. */
function rectangles(pdf: Buffer): Array<{ x: number; y: number; width: number; height: number }> {
  const found = []
  const text = pdf.toString('latin1')
  for (const match of text.matchAll(/stream\r?\n/g)) {
    const start = match.index + match[0].length
    const end = text.indexOf('endstream', start)
    let content: string
    try {
      content = inflateSync(pdf.subarray(start, end)).toString('latin1')
    } catch {
      continue
    }
    for (const rect of content.matchAll(/(-?[\d.]+) (-?[\d.]+) (-?[\d.]+) (-?[\d.]+) re/g)) {
      found.push({ x: Number(rect[1]), y: Number(rect[2]), width: Number(rect[3]), height: Number(rect[4]) })
    }
  }
  return found
}

/** Straight 4 mm segments (`x y m x y l`): the crop marks. */
function cropMarks(pdf: Buffer): number {
  const text = pdf.toString('latin1')
  let count = 0
  for (const match of text.matchAll(/stream\r?\n/g)) {
    const start = match.index + match[0].length
    let content: string
    try {
      content = inflateSync(pdf.subarray(start, text.indexOf('endstream', start))).toString('latin1')
    } catch {
      continue
    }
    for (const [, x1, y1, x2, y2] of content.matchAll(/(-?[\d.]+) (-?[\d.]+) m\s+(-?[\d.]+) (-?[\d.]+) l/g)) {
      if (Math.abs(Math.hypot(Number(x2) - Number(x1), Number(y2) - Number(y1)) - 4 * MM) < 0.01) count++
    }
  }
  return count
}

const barModule = 0.3 * MM

describe('the code on every envelope', () => {
  it('draws the letter code as Code 128 bars that read back as the code, at the bottom left, clear of the address', async () => {
    const pdf = await renderEnvelope(describeLetter(record))
    const bars = rectangles(pdf).filter((rect) => Math.abs(rect.height - 10 * MM) < 0.01)
    expect(barWidths(bars, barModule)).toEqual(code128Bars(record.code))
    // Left of the recipient's block, which starts at 42% of the envelope's width.
    expect(Math.max(...bars.map((bar) => bar.x + bar.width))).toBeLessThan(162 * MM * 0.42)
    expect(Math.min(...bars.map((bar) => bar.x))).toBeGreaterThanOrEqual(10 * MM)
  })

  it('prints the same code in small print under the bars, away from the address', async () => {
    const [page] = await pdfTextBoxes(await renderEnvelope(describeLetter(record)))
    // Near the bottom edge (PDF coordinates grow upwards), under the bars, left of the address block.
    const small = page!.boxes.filter((box) => box.y < 15 * MM && box.x + box.width < 162 * MM * 0.42)
    expect(compact(small.map((box) => box.text).join(''))).toBe(record.code)
    expect(Math.min(...small.map((box) => box.y))).toBeGreaterThan(8 * MM)
    // And nowhere else: the address block does not carry it.
    expect(page!.boxes.filter((box) => !small.includes(box)).some((box) => box.text.includes(record.code.slice(0, 3)))).toBe(false)
  })

  it('gives different letters different bars', async () => {
    const other = await renderEnvelope(describeLetter({ ...record, code: 'Q90DQSTMNQ' }))
    expect(
      barWidths(
        rectangles(other).filter((rect) => Math.abs(rect.height - 10 * MM) < 0.01),
        barModule,
      ),
    ).toEqual(code128Bars('Q90DQSTMNQ'))
    expect(code128Bars('Q90DQSTMNQ')).not.toEqual(code128Bars(record.code))
  })
})

describe('the country line', () => {
  it('is left out when the letter stays in the floor country (ES to ES)', async () => {
    expect(describeLetter(record).recipientLines).toEqual(['Lucía García', 'Calle Mayor 1', '28013 Madrid'])
    const { text } = await pdfText(await renderEnvelope(describeLetter(record)))
    expect(text).not.toContain('España')
  })

  it('is written for a letter abroad', async () => {
    expect(describeLetter(abroad).recipientLines.at(-1)).toBe('Francia')
    expect((await pdfText(await renderEnvelope(describeLetter(abroad)))).text).toContain('Francia')
  })

  it('follows FLOOR_COUNTRY: a floor in Portugal writes España', () => {
    expect(describeLetter({ ...record, floorCountry: 'PT' }).recipientLines.at(-1)).toBe('España')
  })
})

describe('the files of a batch', () => {
  const batch = Array.from({ length: 5 }, (_, i) =>
    describeLetter({ ...record, letterId: `3f0c6a52-8d0e-4c55-9d5e-5b1f0c1f2a1${i}`, code: `BTC0VS66R${i}`, message: `Tarjeta número ${i}` }),
  )

  it('imposes the cards four to an A4 sheet in order, with crop marks', async () => {
    const pdf = await renderCardSheets(batch)
    const pages = await pdfTextBoxes(pdf)
    expect(pages.map((page) => [Math.round(page.width / MM), Math.round(page.height / MM)])).toEqual([
      [297, 210],
      [297, 210],
    ])
    const text = compact(pages.map((page) => page.boxes.map((box) => box.text).join('')).join(''))
    const at = batch.map((letter) => text.indexOf(compact(letter.message)))
    expect(at.every((position) => position >= 0)).toBe(true)
    expect([...at].sort((a, b) => a - b)).toEqual(at)
    // Two marks at each corner of each card: four cards on the first sheet, one on the second.
    expect(cropMarks(pdf)).toBe(8 * 5)
  })

  it('puts one envelope on each C6 page, in order, each with its own code', async () => {
    const pages = await pdfTextBoxes(await renderEnvelopes(batch))
    expect(pages).toHaveLength(5)
    pages.forEach((page, index) => {
      expect(Math.round(page.width / MM)).toBe(162)
      expect(compact(page.boxes.map((box) => box.text).join(''))).toContain(batch[index]!.code)
    })
  })

  it('draws each envelope of a batch as its own file draws it', async () => {
    const own = rectangles(await renderEnvelope(batch[2]!))
    const inBatch = rectangles(await renderEnvelopes([batch[2]!]))
    expect(inBatch).toEqual(own)
  })
})
