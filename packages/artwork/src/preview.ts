import sharp, { type Sharp } from 'sharp'
import type { SizeMm } from '@letters/contracts/formats'
import { PREVIEW_MAX_WIDTH } from './limits.js'

/** Scales `image` (a print form) down to at most PREVIEW_MAX_WIDTH px each way, as a PNG. */
export function previewPng(image: Sharp): Promise<Buffer> {
  return image.resize({ width: PREVIEW_MAX_WIDTH, height: PREVIEW_MAX_WIDTH, fit: 'inside', withoutEnlargement: true }).png({ compressionLevel: 9 }).toBuffer()
}

/** The longest side of a blank preview, so a blank card is shown at the size a real one's preview is. */
const BLANK_LONG_SIDE = PREVIEW_MAX_WIDTH
const BORDER_PX = 2
const BORDER_COLOR = '#bdbdbd'

/**
 * A PNG of an empty card or envelope of `size` (mm) in `color` (`#RGB` or `#RRGGBB`), with a
 * thin grey border so a white card shows on a white page: the preview of a design without artwork.
 */
export async function blankPreview(size: SizeMm, color = '#ffffff'): Promise<Buffer> {
  if (!(size.width > 0 && size.height > 0 && Number.isFinite(size.width) && Number.isFinite(size.height)))
    throw new RangeError(`blankPreview: size must be positive millimetres, got ${size.width} × ${size.height}`)
  if (!/^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i.test(color)) throw new TypeError(`blankPreview: color must be #RGB or #RRGGBB, got ${color}`)
  const scale = BLANK_LONG_SIDE / Math.max(size.width, size.height)
  const width = Math.max(2 * BORDER_PX + 1, Math.round(size.width * scale))
  const height = Math.max(2 * BORDER_PX + 1, Math.round(size.height * scale))
  return sharp({ create: { width: width - 2 * BORDER_PX, height: height - 2 * BORDER_PX, channels: 3, background: color } })
    .extend({ top: BORDER_PX, bottom: BORDER_PX, left: BORDER_PX, right: BORDER_PX, background: BORDER_COLOR })
    .png({ compressionLevel: 9 })
    .toBuffer()
}
