import type * as fontkit from 'fontkit'
import sharp from 'sharp'
import { PREVIEW_MAX_WIDTH } from './limits.js'
import { previewPng } from './preview.js'

/** The sentence a preview writes: both lines are short enough to be written large, and use ñ, Ñ, ¡, ¿ and accents. */
const SAMPLE_LINES = ['¡Hola! ¿Qué tal? Gracias por todo:', 'un abrazo de Begoña y Ñuño.']
const PREVIEW_MARGIN_PX = 32
/** The largest size a preview writes at: a font whose lines are wider is written smaller, to fit. */
const PREVIEW_FONT_PX = 64
/** A dark blue-black, as a pen writes: the preview shows handwriting, not type. */
const PREVIEW_INK = '#1c2340'

/** The sample sentence preview of a font already parsed (also used for the built-in hands). */
export async function fontPreview(font: fontkit.Font): Promise<Buffer> {
  const em = font.unitsPerEm
  const runs = SAMPLE_LINES.map((line) => font.layout(line))
  const widest = Math.max(...runs.map((run) => run.advanceWidth))
  const fontPx = widest > 0 ? Math.min(PREVIEW_FONT_PX, ((PREVIEW_MAX_WIDTH - 2 * PREVIEW_MARGIN_PX) * em) / widest) : PREVIEW_FONT_PX
  const scale = fontPx / em
  // The font's own metrics are a client's numbers: kept within what a handwriting font has, so
  // that a broken ascent cannot make the picture a thousand pixels tall.
  const ascent = within(font.ascent / em, 0.6, 1.4) * fontPx
  const descent = within(-font.descent / em, 0.2, 0.8) * fontPx
  const lineHeight = (ascent + descent) * 1.15
  const height = Math.ceil(2 * PREVIEW_MARGIN_PX + ascent + descent + (runs.length - 1) * lineHeight)
  const paths: string[] = []
  runs.forEach((run, line) => {
    const baseline = PREVIEW_MARGIN_PX + ascent + line * lineHeight
    let x = PREVIEW_MARGIN_PX
    run.glyphs.forEach((glyph, index) => {
      const position = run.positions[index]!
      const d = glyph.path.toSVG()
      if (d) {
        const left = x + position.xOffset * scale
        const top = baseline - position.yOffset * scale
        paths.push(`<path transform="translate(${round(left)} ${round(top)}) scale(${round(scale, 6)} ${round(-scale, 6)})" d="${d}"/>`)
      }
      x += position.xAdvance * scale
    })
  })
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="${PREVIEW_MAX_WIDTH}" height="${height}" viewBox="0 0 ${PREVIEW_MAX_WIDTH} ${height}">` +
    `<rect width="100%" height="100%" fill="#ffffff"/><g fill="${PREVIEW_INK}">${paths.join('')}</g></svg>`
  return previewPng(sharp(Buffer.from(svg, 'utf8')))
}

function within(value: number, least: number, most: number): number {
  return Number.isFinite(value) ? Math.min(most, Math.max(least, value)) : least
}

function round(value: number, digits = 2): number {
  return Number(value.toFixed(digits))
}
