import { crc32 } from 'node:zlib'
import { MAX_PIXELS } from './limits.js'
import { num, refuse } from './refusal.js'

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

/** What a PNG's header says about it, read from the bytes without decoding a pixel. */
export interface PngHeader {
  width: number
  height: number
  bitDepth: number
  /** 0 grey, 2 RGB, 3 palette, 4 grey + alpha, 6 RGBA. */
  colorType: number
  /** A tRNS chunk before the image data: a transparent colour or palette entries. */
  hasTrns: boolean
}

const allowedDepths: Record<number, number[]> = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16] }

/**
 * Reads IHDR and walks the chunks up to the image data looking for tRNS. Only the header is
 * trusted here; a file damaged further on is caught by sharp when (and only if) it is decoded.
 */
export function readPngHeader(data: Buffer): PngHeader {
  if (data.length < 33 || !data.subarray(0, 8).equals(PNG_SIGNATURE)) refuse('El archivo no es un PNG válido: le falta la cabecera PNG.')
  if (data.readUInt32BE(8) !== 13 || data.toString('latin1', 12, 16) !== 'IHDR') refuse('El PNG está dañado: su primer bloque debe ser IHDR, de 13 bytes.')
  if (crc32(data.subarray(12, 29)) !== data.readUInt32BE(29)) refuse('El PNG está dañado: la suma de control de su cabecera (IHDR) no coincide.')
  const width = data.readUInt32BE(16)
  const height = data.readUInt32BE(20)
  const bitDepth = data[24] ?? 0
  const colorType = data[25] ?? 0
  if (width === 0 || height === 0 || width > 0x7fffffff || height > 0x7fffffff)
    refuse(`El PNG está dañado: declara un tamaño de ${num(width)} × ${num(height)} px.`)
  if (!allowedDepths[colorType]?.includes(bitDepth))
    refuse(`El PNG está dañado: su cabecera combina el tipo de color ${colorType} con ${bitDepth} bits, que no existe en PNG.`)
  if (width * height > MAX_PIXELS)
    refuse(
      `La imagen mide ${num(width)} × ${num(height)} px (${num((width * height) / 1e6, 1)} megapíxeles): el máximo es ${num(MAX_PIXELS / 1e6)} megapíxeles. Redúcela; 300 ppp al tamaño de impresión bastan.`,
    )

  let hasTrns = false
  let offset = 33
  // A handful of ancillary chunks precede the image data; the walk stops at IDAT or at a chunk that runs off the end.
  while (offset + 8 <= data.length) {
    const length = data.readUInt32BE(offset)
    const type = data.toString('latin1', offset + 4, offset + 8)
    if (type === 'IDAT' || type === 'IEND') break
    if (type === 'tRNS') hasTrns = true
    offset += 12 + length
  }
  return { width, height, bitDepth, colorType, hasTrns }
}

/** Whether the header promises transparency: an alpha channel or a tRNS chunk. */
export function pngMayBeTransparent(header: PngHeader): boolean {
  return header.colorType === 4 || header.colorType === 6 || header.hasTrns
}
