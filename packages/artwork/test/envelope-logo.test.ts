import sharp from 'sharp'
import { describe, expect, test } from 'vitest'
import { LOGO_BOX_MM, logoBoxPx } from '../src/index.js'
import { envelopeLogo, expectAccepted, expectRefusal, headerOnlyPng, logoPdf, pixelAt, pngOf, svgDoc } from './fixtures.js'

async function expectLogoPng(print: Buffer, width: number, height: number) {
  const metadata = await sharp(print).metadata()
  expect(metadata).toMatchObject({ format: 'png', width, height, channels: 4, hasAlpha: true })
  expect(metadata.exif).toBeUndefined()
}

describe('envelope logo', () => {
  test('the logo box is 45 × 18 mm, 531 × 213 px at 300 dpi', () => {
    expect(LOGO_BOX_MM).toEqual({ width: 45, height: 18 })
    expect(logoBoxPx()).toEqual({ width: 531, height: 213 })
  })

  test('an SVG of any proportions is fitted in the box, its transparency kept', async () => {
    const wide = expectAccepted(await envelopeLogo('image/svg+xml', svgDoc('<circle cx="50" cy="20" r="15" fill="#063"/>', 'viewBox="0 0 100 40"')))
    await expectLogoPng(wide.print, 531, 212)
    expect((await pixelAt(wide.print, 2, 2))[3]).toBe(0)
    expect(await pixelAt(wide.print, 265, 106)).toEqual([0, 102, 51, 255])
    const tall = expectAccepted(await envelopeLogo('image/svg+xml', svgDoc('<rect width="10" height="30"/>', 'viewBox="0 0 10 30"')))
    await expectLogoPng(tall.print, 71, 213)
    // A print form under 1000 px wide is its own preview.
    expect((await sharp(wide.preview).metadata()).width).toBe(531)
  })

  test('a PNG is fitted in the box at 300 dpi', async () => {
    const result = expectAccepted(await envelopeLogo('image/png', await pngOf(900, 300, { alpha: 0 })))
    await expectLogoPng(result.print, 531, 177)
    expect((await pixelAt(result.print, 500, 170))[3]).toBe(0)
  })

  test('a PNG under 150 dpi over the box it fits is refused, saying which side and how many pixels', async () => {
    // 2,5:1 or wider fills the box's 45 mm width: 266 px at 150 dpi.
    expectRefusal(await envelopeLogo('image/png', await pngOf(200, 80)), 400, '200 × 80 px', '45 × 18 mm', '266 px de ancho', '150 ppp', '300 ppp')
    expectAccepted(await envelopeLogo('image/png', await pngOf(266, 80)))
    // Square fills the box's 18 mm height: 106 px at 150 dpi.
    expectRefusal(await envelopeLogo('image/png', await pngOf(100, 100)), 400, '100 × 100 px', '18 × 18 mm', '106 px de alto')
    expectAccepted(await envelopeLogo('image/png', await pngOf(106, 106)))
  })

  test('more than 40 megapixels is refused from the header', async () => {
    expectRefusal(await envelopeLogo('image/png', headerOnlyPng(10000, 5000)), 400, 'megapíxeles')
  })

  test('a PDF of any size is fitted in the box, what the page leaves unpainted transparent', async () => {
    const result = expectAccepted(await envelopeLogo('application/pdf', await logoPdf(100, 40)))
    await expectLogoPng(result.print, 531, 212)
    expect((await pixelAt(result.print, 2, 2))[3]).toBe(0)
    expect(await pixelAt(result.print, 265, 106)).toEqual([0, 0, 0, 255])
  })

  test('the same logo gives the same bytes', async () => {
    const svg = svgDoc('<circle cx="50" cy="20" r="15" fill="#063"/>', 'viewBox="0 0 100 40"')
    const first = expectAccepted(await envelopeLogo('image/svg+xml', svg))
    const second = expectAccepted(await envelopeLogo('image/svg+xml', svg))
    expect(second.print.equals(first.print)).toBe(true)
    const pdf = await logoPdf(100, 40)
    const third = expectAccepted(await envelopeLogo('application/pdf', pdf))
    const fourth = expectAccepted(await envelopeLogo('application/pdf', pdf))
    expect(fourth.print.equals(third.print)).toBe(true)
  })
})
