import sharp, { type Sharp } from 'sharp'
import { MAX_PIXELS, RASTERIZE_TIMEOUT_MS, type SizePx } from './limits.js'
import { runPoppler } from './poppler.js'
import { num, refuse } from './refusal.js'
import { serializeSvg, type ParsedSvg } from './svg.js'

/** Every decode of a client's image goes through here, so none can expand past MAX_PIXELS. */
export function decode(data: Buffer, options: { density?: number } = {}): Sharp {
  return sharp(data, { limitInputPixels: MAX_PIXELS, ...options })
}

/**
 * librsvg, drawing at sharp's default 72 dpi, turns an SVG's mm and pt into too few user units
 * (10 mm becomes 28 px instead of CSS's 37.8). At 96 dpi its units are CSS's, as in a browser or
 * a layout program; sharp then scales the output by 96/72, which the root's size below undoes.
 */
const SVG_DENSITY = 96

/** Draws a checked SVG at exactly `size` pixels (its proportions are the caller's to keep). */
export function renderSvg(svg: ParsedSvg, size: SizePx): Sharp {
  const viewBox = svg.viewBox ?? { x: 0, y: 0, width: svg.size.width, height: svg.size.height }
  const scale = 72 / SVG_DENSITY
  const text = serializeSvg(svg.root, {
    width: String(size.width * scale),
    height: String(size.height * scale),
    viewBox: `${viewBox.x} ${viewBox.y} ${viewBox.width} ${viewBox.height}`,
  })
  // The rounding of librsvg's size can be a pixel off; the exact size is forced afterwards.
  return decode(Buffer.from(text, 'utf8'), { density: SVG_DENSITY })
}

/** Draws a client's image (through `make`), turning a decoder's failure into a refusal that names the file. */
export async function drawOrRefuse(what: string, make: () => Promise<Buffer>): Promise<Buffer> {
  try {
    return await make()
  } catch (error) {
    const message = error instanceof Error ? error.message : ''
    if (/pixel limit/i.test(message)) refuse(`${what} supera el máximo de ${num(MAX_PIXELS / 1e6)} megapíxeles.`)
    refuse(`No se ha podido dibujar ${what}: el archivo está dañado o usa funciones que no se admiten. Expórtalo de nuevo.`)
  }
}

/** The card front's print form: `image` scaled to cover `target`, centred, on white, as a JPEG. */
export function toCardJpeg(image: Sharp, target: SizePx): Promise<Buffer> {
  return (
    image
      .resize(target.width, target.height, { fit: 'cover', position: 'centre' })
      .flatten({ background: '#ffffff' })
      .toColourspace('srgb')
      // 4:4:4 keeps thin coloured lines and small type in the artwork sharp; no metadata is written.
      .jpeg({ quality: 90, chromaSubsampling: '4:4:4' })
      .toBuffer()
  )
}

/** A transparent PNG of exactly `size`: the logo's and the signature image's print form. */
export function toTransparentPng(image: Sharp, size: SizePx): Promise<Buffer> {
  return image.resize(size.width, size.height, { fit: 'fill' }).ensureAlpha().toColourspace('srgb').png({ compressionLevel: 9 }).toBuffer()
}

/**
 * The first page of an uploaded PDF as a PNG of exactly `size` (the page's proportions are the
 * caller's to keep). pdftoppm scaled to a pixel size rather than given a resolution, so the page
 * ends on a pixel's edge: a resolution leaves a last row and column partly off the page, drawn
 * as a white line. With `transparent`, pdftocairo, which keeps what the page leaves unpainted
 * transparent (pdftoppm paints it white).
 */
export async function renderPdfFirstPage(data: Uint8Array, size: SizePx, options: { transparent?: boolean; quarterTurned?: boolean } = {}): Promise<Buffer> {
  // poppler scales the page before turning it by its /Rotate.
  const [x, y] = options.quarterTurned ? [size.height, size.width] : [size.width, size.height]
  const scale = ['-scale-to-x', String(x), '-scale-to-y', String(y)]
  const result = options.transparent
    ? await runPoppler('pdftocairo', ['-png', '-transp', '-f', '1', '-l', '1', '-cropbox', '-singlefile', ...scale, '-', '-'], data)
    : await runPoppler('pdftoppm', ['-png', '-f', '1', '-l', '1', '-cropbox', '-singlefile', ...scale, '-'], data)
  if (result.ok) return result.stdout
  if (result.reason === 'timeout')
    refuse(
      `El PDF tarda demasiado en dibujarse (más de ${num(RASTERIZE_TIMEOUT_MS / 1000)} s): simplifícalo (aplana transparencias y efectos, reduce las imágenes) o envíalo como PNG.`,
    )
  refuse(
    'No se ha podido dibujar la primera página del PDF: está dañado o usa funciones que no se admiten. Expórtalo de nuevo (PDF/X o PDF estándar) o envíalo como PNG.',
  )
}
