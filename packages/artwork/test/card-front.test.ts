import sharp from 'sharp'
import { describe, expect, test } from 'vitest'
import { cardFront, encryptedPdf, expectAccepted, expectRefusal, headerOnlyPng, landscapeSvg, pdfOf, pixelAt, pngOf, svgDoc } from './fixtures.js'

/** Every card front's print form is this: a baseline sRGB JPEG, 4:4:4, nothing else in it. */
async function expectCardJpeg(print: Buffer, width: number, height: number) {
  const metadata = await sharp(print).metadata()
  expect(metadata).toMatchObject({ format: 'jpeg', width, height, channels: 3, space: 'srgb', chromaSubsampling: '4:4:4' })
  expect(metadata.exif).toBeUndefined()
  expect(metadata.icc).toBeUndefined()
  expect(metadata.xmp).toBeUndefined()
}

/** No white pixel along any edge (the test PDFs are painted all over in red and blue). */
async function expectPaintedToTheEdges(print: Buffer) {
  const { data, info } = await sharp(print).raw().toBuffer({ resolveWithObject: true })
  const white = (x: number, y: number) => {
    const offset = (y * info.width + x) * info.channels
    return data[offset]! > 200 && data[offset + 1]! > 200 && data[offset + 2]! > 200
  }
  for (let x = 0; x < info.width; x++) expect(white(x, 0) || white(x, info.height - 1), `column ${x}`).toBe(false)
  for (let y = 0; y < info.height; y++) expect(white(0, y) || white(info.width - 1, y), `row ${y}`).toBe(false)
}

async function expectPreview(preview: Buffer, width: number, height: number) {
  const metadata = await sharp(preview).metadata()
  expect(metadata).toMatchObject({ format: 'png', width, height })
}

describe('card front: SVG', () => {
  test('an SVG with the card’s proportions prints at trim + bleed, 300 dpi, and previews the trim', async () => {
    const result = expectAccepted(await cardFront('image/svg+xml', landscapeSvg))
    await expectCardJpeg(result.print, 1819, 1311)
    await expectPreview(result.preview, 1000, 709)
    // The red sun (centre 110, 30 of 148 × 105) is where the artwork put it, in print and preview.
    const sunX = Math.round((110 / 148) * 1819)
    const sunY = Math.round((30 / 105) * 1311)
    const [r, g, b] = await pixelAt(result.print, sunX, sunY)
    expect(r).toBeGreaterThan(200)
    expect(g).toBeLessThan(80)
    expect(b).toBeLessThan(80)
    const [pr, pg, pb] = await pixelAt(result.preview, Math.round((110 / 148) * 1000), Math.round((30 / 105) * 709))
    expect(pr).toBeGreaterThan(200)
    expect(pg).toBeLessThan(80)
    expect(pb).toBeLessThan(80)
  })

  test('the same SVG gives the same bytes', async () => {
    const first = expectAccepted(await cardFront('image/svg+xml', landscapeSvg))
    const second = expectAccepted(await cardFront('image/svg+xml', landscapeSvg))
    expect(second.print.equals(first.print)).toBe(true)
    expect(second.preview.equals(first.preview)).toBe(true)
  })

  test('sized in millimetres, at trim + bleed, without a viewBox', async () => {
    const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="154mm" height="111mm"><rect width="10mm" height="111mm" fill="#000"/></svg>'
    const result = expectAccepted(await cardFront('image/svg+xml', svg))
    await expectCardJpeg(result.print, 1819, 1311)
    // 10 mm is drawn as 10 mm (CSS units, 118 px at 300 dpi), not librsvg's 72 dpi idea of it.
    expect((await pixelAt(result.print, 110, 600))[0]).toBeLessThan(40)
    expect((await pixelAt(result.print, 130, 600))[0]).toBeGreaterThan(200)
  })

  test('other card formats print at their own size', async () => {
    const a5 = expectAccepted(await cardFront('image/svg+xml', svgDoc('<rect width="210" height="148"/>', 'viewBox="0 0 210 148"'), 'A5'))
    await expectCardJpeg(a5.print, 2551, 1819)
    const fiveBySeven = expectAccepted(await cardFront('image/svg+xml', svgDoc('<rect width="7" height="5"/>', 'width="7in" height="5in"'), '5x7'))
    await expectCardJpeg(fiveBySeven.print, 2171, 1571)
  })

  test('proportions more than 2 % off the card’s are refused, giving both', async () => {
    const square = svgDoc('<rect width="100" height="100"/>', 'viewBox="0 0 100 100"')
    expectRefusal(await cardFront('image/svg+xml', square), 400, 'proporción', '1,00', '1,41', 'A6', '148 × 105 mm', '2 %')
    const portrait = svgDoc('<rect width="105" height="148"/>', 'width="105mm" height="148mm"')
    expectRefusal(await cardFront('image/svg+xml', portrait), 400, '0,71', '1,41')
    // Within 2 %: 150 × 105 is 1,43 against 1,41.
    expectAccepted(await cardFront('image/svg+xml', svgDoc('<rect width="150" height="105"/>', 'viewBox="0 0 150 105"')))
  })

  test('width and height decide the proportions when given, the viewBox otherwise', async () => {
    expectAccepted(
      await cardFront('image/svg+xml', svgDoc('<rect width="10" height="10"/>', 'width="148" height="105" viewBox="0 0 10 10" preserveAspectRatio="none"')),
    )
    expectAccepted(await cardFront('image/svg+xml', svgDoc('<rect width="148" height="105"/>', 'width="1480" viewBox="0 0 148 105"')))
  })
})

describe('card front: PNG', () => {
  test('a PNG at the trim size at 300 dpi, and one at trim + bleed, print at trim + bleed', async () => {
    for (const [width, height] of [
      [1748, 1240],
      [1819, 1311],
      [3496, 2480],
    ] as const) {
      const result = expectAccepted(await cardFront('image/png', await pngOf(width, height)))
      await expectCardJpeg(result.print, 1819, 1311)
      await expectPreview(result.preview, 1000, 709)
    }
  })

  test('too few pixels for 300 dpi over the trim is refused, with the numbers', async () => {
    expectRefusal(await cardFront('image/png', await pngOf(1000, 709)), 400, '1000 × 709 px', '300 ppp', '1748 × 1240 px', '1819 × 1311 px')
    expectRefusal(await cardFront('image/png', await pngOf(1747, 1240)), 400, '1747 × 1240 px')
  })

  test('proportions more than 2 % off both the trim’s and the trim + bleed’s are refused', async () => {
    expectRefusal(await cardFront('image/png', await pngOf(2000, 2000)), 400, '2000 × 2000 px', '1,00', '1,41', '1,39', 'sangrado')
    expectRefusal(await cardFront('image/png', await pngOf(1240, 1748)), 400, '0,71')
  })

  test('more than 40 megapixels is refused from the header alone, without decoding', async () => {
    // The file is only a header: decoding it would fail, so this refusal can only come from the header.
    const bomb = headerOnlyPng(10000, 10000)
    expect(bomb.length).toBeLessThan(100)
    expectRefusal(await cardFront('image/png', bomb), 400, '10.000 × 10.000 px', '100 megapíxeles', 'máximo es 40 megapíxeles')
  })

  test('a damaged PNG is refused, not thrown', async () => {
    const truncated = (await pngOf(1748, 1240)).subarray(0, 200)
    expectRefusal(await cardFront('image/png', truncated), 400, 'dañado')
    const badCrc = Buffer.from(await pngOf(1748, 1240))
    badCrc[20] = 0xff
    expectRefusal(await cardFront('image/png', badCrc), 400, 'IHDR')
  })

  test('transparency is flattened onto white', async () => {
    const result = expectAccepted(await cardFront('image/png', await pngOf(1748, 1240, { alpha: 0 })))
    expect(await pixelAt(result.print, 1800, 1300)).toEqual([255, 255, 255])
  })

  test('the same PNG gives the same bytes', async () => {
    const png = await pngOf(1800, 1277)
    const first = expectAccepted(await cardFront('image/png', png))
    const second = expectAccepted(await cardFront('image/png', png))
    expect(second.print.equals(first.print)).toBe(true)
    expect(second.preview.equals(first.preview)).toBe(true)
  })
})

describe('card front: PDF', () => {
  test('a page at the trim size and one at trim + bleed print at trim + bleed', async () => {
    for (const [width, height] of [
      [148, 105],
      [154, 111],
      [148.6, 104.5],
    ] as const) {
      const result = expectAccepted(await cardFront('application/pdf', await pdfOf(width, height)))
      await expectCardJpeg(result.print, 1819, 1311)
      await expectPreview(result.preview, 1000, 709)
      // Red on the left half, blue on the right, as drawn.
      const [lr, , lb] = await pixelAt(result.print, 400, 650)
      const [rr, , rb] = await pixelAt(result.print, 1400, 650)
      expect(lr).toBeGreaterThan(180)
      expect(lb).toBeLessThan(60)
      expect(rr).toBeLessThan(60)
      expect(rb).toBeGreaterThan(180)
    }
  })

  test('a page of another size is refused, with the size found and both sizes accepted', async () => {
    expectRefusal(await cardFront('application/pdf', await pdfOf(210, 297)), 400, '210 × 297 mm', '148 × 105 mm', '154 × 111 mm', 'sangrado', '1 mm')
    expectRefusal(await cardFront('application/pdf', await pdfOf(150, 105)), 400, '150 × 105 mm')
  })

  test('a portrait page of the right size is refused, saying so', async () => {
    expectRefusal(await cardFront('application/pdf', await pdfOf(105, 148)), 400, '105 × 148 mm', 'en vertical', 'Gira la página')
  })

  test('a portrait page turned by /Rotate is as it is seen: landscape', async () => {
    for (const rotate of [90, 270]) {
      const result = expectAccepted(await cardFront('application/pdf', await pdfOf(105, 148, { rotate })))
      await expectCardJpeg(result.print, 1819, 1311)
      await expectPaintedToTheEdges(result.print)
    }
  })

  test('an artwork with bleed reaches every edge of the print form: no white line where the page ends', async () => {
    for (const [width, height] of [
      [154, 111],
      [148, 105],
    ] as const) {
      await expectPaintedToTheEdges(expectAccepted(await cardFront('application/pdf', await pdfOf(width, height))).print)
    }
  })

  test('an encrypted PDF is refused', async () => {
    expectRefusal(await cardFront('application/pdf', await encryptedPdf()), 400, 'cifrado', 'contraseña')
  })

  test('a PDF pdf-lib cannot read is refused', async () => {
    expectRefusal(await cardFront('application/pdf', '%PDF-1.7\nesto no es un PDF\n%%EOF'), 400, 'No se puede leer el PDF')
  })

  test('the same PDF gives the same bytes', async () => {
    const pdf = await pdfOf(154, 111)
    const first = expectAccepted(await cardFront('application/pdf', pdf))
    const second = expectAccepted(await cardFront('application/pdf', pdf))
    expect(second.print.equals(first.print)).toBe(true)
    expect(second.preview.equals(first.preview)).toBe(true)
  })
})
