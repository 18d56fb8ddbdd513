import sharp from 'sharp'
import { describe, expect, test } from 'vitest'
import { cardFormats, envelopeFormats } from '@letters/contracts'
import { blankPreview, pdfPageToPng } from '../src/index.js'
import { runPoppler } from '../src/poppler.js'
import { decode } from '../src/raster.js'
import { pdfOf, pixelAt } from './fixtures.js'

describe('blankPreview', () => {
  test('an empty card at the size a real card front’s preview has, with a thin grey border', async () => {
    const png = await blankPreview(cardFormats.A6)
    expect(await sharp(png).metadata()).toMatchObject({ format: 'png', width: 1000, height: 709 })
    const [r, g, b] = await pixelAt(png, 0, 0)
    expect(r).toBe(g)
    expect(g).toBe(b)
    expect(r).toBeLessThan(220)
    expect(await pixelAt(png, 500, 350)).toEqual([255, 255, 255])
  })

  test('in the paper’s colour, for an envelope', async () => {
    const png = await blankPreview(envelopeFormats.DL, '#e8d9b5')
    expect(await sharp(png).metadata()).toMatchObject({ width: 1000, height: 500 })
    expect(await pixelAt(png, 500, 250)).toEqual([0xe8, 0xd9, 0xb5])
    expect(await pixelAt(await blankPreview({ width: 100, height: 200 }, '#f00'), 250, 500)).toEqual([255, 0, 0])
    expect((await sharp(await blankPreview({ width: 100, height: 200 })).metadata()).width).toBe(500)
  })

  test('a colour or size that is not one is a programming error', async () => {
    await expect(blankPreview(cardFormats.A6, 'red')).rejects.toThrow(TypeError)
    await expect(blankPreview(cardFormats.A6, '#fff" onload="x')).rejects.toThrow(TypeError)
    await expect(blankPreview({ width: 0, height: 10 })).rejects.toThrow(RangeError)
  })
})

describe('pdfPageToPng', () => {
  test('a page of a PDF, as a PNG thumbnail maxWidth wide', async () => {
    const pdf = await pdfOf(210, 297, { pages: 3 })
    const page2 = await pdfPageToPng(pdf, 2)
    if (!page2) throw new Error('page 2 exists')
    const metadata = await sharp(page2).metadata()
    expect(metadata).toMatchObject({ format: 'png', width: 1000 })
    // pdftoppm rounds the height up: 1000 × 297 / 210 = 1414,3.
    expect(metadata.height).toBe(1415)
    const small = await pdfPageToPng(pdf, 3, 300)
    if (!small) throw new Error('page 3 exists')
    expect(await sharp(small).metadata()).toMatchObject({ width: 300, height: 425 })
    const [r, , b] = await pixelAt(small, 50, 200)
    expect(r).toBeGreaterThan(180)
    expect(b).toBeLessThan(60)
  })

  test('a page that does not exist is undefined', async () => {
    const pdf = await pdfOf(148, 105, { pages: 2 })
    expect(await pdfPageToPng(pdf, 3)).toBeUndefined()
    expect(await pdfPageToPng(pdf, 0)).toBeUndefined()
    expect(await pdfPageToPng(pdf, 1.5)).toBeUndefined()
  })
})

describe('bounds on rasterizing', () => {
  test('a poppler process that outlives its timeout is killed', async () => {
    const pdf = await pdfOf(148, 105)
    const started = Date.now()
    const result = await runPoppler('pdftoppm', ['-png', '-r', '600', '-singlefile', '-'], pdf, 1)
    expect(result).toMatchObject({ ok: false, reason: 'timeout' })
    expect(Date.now() - started).toBeLessThan(1000)
  })

  test('a poppler failure is reported, not thrown', async () => {
    const result = await runPoppler('pdftoppm', ['-png', '-singlefile', '-'], Buffer.from('%PDF-1.7 nada'))
    expect(result).toMatchObject({ ok: false, reason: 'failed' })
  })

  test('sharp refuses to decode more than 40 megapixels', async () => {
    const big = await sharp({ create: { width: 8000, height: 5001, channels: 3, background: '#fff' } })
      .png({ compressionLevel: 1 })
      .toBuffer()
    await expect(decode(big).raw().toBuffer()).rejects.toThrow(/pixel limit/i)
  })
})
