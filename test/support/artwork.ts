import { PDFDocument, rgb } from 'pdf-lib'
import sharp from 'sharp'
import { cardFormats, envelopeFormats, type CardFormat, type EnvelopeFormat } from '@letters/contracts'

/**
 * Artwork files for tests, made here with real encoders: an SVG of the card's size (with bleed
 * by default) in a colour of the caller's, a PNG of any size, a PDF page of any size.
 */
export function cardSvg(format: CardFormat = 'A6', options: { fill?: string; bleed?: boolean; extra?: string } = {}): string {
  const { width, height } = cardFormats[format]
  const bleed = options.bleed === false ? 0 : 3
  const w = width + 2 * bleed
  const h = height + 2 * bleed
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${w} ${h}" width="${w}mm" height="${h}mm">
  <rect width="${w}" height="${h}" fill="${options.fill ?? '#2e7d5b'}"/>
  <circle cx="${w / 2}" cy="${h / 2}" r="${h / 4}" fill="#f4d35e"/>${options.extra ?? ''}
</svg>`
}

/** A logo for an envelope's corner: any shape will do. */
export const logoSvg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 90 36"><rect x="2" y="2" width="32" height="32" rx="6" fill="#b03a2e"/><path d="M42 8 H88 M42 18 H80 M42 28 H70" stroke="#333" stroke-width="3"/></svg>`

/** A signature of paths, as a signature pad or a vector drawing tool exports it. */
export const signatureSvg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 120 40"><g stroke="#1a2a6c" fill="none" stroke-width="1.2">
  <path d="M10 30 C 20 5, 30 5, 35 30 M 18 20 L 30 20"/><path d="M40 30 C 45 15, 55 15, 58 30 S 70 40, 75 25"/><path d="M5 36 Q 60 30 115 34"/></g></svg>`

/** A PNG of any size: opaque in a colour, or (`alpha`) transparent with a dark stroke across it, as a signature is. */
export function pngOf(width: number, height: number, options: { alpha?: boolean; color?: string } = {}): Promise<Buffer> {
  const image = sharp({
    create: { width, height, channels: options.alpha ? 4 : 3, background: options.alpha ? { r: 20, g: 30, b: 90, alpha: 0 } : (options.color ?? '#3a6ea5') },
  })
  if (!options.alpha) return image.png().toBuffer()
  const stroke = Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><path d="M${width * 0.1} ${height * 0.6} L${width * 0.9} ${height * 0.4}" stroke="#1a2a6c" stroke-width="${Math.max(2, height / 20)}"/></svg>`,
  )
  return image
    .composite([{ input: stroke }])
    .png()
    .toBuffer()
}

const POINTS_PER_MM = 72 / 25.4

/** A one-page PDF of `width` × `height` mm, filled with a colour. */
export async function pdfOf(width: number, height: number): Promise<Buffer> {
  const document = await PDFDocument.create()
  const page = document.addPage([width * POINTS_PER_MM, height * POINTS_PER_MM])
  page.drawRectangle({ x: 0, y: 0, width: page.getWidth(), height: page.getHeight(), color: rgb(0.8, 0.3, 0.3) })
  return Buffer.from(await document.save({ useObjectStreams: false }))
}

export const sizeOf = (format: CardFormat | EnvelopeFormat) =>
  format in cardFormats ? cardFormats[format as CardFormat] : envelopeFormats[format as EnvelopeFormat]
