import sharp from 'sharp'
import { describe, expect, test } from 'vitest'
import { expectAccepted, expectRefusal, headerOnlyPng, pixelAt, pngOf, signature, svgDoc, transparentSignaturePng } from './fixtures.js'

const onlyAbsoluteCommands = /^(?:[MLCQZ][-0-9. e]*)+$/

describe('signature: SVG of paths', () => {
  test('transforms are applied and the viewBox moved to 0,0', async () => {
    const svg = svgDoc('<g transform="translate(5,5)"><path d="M10 20 h 10 v 10 z" transform="scale(2)"/></g>', 'viewBox="10 20 200 80"')
    const result = expectAccepted(await signature('image/svg+xml', svg))
    expect(result.signature).toEqual({ kind: 'paths', width: 200, height: 80, paths: ['M15 25L35 25L35 45Z'] })
  })

  test('relative, smooth and arc commands become absolute M, L, C, Q, Z', async () => {
    const svg = svgDoc(
      '<path d="m10 10 l 5 5 h 10 v -5 s 5 5 10 0 a 5 5 0 0 1 10 0 q 5 5 10 0 t 10 0 z"/><g transform="rotate(30 50 50)"><path d="M0 0 H 40 V 40"/></g>',
      'viewBox="0 0 100 60" width="50mm" height="30mm"',
    )
    const result = expectAccepted(await signature('image/svg+xml', svg))
    if (result.signature?.kind !== 'paths') throw new Error('expected paths')
    expect(result.signature.width).toBe(100)
    expect(result.signature.height).toBe(60)
    expect(result.signature.paths).toHaveLength(2)
    for (const path of result.signature.paths) expect(path).toMatch(onlyAbsoluteCommands)
    expect(result.signature.paths[0]).toMatch(/^M10 10L15 15L25 15L25 10C/)
    expect(result.signature.paths[0]).toContain('Q')
    // H and V under a rotation are lines to both coordinates.
    expect(result.signature.paths[1]).not.toMatch(/[HV]/)
  })

  test('the normalized paths draw what the original drew', async () => {
    const pen = 'fill="none" stroke="#000" stroke-width="0.4" stroke-linecap="round" stroke-linejoin="round"'
    const body =
      `<g transform="rotate(-10 50 30) translate(2 1)"><path ${pen} d="M12 60 c 10 -30 20 -30 25 0 s 15 20 20 -10 a 8 6 20 1 1 10 10 q 10 -20 25 -5 t 10 5"/></g>` +
      `<g transform="matrix(1 0 0.3 1 0 0)"><path ${pen} transform="rotate(15 40 45)" d="M20 40 H 60 V 50 h -30 z"/></g>`
    const original = svgDoc(body, 'viewBox="10 20 100 60"')
    const result = expectAccepted(await signature('image/svg+xml', original))
    const draw = async (svg: Buffer) => (await sharp(svg, { density: 720 }).extractChannel(3).raw().toBuffer({ resolveWithObject: true })).data
    const [expected, actual] = await Promise.all([draw(Buffer.from(original)), draw(result.print)])
    expect(actual.length).toBe(1000 * 600)
    let different = 0
    let inked = 0
    for (let index = 0; index < expected.length; index++) {
      if (Math.abs(expected[index]! - actual[index]!) > 96) different++
      if (expected[index]! > 128) inked++
    }
    expect(inked).toBeGreaterThan(5000)
    expect(different / inked).toBeLessThan(0.02)
  })

  test('the print form is a small SVG of the paths, and the preview draws them', async () => {
    const svg = svgDoc('<path d="M10 50 C 30 10, 60 90, 90 30" stroke="red"/>', 'viewBox="0 0 100 60"')
    const result = expectAccepted(await signature('image/svg+xml', svg))
    const print = result.print.toString('utf8')
    expect(print).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" width="100" height="60" viewBox="0 0 100 60">/)
    expect(print).toContain('<path d="M10 50C30 10 60 90 90 30"/>')
    expect(await sharp(result.print).metadata()).toMatchObject({ format: 'svg', width: 100, height: 60 })
    expect(await sharp(result.preview).metadata()).toMatchObject({ format: 'png', width: 1000, height: 600 })
    // The stroke passes through its start point; the corners stay clear.
    expect((await pixelAt(result.preview, 100, 500))[3]).toBeGreaterThan(200)
    expect((await pixelAt(result.preview, 990, 590))[3]).toBe(0)
  })

  test('what editors add without drawing is let through: title, desc, metadata, an empty defs, their own namespaces', async () => {
    const svg =
      '<svg xmlns="http://www.w3.org/2000/svg" xmlns:sodipodi="http://sodipodi.sourceforge.net/DTD/sodipodi-0.dtd" viewBox="0 0 100 40">' +
      '<title>Firma</title><desc>Ana</desc><defs id="defs1"/><sodipodi:namedview pagecolor="#fff"/><metadata><x xmlns="urn:x">y</x></metadata>' +
      '<g><path d="M0 0 L 10 10" style="display:none"/><path d="M5 5 L 50 20"/></g></svg>'
    const result = expectAccepted(await signature('image/svg+xml', svg))
    expect(result.signature).toEqual({ kind: 'paths', width: 100, height: 40, paths: ['M5 5L50 20'] })
  })

  test('other drawing elements are refused, listing what is allowed', async () => {
    for (const element of [
      '<rect width="5" height="5"/>',
      '<circle r="5"/>',
      '<text>Ana</text>',
      '<polyline points="0 0 5 5"/>',
      '<use href="#a"/>',
      '<svg/>',
    ]) {
      expectRefusal(
        await signature('image/svg+xml', svgDoc(`<path d="M0 0L5 5"/>${element}`, 'viewBox="0 0 100 40"')),
        400,
        '<path>',
        '<g>',
        '<title>',
        '<desc>',
      )
    }
    expectRefusal(
      await signature('image/svg+xml', svgDoc('<defs><path id="a" d="M0 0L5 5"/></defs><path d="M0 0L5 5"/>', 'viewBox="0 0 100 40"')),
      400,
      '<defs>',
    )
  })

  test('no path that draws anything is refused', async () => {
    expectRefusal(await signature('image/svg+xml', svgDoc('<title>vacía</title>', 'viewBox="0 0 100 40"')), 400, 'ningún trazo')
    expectRefusal(await signature('image/svg+xml', svgDoc('<path d="M10 10 M 20 20 Z"/><path d=""/>', 'viewBox="0 0 100 40"')), 400, 'no dibujan nada')
  })

  test('path data that is not valid is refused', async () => {
    expectRefusal(await signature('image/svg+xml', svgDoc('<path d="M10 10 L x y"/>', 'viewBox="0 0 100 40"')), 400, 'datos no válidos', 'línea 1')
  })

  test('the same rules as any SVG, and the same bytes each time', async () => {
    expectRefusal(await signature('image/svg+xml', svgDoc('<path d="M0 0L5 5"/><script>1</script>', 'viewBox="0 0 100 40"')), 400, '<script>')
    const svg = svgDoc('<path d="M10 50 a 20 10 30 0 1 40 0"/>', 'viewBox="0 0 100 60"')
    const first = expectAccepted(await signature('image/svg+xml', svg))
    const second = expectAccepted(await signature('image/svg+xml', svg))
    expect(second.print.equals(first.print)).toBe(true)
    expect(second.preview.equals(first.preview)).toBe(true)
  })
})

describe('signature: PNG', () => {
  test('a transparent PNG is re-encoded, no wider than 1200 px', async () => {
    const small = expectAccepted(await signature('image/png', await transparentSignaturePng(600, 200)))
    expect(small.signature).toEqual({ kind: 'image', width: 600, height: 200 })
    expect(await sharp(small.print).metadata()).toMatchObject({ format: 'png', width: 600, height: 200, hasAlpha: true })
    const large = expectAccepted(await signature('image/png', await transparentSignaturePng(2400, 800)))
    expect(large.signature).toEqual({ kind: 'image', width: 1200, height: 400 })
    expect(await sharp(large.print).metadata()).toMatchObject({ width: 1200, height: 400 })
    expect(await sharp(large.preview).metadata()).toMatchObject({ format: 'png', width: 1000, height: 333 })
  })

  test('metadata is stripped and the bytes are the same each time', async () => {
    const png = await sharp(await transparentSignaturePng(600, 200))
      .withMetadata({ exif: { IFD0: { Copyright: 'Ana' } } })
      .png()
      .toBuffer()
    expect((await sharp(png).metadata()).exif).toBeDefined()
    const first = expectAccepted(await signature('image/png', png))
    const second = expectAccepted(await signature('image/png', png))
    expect((await sharp(first.print).metadata()).exif).toBeUndefined()
    expect(second.print.equals(first.print)).toBe(true)
  })

  test('an opaque PNG is refused: no alpha channel, or one that is opaque everywhere', async () => {
    const opaque = await pngOf(600, 200)
    expect(opaque[25]).toBe(2)
    expectRefusal(await signature('image/png', opaque), 400, /^La firma debe tener fondo transparente/, 'no tiene canal alfa')
    expectRefusal(await signature('image/png', await pngOf(600, 200, { alpha: 1 })), 400, 'fondo transparente', 'todos sus píxeles son opacos')
  })

  test('narrower than 300 px, or over 40 megapixels, is refused', async () => {
    expectRefusal(await signature('image/png', await transparentSignaturePng(299, 100)), 400, '299 × 100 px', '300 px de ancho')
    expectRefusal(await signature('image/png', headerOnlyPng(10000, 10000)), 400, 'megapíxeles')
  })
})
