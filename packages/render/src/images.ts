import { createHash } from 'node:crypto'
import { deflateSync, inflateSync } from 'node:zlib'
import type PDFDocument from 'pdfkit'
import type { Size } from './geometry.js'

type PDFDoc = InstanceType<typeof PDFDocument>

/** An image a document holds: what placing it takes (pdfkit's `image` takes such an object as it is). */
export interface OpenedImage {
  width: number
  height: number
  label: string
}

declare global {
  namespace PDFKit.Mixins {
    interface PDFImage {
      openImage(src: Buffer): OpenedImage
      image(src: OpenedImage, x?: number, y?: number, options?: ImageOption): this
    }
    interface ImageOption {
      /** Ignore a JPEG's EXIF orientation: the artwork's print forms are upright as they are. */
      ignoreOrientation?: boolean
    }
  }
}

/** The bytes as a Buffer, not copied: pdfkit takes images as Buffers, and a letter from a render task holds plain Uint8Arrays. */
const bytesOf = (data: Uint8Array) => Buffer.from(data.buffer, data.byteOffset, data.byteLength)

const isPng = (data: Uint8Array) => data.byteLength >= 8 && bytesOf(data).readUInt32BE(0) === 0x89504e47

/**
 * The images of one document, each embedded once however many pages show it: a batch's cards
 * share their design's front, and its envelopes their logo (compared by content, since each
 * letter may carry its own copy of the bytes). A JPEG (a card's front) goes in as its own bytes
 * (DCT), never decoded: pdfkit only reads its header. A PNG (a logo, a signature's image) goes in
 * as preparedPng made it, once per process.
 */
export class DocumentImages {
  private readonly byLength = new Map<number, Array<{ data: Uint8Array; image: OpenedImage }>>()
  private pngs = 0

  constructor(
    private readonly doc: PDFDoc,
    images: Array<Uint8Array | null | undefined>,
  ) {
    for (const data of images) if (data && !this.find(data)) this.add(data)
  }

  private find(data: Uint8Array): OpenedImage | undefined {
    return this.byLength.get(data.byteLength)?.find((known) => known.data === data || bytesOf(known.data).equals(data))?.image
  }

  private add(data: Uint8Array): void {
    let image: OpenedImage
    if (isPng(data)) image = this.embedPng(preparedPng(data))
    else {
      image = this.doc.openImage(bytesOf(data))
      ;(image as OpenedImage & { embed(doc: PDFDoc): void }).embed(this.doc)
    }
    const known = this.byLength.get(data.byteLength) ?? []
    known.push({ data, image })
    this.byLength.set(data.byteLength, known)
  }

  /** A prepared PNG as an image XObject, with its alpha as a soft mask. Labelled apart from pdfkit's own (I1, I2…). */
  private embedPng(png: PreparedPng): OpenedImage {
    const image = { Type: 'XObject', Subtype: 'Image', Width: png.width, Height: png.height, BitsPerComponent: 8, Filter: 'FlateDecode' }
    let mask: PDFKit.PDFKitReference | undefined
    if (png.alpha) {
      mask = this.doc.ref({ ...image, ColorSpace: 'DeviceGray' })
      mask.end(png.alpha)
    }
    const obj = this.doc.ref({ ...image, ColorSpace: png.colorSpace, ...(mask ? { SMask: mask } : {}) })
    obj.end(png.colour)
    return Object.assign({ width: png.width, height: png.height, label: `P${++this.pngs}` }, { obj })
  }

  /** An image embedded before: a missing one is a mistake of the caller's, which lists what it draws. */
  get(data: Uint8Array): OpenedImage {
    const image = this.find(data)
    if (!image) throw new Error('an image was drawn that the document did not embed first')
    return image
  }
}

/** A PNG ready to embed: its colour and its alpha (null when opaque), each deflated. */
interface PreparedPng {
  width: number
  height: number
  colorSpace: 'DeviceRGB' | 'DeviceGray'
  colour: Buffer
  alpha: Buffer | null
}

/** Prepared PNGs by their bytes' hash: a campaign's envelopes all carry one logo. Bounded: past the limit it starts afresh. */
const prepared = new Map<string, PreparedPng>()
const PREPARED_LIMIT = 64

/**
 * A PNG's pixels split into colour and alpha and deflated, once per process for the same bytes.
 * pdfkit did this for every document (a logo cost an envelope 10 ms, three times its drawing),
 * and on zlib's thread pool, writing the image whenever that ended: a file with two such images
 * could come out in either order. This is synchronous. It reads the PNGs @letters/artwork makes
 * (8 bits a channel, not interlaced: grey, RGB, palette, with or without alpha) and refuses others.
 */
export function preparedPng(data: Uint8Array): PreparedPng {
  const key = createHash('sha1').update(data).digest('hex')
  let png = prepared.get(key)
  if (!png) {
    if (prepared.size >= PREPARED_LIMIT) prepared.clear()
    prepared.set(key, (png = preparePng(bytesOf(data))))
  }
  return png
}

/** Channels per pixel of each PNG colour type. */
const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }

function preparePng(png: Buffer): PreparedPng {
  const { width, height } = pngSize(png)
  const [bitDepth, colourType, , , interlace] = png.subarray(24, 29)
  const channels = CHANNELS[colourType!]
  if (bitDepth !== 8 || interlace !== 0 || !channels) throw new RangeError(`a PNG of colour type ${colourType}, ${bitDepth} bits, is not a print form`)
  const chunks: Buffer[] = []
  let palette: Buffer | undefined
  let transparency: Buffer | undefined
  for (let at = 8; at + 8 <= png.length;) {
    const length = png.readUInt32BE(at)
    const type = png.toString('latin1', at + 4, at + 8)
    const body = png.subarray(at + 8, at + 8 + length)
    if (type === 'IDAT') chunks.push(body)
    else if (type === 'PLTE') palette = body
    else if (type === 'tRNS') transparency = body
    at += 12 + length
  }
  const pixels = unfilter(inflateSync(Buffer.concat(chunks)), width, height, channels)
  const count = width * height
  const grey = colourType === 0 || colourType === 4
  const colour = Buffer.alloc(count * (grey ? 1 : 3))
  const alpha = Buffer.alloc(count, 255)
  for (let pixel = 0; pixel < count; pixel++) {
    const at = pixel * channels
    if (colourType === 3) {
      const index = pixels[at]!
      if (!palette) throw new RangeError('a palette PNG without its palette')
      palette.copy(colour, pixel * 3, index * 3, index * 3 + 3)
      if (transparency && index < transparency.length) alpha[pixel] = transparency[index]!
    } else if (grey) {
      colour[pixel] = pixels[at]!
      if (colourType === 4) alpha[pixel] = pixels[at + 1]!
    } else {
      pixels.copy(colour, pixel * 3, at, at + 3)
      if (colourType === 6) alpha[pixel] = pixels[at + 3]!
    }
  }
  const opaque = alpha.every((value) => value === 255)
  return { width, height, colorSpace: grey ? 'DeviceGray' : 'DeviceRGB', colour: deflateSync(colour), alpha: opaque ? null : deflateSync(alpha) }
}

/** A PNG's rows without their filters (PNG's five, by byte with `bpp` bytes a pixel). */
function unfilter(data: Buffer, width: number, height: number, bpp: number): Buffer {
  const stride = width * bpp
  if (data.length < (stride + 1) * height) throw new RangeError('a PNG with less image data than its size')
  const out = Buffer.alloc(stride * height)
  for (let row = 0; row < height; row++) {
    const filter = data[row * (stride + 1)]
    const source = row * (stride + 1) + 1
    const line = row * stride
    const previous = line - stride
    for (let x = 0; x < stride; x++) {
      const left = x >= bpp ? out[line + x - bpp]! : 0
      const up = row > 0 ? out[previous + x]! : 0
      const upLeft = row > 0 && x >= bpp ? out[previous + x - bpp]! : 0
      let predictor: number
      switch (filter) {
        case 0:
          predictor = 0
          break
        case 1:
          predictor = left
          break
        case 2:
          predictor = up
          break
        case 3:
          predictor = (left + up) >> 1
          break
        case 4: {
          const estimate = left + up - upLeft
          const [toLeft, toUp, toUpLeft] = [Math.abs(estimate - left), Math.abs(estimate - up), Math.abs(estimate - upLeft)]
          predictor = toLeft <= toUp && toLeft <= toUpLeft ? left : toUp <= toUpLeft ? up : upLeft
          break
        }
        default:
          throw new RangeError(`a PNG row with filter ${filter}`)
      }
      out[line + x] = (data[source + x]! + predictor) & 0xff
    }
  }
  return out
}

/** A PNG's size in pixels, from its header: the layout places a logo before any document holds it. */
export function pngSize(png: Uint8Array): Size {
  const view = bytesOf(png)
  if (view.length < 24 || !isPng(view) || view.toString('latin1', 12, 16) !== 'IHDR') throw new RangeError('not a PNG image')
  return { width: view.readUInt32BE(16), height: view.readUInt32BE(20) }
}

/** A `width` × `height` drawing fitted into `box` (points), its shape kept: the points per drawing unit. */
export function fitScale(drawing: Size, box: Size): number {
  return Math.min(box.width / drawing.width, box.height / drawing.height)
}
