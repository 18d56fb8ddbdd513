import { crc32 } from 'node:zlib'
import { PDFDocument, degrees, rgb } from 'pdf-lib'
import PDFKit from 'pdfkit'
import sharp from 'sharp'
import { expect } from 'vitest'
import type { CardFormat } from '@letters/contracts'
import { inspectArtwork, isRefusal, type Inspected, type Refusal } from '../src/index.js'

export const MM_TO_PT = 72 / 25.4

/** An SVG document with the SVG and XLink namespaces bound, `attributes` on its root. */
export function svgDoc(body: string, attributes = 'viewBox="0 0 148 105"'): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" ${attributes}>${body}</svg>`
}

/** A card front drawn in SVG: a blue sky over green grass, a red sun, a black frame at the trim. */
export const landscapeSvg = svgDoc(
  '<rect width="148" height="105" fill="#4a90d9"/><rect y="65" width="148" height="40" fill="#3c9a3c"/><circle cx="110" cy="30" r="15" fill="#e03030"/><rect x="2" y="2" width="144" height="101" fill="none" stroke="#000" stroke-width="1"/>',
)

const toBuffer = (data: string | Buffer) => (typeof data === 'string' ? Buffer.from(data, 'utf8') : data)

export function cardFront(contentType: string, data: string | Buffer, format: CardFormat = 'A6') {
  return inspectArtwork({ use: 'card-front', format, contentType, data: toBuffer(data) })
}

export function envelopeLogo(contentType: string, data: string | Buffer) {
  return inspectArtwork({ use: 'envelope-logo', format: 'C6', contentType, data: toBuffer(data) })
}

export function signature(contentType: string, data: string | Buffer) {
  return inspectArtwork({ use: 'signature', format: null, contentType, data: toBuffer(data) })
}

/** A PNG of `width` × `height`: a gradient-free fill with a black square top-left, RGB or (with `alpha`) RGBA. */
export async function pngOf(width: number, height: number, options: { alpha?: number; background?: string } = {}): Promise<Buffer> {
  const channels = options.alpha === undefined ? 3 : 4
  const background = options.alpha === undefined ? (options.background ?? '#d94a4a') : { r: 30, g: 30, b: 30, alpha: options.alpha }
  const mark = await sharp({
    create: { width: Math.max(1, Math.floor(width / 4)), height: Math.max(1, Math.floor(height / 4)), channels: 4, background: '#000000ff' },
  })
    .png()
    .toBuffer()
  const image = sharp({ create: { width, height, channels, background } }).composite([{ input: mark, left: 0, top: 0 }])
  // Compositing adds an alpha channel; an opaque PNG must have none (colour type 2).
  return (options.alpha === undefined ? sharp(await image.png().toBuffer()).removeAlpha() : image).png().toBuffer()
}

/** A transparent PNG with a dark stroke across it: a signature as a scanner app exports one. */
export async function transparentSignaturePng(width: number, height: number): Promise<Buffer> {
  const stroke = Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><path d="M${width * 0.05} ${height * 0.7} C ${width * 0.3} ${height * 0.1}, ${width * 0.5} ${height * 0.9}, ${width * 0.95} ${height * 0.3}" stroke="#123" stroke-width="${Math.max(2, height / 20)}" fill="none"/></svg>`,
  )
  return sharp(stroke).png().toBuffer()
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(body))
  return Buffer.concat([length, body, crc])
}

/** A PNG that is only a header claiming `width` × `height` (no image data): decoding it would fail. */
export function headerOnlyPng(width: number, height: number, colorType = 6): Buffer {
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr[8] = 8
  ihdr[9] = colorType
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IEND', Buffer.alloc(0))])
}

/** A one-page PDF of `widthMm` × `heightMm`: red on the left half, blue on the right. */
export async function pdfOf(widthMm: number, heightMm: number, options: { rotate?: number; pages?: number } = {}): Promise<Buffer> {
  const doc = await PDFDocument.create()
  // Fixed dates, so the same PDF is the same bytes.
  doc.setCreationDate(new Date('2024-01-01T00:00:00Z'))
  doc.setModificationDate(new Date('2024-01-01T00:00:00Z'))
  const width = widthMm * MM_TO_PT
  const height = heightMm * MM_TO_PT
  for (let index = 0; index < (options.pages ?? 1); index++) {
    const page = doc.addPage([width, height])
    page.drawRectangle({ x: 0, y: 0, width: width / 2, height, color: rgb(0.85, 0.1, 0.1) })
    page.drawRectangle({ x: width / 2, y: 0, width: width / 2, height, color: rgb(0.1, 0.2, 0.85) })
    if (options.rotate) page.setRotation(degrees(options.rotate))
  }
  return Buffer.from(await doc.save())
}

/** A logo PDF: a black circle on an otherwise unpainted page. */
export async function logoPdf(widthMm: number, heightMm: number): Promise<Buffer> {
  const doc = await PDFDocument.create()
  const width = widthMm * MM_TO_PT
  const height = heightMm * MM_TO_PT
  const page = doc.addPage([width, height])
  page.drawCircle({ x: width / 2, y: height / 2, size: height / 3, color: rgb(0, 0, 0) })
  return Buffer.from(await doc.save())
}

/** A real encrypted PDF (RC4/AES with a user password), as pdfkit writes one. */
export function encryptedPdf(): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const doc = new PDFKit({ size: [148 * MM_TO_PT, 105 * MM_TO_PT], userPassword: 'x', ownerPassword: 'y' })
    const chunks: Buffer[] = []
    doc.on('data', (data: Buffer) => chunks.push(data))
    doc.on('end', () => resolve(Buffer.concat(chunks)))
    doc.on('error', reject)
    doc.text('Tarjeta secreta')
    doc.end()
  })
}

const englishWords = /\b(the|must|is not|should|file|image|expected|invalid|error|too|allowed)\b/i
const spanishWords = /\b(el|la|los|las|de|debe|no|se|un|una|con|es)\b/i

/** Asserts a refusal with `status` whose message is Spanish and contains each of `fragments`. */
export function expectRefusal(result: Inspected | Refusal, status: Refusal['status'], ...fragments: Array<string | RegExp>): Refusal {
  if (!isRefusal(result)) throw new Error(`expected a refusal ${status}, got an accepted artwork`)
  expect(result.status, result.message).toBe(status)
  expect(result.message).toMatch(spanishWords)
  // The client's own text (quoted in «»), element names and MIME types may be English; the message around them is not.
  const prose = result.message
    .replace(/«[^»]*»/g, '')
    .replace(/<[^>]*>/g, '')
    .replace(/\b[a-z]+\/[a-z+.-]+/g, '')
  expect(prose).not.toMatch(englishWords)
  for (const fragment of fragments) {
    if (typeof fragment === 'string') expect(result.message).toContain(fragment)
    else expect(result.message).toMatch(fragment)
  }
  return result
}

export function expectAccepted(result: Inspected | Refusal): Inspected {
  if (isRefusal(result)) throw new Error(`expected an accepted artwork, refused ${result.status}: ${result.message}`)
  return result
}

export async function pixelAt(image: Buffer, x: number, y: number): Promise<number[]> {
  const { data, info } = await sharp(image).raw().toBuffer({ resolveWithObject: true })
  const offset = (y * info.width + x) * info.channels
  return [...data.subarray(offset, offset + info.channels)]
}
