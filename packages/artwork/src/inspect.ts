import { createHash } from 'node:crypto'
import {
  ARTWORK_MAX_BYTES,
  artworkContentTypes,
  BLEED_MM,
  envelopeFormats,
  mediaType,
  type ArtworkContentType,
  type CardFormat,
  type EnvelopeFormat,
  type SignatureDrawing,
  type SizeMm,
} from '@letters/contracts'
import {
  cardBleedMm,
  cardPrintPx,
  cardTrimMm,
  cardTrimPx,
  coverSize,
  fitInside,
  LOGO_BOX_MM,
  LOGO_MIN_DPI,
  logoBoxPx,
  mmToPx,
  PDF_SIZE_TOLERANCE_MM,
  PRINT_DPI,
  RATIO_TOLERANCE,
  ratioMatches,
  SIGNATURE_MAX_WIDTH_PX,
  SIGNATURE_MIN_WIDTH_PX,
  type SizePx,
} from './limits.js'
import { loadUploadedPdf } from './pdf.js'
import { PNG_SIGNATURE, pngMayBeTransparent, readPngHeader } from './png.js'
import { previewPng } from './preview.js'
import { decode, drawOrRefuse, renderPdfFirstPage, renderSvg, toCardJpeg, toTransparentPng } from './raster.js'
import { mm, num, px, ratio, refusal, RefusedError, refuse, type Refusal } from './refusal.js'
import { signaturePaths, signatureSvg } from './signature.js'
import { parseSvg } from './svg.js'

export type InspectInput = { contentType: string; data: Uint8Array } & (
  { use: 'card-front'; format: CardFormat } | { use: 'envelope-logo'; format: EnvelopeFormat } | { use: 'signature'; format: null }
)

/** An accepted upload: what to keep of it, and the forms it is printed and shown in. */
export interface Inspected {
  contentType: ArtworkContentType
  /** The upload's size and hash, as the API reports the version. */
  bytes: number
  sha256: string
  /**
   * What production prints, made once here: the card front's JPEG (trim + bleed at 300 dpi), the
   * logo's transparent PNG (fitted in LOGO_BOX_MM at 300 dpi), or the signature's SVG of paths or PNG.
   */
  print: Buffer
  /** The signature's drawing (for the renderer), null for other uses. */
  signature: SignatureDrawing | null
  /** A PNG at most 1000 px wide, for the dashboard. */
  preview: Buffer
}

const kinds: Record<ArtworkContentType, string> = { 'image/svg+xml': 'un SVG', 'application/pdf': 'un PDF', 'image/png': 'un PNG' }

/**
 * Checks an uploaded artwork against what its use needs, with real parsers and before anything is
 * rasterized, and makes its print form and preview. A client's mistake is a Refusal (in Spanish,
 * saying what is wrong and what is expected); only our own faults throw.
 */
export async function inspectArtwork(input: InspectInput): Promise<Inspected | Refusal> {
  const data = Buffer.isBuffer(input.data) ? input.data : Buffer.from(input.data.buffer, input.data.byteOffset, input.data.byteLength)
  if (data.length > ARTWORK_MAX_BYTES)
    return refusal(413, `El archivo ocupa ${num(data.length / 1024 / 1024, 1)} MB: el máximo es ${num(ARTWORK_MAX_BYTES / 1024 / 1024)} MB.`)
  if (data.length === 0) return refusal(400, 'El archivo está vacío: envía un SVG, un PDF o un PNG.')
  // A request without the header arrives as undefined whatever the type says.
  const declared = String(input.contentType ?? '').trim()
  const contentType = normalizeContentType(declared)
  if (!contentType)
    return refusal(
      415,
      `El tipo de contenido ${declared ? `«${declared.slice(0, 80)}»` : '(vacío)'} no se admite: envía el archivo como image/svg+xml, application/pdf o image/png.`,
    )
  const sniffed = sniff(data)
  if (sniffed !== contentType) return refusal(400, mismatchMessage(contentType, sniffed))
  if (input.use === 'signature' && contentType === 'application/pdf')
    return refusal(415, 'Una firma no puede ser un PDF: envíala como SVG de trazos (elementos <path>) o como PNG con fondo transparente.')

  try {
    const made = await make(input, contentType, data)
    return { contentType, bytes: data.length, sha256: createHash('sha256').update(data).digest('hex'), ...made }
  } catch (error) {
    if (error instanceof RefusedError) return error.refusal
    throw error
  }
}

type Made = Pick<Inspected, 'print' | 'signature' | 'preview'>

function make(input: InspectInput, contentType: ArtworkContentType, data: Buffer): Promise<Made> {
  switch (input.use) {
    case 'card-front':
      return cardFront(input.format, contentType, data)
    case 'envelope-logo':
      if (!envelopeFormats[input.format]) throw new TypeError(`Unknown envelope format: ${String(input.format)}`)
      return envelopeLogo(contentType, data)
    case 'signature':
      return signature(contentType, data)
  }
}

async function cardFront(format: CardFormat, contentType: ArtworkContentType, data: Buffer): Promise<Made> {
  const trim = cardTrimMm(format)
  const bleed = cardBleedMm(format)
  const target = cardPrintPx(format)
  const card = `una tarjeta ${format} (${mm(trim)})`
  const trimRatio = trim.width / trim.height
  let print: Buffer

  switch (contentType) {
    case 'image/svg+xml': {
      const svg = await parseSvg(data)
      const found = svg.size.width / svg.size.height
      if (!ratioMatches(found, trimRatio))
        refuse(
          `El SVG tiene una proporción (ancho/alto) de ${ratio(found)} y ${card} la tiene de ${ratio(trimRatio)}: deben coincidir con un margen del ${num(RATIO_TOLERANCE * 100)} %. Ajusta el documento a ${mm(trim)}, o a ${mm(bleed)} con ${num(BLEED_MM)} mm de sangrado por lado.`,
        )
      print = await drawOrRefuse('el SVG', () => toCardJpeg(renderSvg(svg, coverSize(svg.size, target)), target))
      break
    }
    case 'image/png': {
      const header = readPngHeader(data)
      const found = header.width / header.height
      const bleedRatio = bleed.width / bleed.height
      if (!ratioMatches(found, trimRatio) && !ratioMatches(found, bleedRatio))
        refuse(
          `La imagen mide ${px(header)} (proporción ${ratio(found)}); ${card} tiene una proporción de ${ratio(trimRatio)}, o ${ratio(bleedRatio)} con ${num(BLEED_MM)} mm de sangrado por lado (${mm(bleed)}): debe coincidir con una de ellas con un margen del ${num(RATIO_TOLERANCE * 100)} %.`,
        )
      const least = cardTrimPx(format)
      if (header.width < least.width || header.height < least.height)
        refuse(
          `La imagen mide ${px(header)}: para imprimir ${card} a ${PRINT_DPI} ppp hacen falta al menos ${px(least)} (${px(target)} con ${num(BLEED_MM)} mm de sangrado por lado). Envíala con más resolución o como SVG o PDF.`,
        )
      print = await drawOrRefuse('el PNG', () => toCardJpeg(decode(data), target))
      break
    }
    case 'application/pdf': {
      const page = await loadUploadedPdf(data)
      const found = { width: page.widthMm, height: page.heightMm }
      if (!near(found, trim) && !near(found, bleed)) {
        const turned = near({ width: found.height, height: found.width }, trim) || near({ width: found.height, height: found.width }, bleed)
        refuse(
          `La primera página del PDF mide ${mm(found)}${turned ? ' (en vertical)' : ''}; para ${card} se admite ${mm(trim)} (tamaño final) o ${mm(bleed)} (con ${num(BLEED_MM)} mm de sangrado por lado), en horizontal, con un margen de ${num(PDF_SIZE_TOLERANCE_MM)} mm.${turned ? ' Gira la página a horizontal.' : ''}`,
        )
      }
      // Rendered just large enough to cover the print form, so it is only ever cropped, not scaled up.
      const raster = await renderPdfFirstPage(data, coverSize({ width: page.widthPt, height: page.heightPt }, target), { quarterTurned: page.quarterTurned })
      print = await toCardJpeg(decode(raster), target)
      break
    }
  }

  // The preview shows the card as cut: the trim, centred in the print form.
  const trimPx = cardTrimPx(format)
  const preview = await previewPng(
    decode(print).extract({
      left: Math.floor((target.width - trimPx.width) / 2),
      top: Math.floor((target.height - trimPx.height) / 2),
      width: trimPx.width,
      height: trimPx.height,
    }),
  )
  return { print, signature: null, preview }
}

async function envelopeLogo(contentType: ArtworkContentType, data: Buffer): Promise<Made> {
  const box = logoBoxPx()
  let print: Buffer
  switch (contentType) {
    case 'image/svg+xml': {
      const svg = await parseSvg(data)
      const size = fitInside(svg.size, box)
      print = await drawOrRefuse('el SVG', () => toTransparentPng(renderSvg(svg, size), size))
      break
    }
    case 'image/png': {
      const header = readPngHeader(data)
      // The logo is fitted in the box: a wide logo fills its width, a tall one its height.
      const wide = header.width / header.height >= LOGO_BOX_MM.width / LOGO_BOX_MM.height
      const printed: SizeMm = wide
        ? { width: LOGO_BOX_MM.width, height: (LOGO_BOX_MM.width * header.height) / header.width }
        : { width: (LOGO_BOX_MM.height * header.width) / header.height, height: LOGO_BOX_MM.height }
      const least = wide ? mmToPx(printed.width, LOGO_MIN_DPI) : mmToPx(printed.height, LOGO_MIN_DPI)
      if ((wide ? header.width : header.height) < least)
        refuse(
          `El logo mide ${px(header)}: se imprime a ${mm(printed)} (ajustado a la caja del logo, de ${mm(LOGO_BOX_MM, 0)}) y a esa medida necesita al menos ${num(least)} px de ${wide ? 'ancho' : 'alto'} (${LOGO_MIN_DPI} ppp; lo ideal son ${PRINT_DPI} ppp, ${px(fitInside(header, box))}). Envíalo con más resolución o como SVG o PDF.`,
        )
      print = await drawOrRefuse('el PNG', () => toTransparentPng(decode(data), fitInside(header, box)))
      break
    }
    case 'application/pdf': {
      const page = await loadUploadedPdf(data)
      const size = fitInside({ width: page.widthPt, height: page.heightPt }, box)
      const raster = await renderPdfFirstPage(data, size, { transparent: true, quarterTurned: page.quarterTurned })
      print = await toTransparentPng(decode(raster), size)
      break
    }
  }
  return { print, signature: null, preview: await previewPng(decode(print)) }
}

async function signature(contentType: ArtworkContentType, data: Buffer): Promise<Made> {
  switch (contentType) {
    case 'image/svg+xml': {
      const paths = signaturePaths(await parseSvg(data))
      const print = Buffer.from(signatureSvg(paths), 'utf8')
      const shown = fitInside(paths, { width: 1000, height: 1000 })
      const preview = await previewPng(decode(Buffer.from(signatureSvg(paths, shown), 'utf8')))
      return { print, signature: paths, preview }
    }
    case 'image/png': {
      const header = readPngHeader(data)
      if (!pngMayBeTransparent(header))
        refuse('La firma debe tener fondo transparente: el PNG no tiene canal alfa ni color transparente. Expórtala como PNG con transparencia (RGBA).')
      if (header.width < SIGNATURE_MIN_WIDTH_PX)
        refuse(`La firma mide ${px(header)}: debe tener al menos ${num(SIGNATURE_MIN_WIDTH_PX)} px de ancho para imprimirse nítida.`)
      const stats = await drawOrRefuse('el PNG', async () => {
        const { channels } = await decode(data).ensureAlpha().stats()
        const alpha = channels[channels.length - 1]
        return Buffer.from([alpha?.min ?? 255, alpha?.max ?? 255])
      })
      // An alpha channel that is opaque everywhere is a white (or coloured) background all the same.
      if (stats[0] === 255) refuse('La firma debe tener fondo transparente: el PNG tiene canal alfa, pero todos sus píxeles son opacos. Quita el fondo.')
      // One transparent everywhere would sign the card with nothing at all.
      if (stats[1] === 0) refuse('La firma no tiene ningún trazo visible: todos los píxeles del PNG son transparentes.')
      const size: SizePx =
        header.width > SIGNATURE_MAX_WIDTH_PX
          ? { width: SIGNATURE_MAX_WIDTH_PX, height: Math.max(1, Math.round((header.height * SIGNATURE_MAX_WIDTH_PX) / header.width)) }
          : { width: header.width, height: header.height }
      const print = await drawOrRefuse('el PNG', () => toTransparentPng(decode(data), size))
      return { print, signature: { kind: 'image', width: size.width, height: size.height }, preview: await previewPng(decode(print)) }
    }
    case 'application/pdf':
      // Refused before anything is parsed; kept here so every content type is handled.
      refuse('Una firma no puede ser un PDF: envíala como SVG de trazos o como PNG con fondo transparente.', 415)
  }
}

function near(found: SizeMm, expected: SizeMm): boolean {
  return Math.abs(found.width - expected.width) <= PDF_SIZE_TOLERANCE_MM && Math.abs(found.height - expected.height) <= PDF_SIZE_TOLERANCE_MM
}

/** The declared type, if it is an artwork's. */
function normalizeContentType(value: string): ArtworkContentType | null {
  const type = mediaType(value)
  return (artworkContentTypes as readonly string[]).includes(type) ? (type as ArtworkContentType) : null
}

type Sniffed = ArtworkContentType | 'jpeg' | 'gif' | 'webp' | 'utf16' | null

/** What the bytes are, from their first bytes: the content type is the client's claim, this is the file's. */
function sniff(data: Buffer): Sniffed {
  if (data.subarray(0, 8).equals(PNG_SIGNATURE)) return 'image/png'
  if (data.subarray(0, 5).toString('latin1') === '%PDF-') return 'application/pdf'
  if (data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'jpeg'
  if (data.subarray(0, 4).toString('latin1') === 'GIF8') return 'gif'
  if (data.subarray(0, 4).toString('latin1') === 'RIFF' && data.subarray(8, 12).toString('latin1') === 'WEBP') return 'webp'
  if ((data[0] === 0xfe && data[1] === 0xff) || (data[0] === 0xff && data[1] === 0xfe)) return 'utf16'
  let start = data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf ? 3 : 0
  while (start < data.length && (data[start] === 0x20 || data[start] === 0x09 || data[start] === 0x0a || data[start] === 0x0d)) start++
  return data[start] === 0x3c ? 'image/svg+xml' : null
}

const sniffedNames: Record<Exclude<Sniffed, null>, string> = {
  ...kinds,
  'image/svg+xml': 'un documento XML o SVG',
  jpeg: 'una imagen JPEG',
  gif: 'una imagen GIF',
  webp: 'una imagen WebP',
  utf16: 'texto en UTF-16',
}

function mismatchMessage(declared: ArtworkContentType, sniffed: Sniffed): string {
  const claim = `El archivo se ha enviado como ${declared}, pero su contenido no es ${kinds[declared]}`
  if (sniffed === null) {
    const expected = { 'image/png': 'la firma de un PNG', 'application/pdf': '«%PDF-»', 'image/svg+xml': 'una etiqueta XML («<svg» o «<?xml»)' }[declared]
    return `${claim}: no empieza por ${expected}. Envía un SVG, un PDF o un PNG, con su tipo.`
  }
  if (sniffed === 'utf16') return `${claim}: está codificado en UTF-16. Guarda el SVG en UTF-8.`
  if (sniffed === 'image/png' || sniffed === 'application/pdf' || sniffed === 'image/svg+xml')
    return `${claim}: parece ${sniffedNames[sniffed]}. Envíalo con el tipo ${sniffed}.`
  return `${claim}: parece ${sniffedNames[sniffed]}, que no se admite. Conviértelo a PNG, PDF o SVG.`
}
