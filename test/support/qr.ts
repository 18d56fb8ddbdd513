import { execFileSync } from 'node:child_process'
import jsqr from 'jsqr'
import sharp from 'sharp'

// jsqr is CommonJS declaring a default export: imported from ESM, its default is the module, whose `default` is the reader.
const jsQR = jsqr.default

/** A PDF page as poppler draws it: its pixels (RGBA, row by row) and its resolution. */
export interface PagePixels {
  data: Uint8ClampedArray
  width: number
  height: number
  dpi: number
}

/** Page `page` of a PDF drawn at `dpi` by pdftoppm, as a print shop's RIP or a phone's photo of it sees the page. */
export async function pagePixels(pdf: Buffer | Uint8Array, page = 1, dpi = 300): Promise<PagePixels> {
  const png = execFileSync('pdftoppm', ['-png', '-r', String(dpi), '-f', String(page), '-l', String(page), '-singlefile', '-'], {
    input: pdf,
    maxBuffer: 256 * 1024 * 1024,
  })
  const { data, info } = await sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
  return { data: new Uint8ClampedArray(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height, dpi }
}

/** A point of a page, in millimetres from its top left corner. */
export interface PointMm {
  x: number
  y: number
}

/** A QR code read back from a page: its text, and the outer corners of its symbol (quiet zone excluded). */
export interface ReadQr {
  text: string
  corners: { topLeft: PointMm; topRight: PointMm; bottomLeft: PointMm; bottomRight: PointMm }
}

/** The QR code on a page, read by jsQR; null when it finds none. */
export function readQr(pixels: PagePixels): ReadQr | null {
  const code = jsQR(pixels.data, pixels.width, pixels.height, { inversionAttempts: 'dontInvert' })
  if (!code) return null
  const mm = (point: { x: number; y: number }): PointMm => ({ x: (point.x * 25.4) / pixels.dpi, y: (point.y * 25.4) / pixels.dpi })
  const { location } = code
  return {
    text: code.data,
    corners: {
      topLeft: mm(location.topLeftCorner),
      topRight: mm(location.topRightCorner),
      bottomLeft: mm(location.bottomLeftCorner),
      bottomRight: mm(location.bottomRightCorner),
    },
  }
}

/** The QR code on page `page` of a PDF drawn at 300 dpi. */
export async function readPdfQr(pdf: Buffer | Uint8Array, page = 1): Promise<ReadQr | null> {
  return readQr(await pagePixels(pdf, page))
}
