import * as fontkit from 'fontkit'
import { fontRequiredCharacters, type FontContentType } from '@letters/contracts/font-rules'
import { fontPreview } from './font-preview.js'
import { checkWoff2Stream, sfntFromWoff, withoutLayoutRules } from './font-tables.js'
import { FONT_MAX_EXTENT_EM, FONT_MAX_GLYPH_POINTS, FONT_MAX_GLYPHS, FONT_MAX_POINTS, FONT_UNITS_PER_EM } from './limits.js'
import { num, refusal, RefusedError, refuse, type Refusal } from './refusal.js'

/**
 * The process a font is parsed in (started by readInChild in font.ts): it asks for the file, reads
 * it with fontkit, checks every glyph, draws the preview and answers. Everything here works on a
 * client's bytes; whatever throws is the file's doing, and is answered as a refusal.
 */

export interface FontJob {
  contentType: FontContentType
  data: Uint8Array
}

export type ChildMessage = { ready: true } | { refusal: Refusal } | { read: { face: Uint8Array; preview: Uint8Array; familyName: string | null } }

/** How many missing characters a refusal names; the rest are counted. */
const NAMED_MISSING = 20
/** The longest family name kept: a name table can hold anything, a family name is a few words. */
const FAMILY_NAME_MAX = 100

async function read(job: FontJob): Promise<ChildMessage> {
  const data = Buffer.from(job.data.buffer, job.data.byteOffset, job.data.byteLength)
  if (job.contentType === 'font/woff2') checkWoff2Stream(data)
  const face = job.contentType === 'font/woff' ? sfntFromWoff(data) : data
  const font = parse(face)
  const em = font.unitsPerEm
  if (!(em >= FONT_UNITS_PER_EM.min && em <= FONT_UNITS_PER_EM.max))
    refuse(
      `La fuente declara ${num(em)} unidades por eme: una fuente tiene entre ${num(FONT_UNITS_PER_EM.min)} y ${num(FONT_UNITS_PER_EM.max)} (lo habitual son 1000 o 2048). El archivo está dañado; vuelve a exportarlo.`,
    )
  if (font.numGlyphs > FONT_MAX_GLYPHS)
    refuse(
      `La fuente tiene ${num(font.numGlyphs)} glifos: el máximo es ${num(FONT_MAX_GLYPHS)}. Una fuente de escritura a mano tiene unos cientos; envía solo sus glifos latinos.`,
    )
  if (!font.getGlyph(0)) refuse('La fuente no tiene contornos (ni tabla glyf ni CFF): solo se admiten fuentes de contornos TrueType u OpenType.')
  checkCharacters(font)
  checkGlyphs(font)
  return { read: { face, preview: await fontPreview(font), familyName: familyName(font) } }
}

function parse(face: Buffer): fontkit.Font {
  let parsed: fontkit.Font | fontkit.FontCollection
  try {
    parsed = fontkit.create(face)
  } catch {
    return refuse(unreadable)
  }
  // The signature was checked before: a collection here would be a WOFF2 that says otherwise.
  if (!('hasGlyphForCodePoint' in parsed)) refuse('El archivo contiene una colección de fuentes, que no se admite: envía una sola fuente.')
  // Laid out as the renderer lays out an account's font: by its character map alone.
  return withoutLayoutRules(parsed)
}

const unreadable =
  'El archivo no se puede leer como fuente: está dañado, incompleto o no es una fuente. Vuelve a exportarla desde tu programa de fuentes (como TTF, OTF, WOFF o WOFF2).'

/** Every character a letter in Spanish may need must be drawn: a mapped glyph with no outline prints nothing all the same. */
function checkCharacters(font: fontkit.Font): void {
  const missing = [...fontRequiredCharacters].filter((character) => {
    const codePoint = character.codePointAt(0)!
    return !font.hasGlyphForCodePoint(codePoint) || font.glyphForCodePoint(codePoint).path.commands.length === 0
  })
  if (missing.length === 0) return
  const named = missing.slice(0, NAMED_MISSING).join(' ')
  const rest = missing.length > NAMED_MISSING ? ` y ${num(missing.length - NAMED_MISSING)} más` : ''
  refuse(
    `La fuente no tiene ${missing.length === 1 ? 'el carácter' : `${num(missing.length)} de los caracteres`} que puede llevar una carta en español: ${named}${rest}. Elige una fuente con el alfabeto español completo (ñ, vocales con tilde y diéresis, ¿ ¡ « » y los signos habituales), o añádeselos.`,
  )
}

/**
 * Every glyph of the font is drawn once here, so that none can be one the renderer chokes on
 * later: a glyph of a hundred thousand points, one that reaches metres past its letter. The loop
 * itself is bounded by the child's time limit.
 */
function checkGlyphs(font: fontkit.Font): void {
  const reach = FONT_MAX_EXTENT_EM * font.unitsPerEm
  let total = 0
  for (let id = 0; id < font.numGlyphs; id++) {
    const path = font.getGlyph(id).path
    const points = path.commands.length
    if (points > FONT_MAX_GLYPH_POINTS)
      refuse(
        `El glifo ${glyphName(font, id)} tiene ${num(points)} puntos en su contorno: el máximo es ${num(FONT_MAX_GLYPH_POINTS)} (una letra trazada a mano tiene unos cientos). Simplifica sus contornos en tu programa de fuentes.`,
      )
    total += points
    if (total > FONT_MAX_POINTS)
      refuse(
        `Los contornos de la fuente suman más de ${num(FONT_MAX_POINTS)} puntos: es demasiado pesada para escribir cartas. Simplifica sus contornos o envía solo sus glifos latinos.`,
      )
    if (points === 0) continue
    const box = path.bbox
    const far = Math.max(-box.minX, box.maxX, -box.minY, box.maxY)
    if (!(far <= reach))
      refuse(
        `El glifo ${glyphName(font, id)} llega a ${Number.isFinite(far) ? `${num(far / font.unitsPerEm, 1)} em` : 'una distancia sin límite'} de su origen: el máximo es ${num(FONT_MAX_EXTENT_EM)} em (una letra ocupa alrededor de 1 em). Sus contornos están dañados.`,
      )
    // fontkit keeps every glyph it has drawn, outline and all: checked, a glyph is let go, so
    // that the font's outlines are never all in memory at once.
    forget(font, id)
  }
}

/** fontkit 2's cache of glyphs (`font._glyphs`), which it fills again when a glyph is asked for. */
function forget(font: fontkit.Font, id: number): void {
  const cache = (font as unknown as { _glyphs?: Record<number, unknown> })._glyphs
  if (cache) delete cache[id]
}

/** A glyph as a message names it: the characters it writes («ñ»), else its name in the font ("ntilde"), and its number. */
function glyphName(font: fontkit.Font, id: number): string {
  let characters: string[] = []
  let name: unknown = null
  try {
    characters = font.stringsForGlyph(id).slice(0, 3)
    name = font.getGlyph(id).name
  } catch {
    // A refusal is on its way already: the glyph is named by its number alone.
  }
  // eslint-disable-next-line no-control-regex
  const printable = characters.filter((character) => !/[\u0000-\u0020\u007f-\u00a0]/.test(character))
  if (printable.length > 0) return `de ${printable.map((character) => `«${character}»`).join(', ')} (número ${num(id)})`
  return typeof name === 'string' && /^[\x21-\x7e]{1,40}$/.test(name) ? `«${name}» (número ${num(id)})` : `número ${num(id)}`
}

/** The typographic family (name 16) where the font gives one, else its family (name 1): "Caveat", not "Caveat Regular". */
function familyName(font: fontkit.Font): string | null {
  const names = [font.getName('preferredFamily', 'en'), font.familyName]
  for (const name of names) {
    // eslint-disable-next-line no-control-regex
    const clean = typeof name === 'string' ? name.replace(/[\u0000-\u001f\u007f-\u009f]/g, '').trim() : ''
    if (clean) return clean.slice(0, FAMILY_NAME_MAX)
  }
  return null
}

async function answer(job: FontJob): Promise<ChildMessage> {
  try {
    return await read(job)
  } catch (error) {
    if (error instanceof RefusedError) return { refusal: error.refusal }
    return { refusal: refusal(400, unreadable) }
  }
}

// The child stays until the parent, having its answer, kills it: exiting on its own could race
// the answer's delivery.
process.on('message', (job: FontJob) => {
  void answer(job).then((message) => process.send!(message))
})
process.send!({ ready: true } satisfies ChildMessage)
