import { BLEED_MM, cardFormats, type CardFormat, type SizeMm } from '@letters/contracts/formats'

/** The resolution every print form is made at: what the floor's printers resolve on card. */
export const PRINT_DPI = 300
/**
 * The most pixels an image may have (40 megapixels). Checked from the PNG's header before any
 * decoding, and passed to sharp as `limitInputPixels`, so a small file that claims a huge size
 * (a decompression bomb) is never expanded in memory.
 */
export const MAX_PIXELS = 40_000_000
/** The box an envelope's logo is fitted into, in the sender's corner above the return address. */
export const LOGO_BOX_MM: SizeMm = { width: 45, height: 18 }
/**
 * A logo drawn at less than 300 dpi is soft but still legible; below this it shows its pixels.
 * Logos are small marks that clients often only have at screen sizes, so we accept down to here.
 */
export const LOGO_MIN_DPI = 150
/** How far an artwork's proportions may stray from the card's before the cut visibly crops it. */
export const RATIO_TOLERANCE = 0.02
/** How far a PDF page's size may stray from the card's: the rounding of mm to points in layout programs. */
export const PDF_SIZE_TOLERANCE_MM = 1
/** The widest preview: what the dashboard shows, not what is printed. */
export const PREVIEW_MAX_WIDTH = 1000
/** A signature image narrower than this prints as a blur at the size a signature is drawn. */
export const SIGNATURE_MIN_WIDTH_PX = 300
/** A signature image is never printed wider than a few centimetres: more pixels are only weight. */
export const SIGNATURE_MAX_WIDTH_PX = 1200
/** How long a rasterizer (pdftoppm, pdftocairo) may run before it is killed. */
export const RASTERIZE_TIMEOUT_MS = 20_000

/** Millimetres to pixels at `dpi`. Rounded: 148 mm at 300 dpi is 1748 px, the size layout programs export. */
export function mmToPx(mm: number, dpi = PRINT_DPI): number {
  return Math.round((mm / 25.4) * dpi)
}

export interface SizePx {
  width: number
  height: number
}

export function cardTrimMm(format: CardFormat): SizeMm {
  const size = cardFormats[format]
  if (!size) throw new TypeError(`Unknown card format: ${String(format)}`)
  return { width: size.width, height: size.height }
}

export function cardBleedMm(format: CardFormat): SizeMm {
  const trim = cardTrimMm(format)
  return { width: trim.width + 2 * BLEED_MM, height: trim.height + 2 * BLEED_MM }
}

/** The card front's print form: the trim plus BLEED_MM on every side, at PRINT_DPI (A6: 1819 × 1311 px). */
export function cardPrintPx(format: CardFormat): SizePx {
  const bleed = cardBleedMm(format)
  return { width: mmToPx(bleed.width), height: mmToPx(bleed.height) }
}

/** The card's trim at PRINT_DPI (A6: 1748 × 1240 px): the least a card-front PNG must have. */
export function cardTrimPx(format: CardFormat): SizePx {
  const trim = cardTrimMm(format)
  return { width: mmToPx(trim.width), height: mmToPx(trim.height) }
}

/** The logo box at PRINT_DPI (45 × 18 mm: 531 × 213 px). */
export function logoBoxPx(): SizePx {
  return { width: mmToPx(LOGO_BOX_MM.width), height: mmToPx(LOGO_BOX_MM.height) }
}

/** Whether `ratio` is within RATIO_TOLERANCE of `expected` (relative, so portrait and landscape are judged alike). */
export function ratioMatches(ratio: number, expected: number): boolean {
  return Math.abs(ratio / expected - 1) <= RATIO_TOLERANCE
}

/** The largest size with the proportions of `size` that fits inside `box`, at least 1 px each way. */
export function fitInside(size: SizePx, box: SizePx): SizePx {
  const scale = Math.min(box.width / size.width, box.height / size.height)
  return { width: Math.max(1, Math.min(box.width, Math.round(size.width * scale))), height: Math.max(1, Math.min(box.height, Math.round(size.height * scale))) }
}

/** The smallest size with the proportions of `size` that covers `box` (never smaller than it either way). */
export function coverSize(size: SizePx, box: SizePx): SizePx {
  const scale = Math.max(box.width / size.width, box.height / size.height)
  return { width: Math.max(box.width, Math.round(size.width * scale)), height: Math.max(box.height, Math.round(size.height * scale)) }
}

/**
 * The most a font's tables may take once a WOFF or WOFF2 is unpacked, as its headers declare it.
 * A handwriting font with Latin coverage unpacks to well under 1 MB; the declared sizes are
 * checked before anything is inflated, and inflating never writes past them.
 */
export const FONT_MAX_UNPACKED_BYTES = 32 * 1024 * 1024
/**
 * How many times a WOFF's or WOFF2's compressed data may expand. Real fonts expand 2 to 5 times;
 * a small file that claims tens of megabytes is a decompression bomb, refused from its header.
 */
export const FONT_MAX_EXPANSION = 100
/** The units per em the OpenType specification allows: outside them, the file is broken. */
export const FONT_UNITS_PER_EM = { min: 16, max: 16_384 } as const
/** A handwriting font has a few hundred glyphs, a few thousand with alternates and ligatures. */
export const FONT_MAX_GLYPHS = 10_000
/**
 * The most points one glyph's outline may have: a traced, scanned letter has a few hundred (the
 * most in the built-in hands is Homemade Apple's Œ, 571). Every glyph on a card is written out
 * point by point: a font of 5,000-point letters drew a 600-character card in 2.7 s and 5.4 MB
 * where Patrick Hand's takes half a second and 87 KB.
 */
export const FONT_MAX_GLYPH_POINTS = 2_000
/** The most points all of a font's outlines may have together. */
export const FONT_MAX_POINTS = 2_000_000
/** How far from its origin a glyph may reach, in ems: a letter that reaches further draws over its neighbours' lines, or off the card. */
export const FONT_MAX_EXTENT_EM = 4
/**
 * A font is parsed in a process of its own, killed when it takes longer than this: a hostile file
 * (a loop of composite glyphs, a CFF program that does not end) cannot hold a gateway's core.
 */
export const FONT_READ_TIMEOUT_MS = 10_000
/** The JavaScript heap of the process that parses a font (Node's --max-old-space-size). */
export const FONT_READ_HEAP_MB = 256
/**
 * The whole memory (resident set) of the process that parses a font, watched from outside: buffers
 * live outside the JavaScript heap, and a decompressor's output is a buffer. It starts at about
 * 100 MB (Node, sharp, fontkit).
 */
export const FONT_READ_MAX_RSS_MB = 512
/** How many fonts a process parses at once; the others wait their turn. */
export const FONT_READERS = 2
