// Sample artwork for the tests and the throughput bench, made with sharp (installed at the
// repository's root, not a dependency of the render package: the service's print forms come
// from @letters/artwork, and rendering never decodes or encodes an image).
import sharp from 'sharp'
import { BLEED_MM, cardFormats, type CardFormat, type EnvelopeFormat } from '@letters/contracts'
import type { DesignToRender, DesignSignature } from '../src/index.js'
import { seededRandom } from '../src/random.js'

/** Print resolution of the artwork's print forms. */
const DPI = 300
const pixels = (mm: number) => Math.round((mm / 25.4) * DPI)

/**
 * A front as @letters/artwork makes it: a JPEG covering the card and its bleed at 300 dpi (for
 * A6, 1819 × 1311 px). A gradient with shapes, a frame on the trim line (a proof must show it at
 * the page's edge) and the format's name, so a look at a rendered page tells them apart.
 */
export async function frontJpeg(format: CardFormat): Promise<Uint8Array> {
  const { width, height } = cardFormats[format]
  const w = pixels(width + 2 * BLEED_MM)
  const h = pixels(height + 2 * BLEED_MM)
  const bleed = pixels(BLEED_MM)
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}">
    <defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#f4d6a0"/><stop offset="1" stop-color="#3b6e8f"/></linearGradient></defs>
    <rect width="${w}" height="${h}" fill="url(#g)"/>
    <circle cx="${w * 0.3}" cy="${h * 0.45}" r="${h * 0.28}" fill="#e76f51" opacity="0.85"/>
    <rect x="${w * 0.55}" y="${h * 0.2}" width="${w * 0.3}" height="${h * 0.5}" fill="#2a9d8f" opacity="0.8"/>
    <rect x="${bleed}" y="${bleed}" width="${w - 2 * bleed}" height="${h - 2 * bleed}" fill="none" stroke="#d00000" stroke-width="12"/>
    <text x="${w * 0.5}" y="${h * 0.9}" font-size="${h * 0.09}" text-anchor="middle" fill="white" font-family="sans-serif">Front ${format}</text>
  </svg>`
  return new Uint8Array(await sharp(Buffer.from(svg)).jpeg({ quality: 85 }).toBuffer())
}

/** A logo as a transparent PNG: a round mark and a name, 600 × 240 px. */
export async function logoPng(): Promise<Uint8Array> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="600" height="240">
    <circle cx="120" cy="120" r="100" fill="#264653"/><circle cx="150" cy="95" r="45" fill="#e9c46a"/>
    <text x="250" y="145" font-size="72" fill="#264653" font-family="serif">Luna</text>
  </svg>`
  return new Uint8Array(await sharp(Buffer.from(svg)).png().toBuffer())
}

/** A signature as paths (M, L, C, Q, Z) in a 300 × 100 box: "Ana" with a flourish under it. */
export const signaturePaths: Extract<DesignSignature, { kind: 'paths' }> = {
  kind: 'paths',
  width: 300,
  height: 100,
  paths: [
    'M 12 82 C 30 10 48 8 62 80',
    'M 26 56 L 52 54',
    'M 72 80 Q 80 40 94 76 Q 104 48 122 79',
    'M 150 58 C 128 48 128 88 148 77 Q 154 72 156 60 L 160 80',
    'M 6 93 C 80 84 200 100 294 86',
    'M 200 30 Q 230 5 260 35 Q 240 60 200 30 Z',
  ],
}

/** The same signature as a transparent PNG, 600 × 200 px. */
export async function signaturePng(): Promise<Uint8Array> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="600" height="200" viewBox="0 0 300 100">
    <g fill="none" stroke="#10206a" stroke-width="2.5" stroke-linecap="round">${signaturePaths.paths.map((d) => `<path d="${d}"/>`).join('')}</g>
  </svg>`
  return new Uint8Array(await sharp(Buffer.from(svg)).png().toBuffer())
}

export interface SampleDesign {
  card?: CardFormat
  envelope?: EnvelopeFormat
  production?: 'printed' | 'preprinted'
  front?: Uint8Array | null
  logo?: Uint8Array | null
  paperColor?: string | null
  signature?: DesignToRender['signature']
  returnAddressLines?: string[] | null
}

/** A design with everything in it unless told otherwise; images must be made first (frontJpeg for the card's format). */
export function sampleDesign(options: SampleDesign): DesignToRender {
  return {
    card: { format: options.card ?? 'A6', production: options.production ?? 'printed', front: options.front ?? null },
    envelope: { format: options.envelope ?? 'C6', paperColor: options.paperColor ?? null, logo: options.logo ?? null },
    signature: options.signature === undefined ? signaturePaths : options.signature,
    returnAddressLines: options.returnAddressLines === undefined ? ['Papelería Luna', 'Calle Sierpes 4, 2º B', '41004 Sevilla'] : options.returnAddressLines,
  }
}

const words = (
  'Querida Lucía: muchas gracias por venir a la inauguración de la tienda el sábado pasado. Nos hizo muchísima ilusión verte allí con tu familia, ¡y qué bien lo pasamos! ' +
  '¿Te acuerdas de la mesa de papel japonés? Ya tenemos los sobres a juego que preguntaste, en azul y en verde. Si te apetece pasar a verlos, estaremos encantados. ' +
  'Un abrazo muy fuerte para Marta y los niños; esperamos veros pronto por Sevilla, quizá en primavera, cuando los naranjos están en flor y las tardes son largas.'
).split(' ')

/**
 * A card's worth of Spanish, `length` characters, different for every `index` (the same words in
 * another order): each letter is laid out afresh, as on the floor, while its words recur as a
 * language's do.
 */
export function cardMessage(length: number, index = 0): string {
  const random = seededRandom(`message ${index}`)
  let message = ''
  while (message.length < length) message += `${words[Math.floor(random() * words.length)]} `
  return message.slice(0, length)
}
