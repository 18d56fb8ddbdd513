import { execFileSync } from 'node:child_process'
import jsqr from 'jsqr'

// jsqr is CommonJS declaring a default export: imported from ESM, its default is the module, whose `default` is the reader.
const jsQR = jsqr.default

/** A PDF page as poppler draws it: its pixels (RGBA, row by row) and its resolution. */
export interface PagePixels {
  data: Uint8ClampedArray
  width: number
  height: number
  dpi: number
}

/**
 * Page `page` of a PDF drawn at `dpi` by pdftoppm, as a print shop's RIP or a phone's photo of it
 * sees the page. Read as a binary PPM, whose RGB pixels are a PNG's without the encoding and the
 * decoding, which took three times as long as the drawing; each pixel is given an opaque alpha.
 */
export async function pagePixels(pdf: Buffer | Uint8Array, page = 1, dpi = 300): Promise<PagePixels> {
  const ppm = execFileSync('pdftoppm', ['-r', String(dpi), '-f', String(page), '-l', String(page), '-singlefile', '-'], {
    input: pdf,
    maxBuffer: 256 * 1024 * 1024,
  })
  const header = /^P6\s+(\d+)\s+(\d+)\s+255\s/.exec(ppm.subarray(0, 64).toString('latin1'))
  if (!header) throw new Error(`pdftoppm wrote no 8-bit binary PPM: ${JSON.stringify(ppm.subarray(0, 16).toString('latin1'))}`)
  const width = Number(header[1])
  const height = Number(header[2])
  const rgb = ppm.subarray(header[0].length)
  if (rgb.length !== width * height * 3) throw new Error(`a ${width}×${height} PPM of ${rgb.length} bytes of pixels`)
  const data = new Uint8ClampedArray(width * height * 4)
  for (let from = 0, to = 0; from < rgb.length; from += 3, to += 4) {
    data[to] = rgb[from]!
    data[to + 1] = rgb[from + 1]!
    data[to + 2] = rgb[from + 2]!
    data[to + 3] = 255
  }
  return { data, width, height, dpi }
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
