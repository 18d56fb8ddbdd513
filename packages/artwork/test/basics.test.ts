import { describe, expect, test } from 'vitest'
import { ARTWORK_MAX_BYTES } from '@letters/contracts'
import { inspectArtwork } from '../src/index.js'
import { cardFront, expectAccepted, expectRefusal, landscapeSvg, pdfOf, pngOf, signature } from './fixtures.js'

describe('what any upload must be', () => {
  test('a body over 20 MB is refused with 413, whatever it is', async () => {
    const big = Buffer.alloc(21 * 1024 * 1024, 0x20)
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(big)
    expectRefusal(await cardFront('image/png', big), 413, '21 MB', 'máximo es 20 MB')
    expectRefusal(await cardFront('image/jpeg', big), 413)
  })

  test('exactly 20 MB is not refused for its size', async () => {
    const limit = Buffer.alloc(ARTWORK_MAX_BYTES, 0x20)
    const result = await cardFront('image/png', limit)
    expect(result).toMatchObject({ refused: true, status: 400 })
  })

  test('an empty body is refused with 400', async () => {
    expectRefusal(await cardFront('image/png', Buffer.alloc(0)), 400, 'vacío')
  })

  test('a content type other than SVG, PDF or PNG is refused with 415', async () => {
    const png = await pngOf(1748, 1240)
    expectRefusal(await cardFront('image/jpeg', png), 415, '«image/jpeg»', 'image/svg+xml, application/pdf o image/png')
    expectRefusal(await cardFront('text/html', '<svg/>'), 415, '«text/html»')
    expectRefusal(await cardFront('', png), 415, '(vacío)')
  })

  test('parameters and capitals in the content type are ignored', async () => {
    const result = expectAccepted(await cardFront('Image/SVG+XML; charset=utf-8', landscapeSvg))
    expect(result.contentType).toBe('image/svg+xml')
  })

  test('bytes that are not what the content type says are refused with 400', async () => {
    const png = await pngOf(1748, 1240)
    const pdf = await pdfOf(148, 105)
    expectRefusal(await cardFront('image/png', pdf), 400, 'se ha enviado como image/png', 'parece un PDF', 'application/pdf')
    expectRefusal(await cardFront('application/pdf', png), 400, 'no es un PDF', 'parece un PNG')
    expectRefusal(await cardFront('image/svg+xml', png), 400, 'no es un SVG')
    expectRefusal(await cardFront('application/pdf', 'hola, esto no es un PDF'), 400, 'no empieza por «%PDF-»')
    expectRefusal(await cardFront('image/png', Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0, 0, 0, 0, 0])), 400, 'parece una imagen JPEG', 'Conviértelo')
    expectRefusal(await cardFront('image/svg+xml', Buffer.from('\ufeff<svg/>', 'utf16le')), 400, 'UTF-16')
  })

  test('the upload is counted and hashed as sent', async () => {
    const result = expectAccepted(await cardFront('image/svg+xml', landscapeSvg))
    expect(result.bytes).toBe(Buffer.byteLength(landscapeSvg))
    expect(result.sha256).toMatch(/^[0-9a-f]{64}$/)
    const { createHash } = await import('node:crypto')
    expect(result.sha256).toBe(createHash('sha256').update(landscapeSvg).digest('hex'))
    expect(result.signature).toBeNull()
  })

  test('a signature cannot be a PDF (415)', async () => {
    expectRefusal(await signature('application/pdf', await pdfOf(60, 20)), 415, 'no puede ser un PDF', 'SVG', 'PNG')
  })

  test('a Uint8Array that is a view into a larger buffer is read as just its bytes', async () => {
    const svg = Buffer.from(`xxxx${landscapeSvg}yyyy`)
    const view = new Uint8Array(svg.buffer, svg.byteOffset + 4, svg.length - 8)
    const result = expectAccepted(await inspectArtwork({ use: 'card-front', format: 'A6', contentType: 'image/svg+xml', data: view }))
    expect(result.bytes).toBe(Buffer.byteLength(landscapeSvg))
  })
})
