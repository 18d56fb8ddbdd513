import bwipjs from 'bwip-js'
import type { QrCorner, QrPlacement } from '@letters/contracts'
import { MM, type CardGeometry } from './geometry.js'
import type { Box } from './handwriting.js'

/**
 * The QR code a letter with a tracking URL carries on its card's handwritten side: its short
 * link, never the client's URL, in a corner the card's design chooses.
 */
export interface LetterQr {
  /** What the code encodes: the service's short link for the letter (`{PUBLIC_BASE_URL}/q/{trackingCode}`). */
  link: string
  /** The corner and the side of the square the code takes, its quiet zone included. */
  placement: QrPlacement
}

/** The light margin a QR code needs around its modules for a reader to find it, in modules: left empty, inside the code's square. */
export const QR_QUIET_ZONE = 4

/**
 * How far the handwriting keeps from the code's square, on an A6 card and as much more as the
 * card is larger: a hand's line runs a little past its box (its start drifts, its glyphs grow and
 * its baseline slopes), and none of it may reach the quiet zone.
 */
const QR_CLEARANCE = 4 * MM

/**
 * The dark modules of the QR code of `text`, row by row, without the quiet zone. Error correction
 * M (15 % of the code may be lost): a pen's blot or a scuffed corner still reads, and a short link
 * stays a small code (version 3 or 4, 29 or 33 modules a side). bwip-js encodes, as it encodes the
 * envelope's Code 128; the drawing is ours, in vector.
 */
export function qrModules(text: string): boolean[][] {
  const [symbol] = bwipjs.raw('qrcode', text, 'eclevel=M')
  if (!symbol || !('pixs' in symbol)) throw new Error(`bwip-js gave no matrix for the QR code of ${text}`)
  const { pixs, pixx, pixy } = symbol
  return Array.from({ length: pixy }, (_, row) => Array.from({ length: pixx }, (_, column) => pixs[row * pixx + column] === 1))
}

/** A dark area of a code: a rectangle, in points from the card's top left corner. */
export interface Rect {
  x: number
  y: number
  width: number
  height: number
}

/** A letter's QR code laid out on its card. */
export interface CardQr {
  /** The square the code takes, its quiet zone included: the handwriting keeps out of it. */
  square: Box
  /** The side of one module. */
  module: number
  /**
   * The dark modules, each column's consecutive ones merged into one run: bars, as the envelope's
   * Code 128 has, which the printer fills and the plotter hatches as it hatches those.
   */
  runs: Rect[]
}

/**
 * Where the code goes on a card: its square in the placement's corner, on the writing's margin
 * (never less than SAFE_MARGIN_MM from the trim, and inside the pen area a plotter keeps to), its
 * modules sharing the square with their quiet zone.
 */
export function cardQr(qr: LetterQr, card: CardGeometry): CardQr {
  const side = qr.placement.sizeMm * MM
  const { x, y } = cornerOf(qr.placement.corner, side, card)
  const modules = qrModules(qr.link)
  const module = side / (modules.length + 2 * QR_QUIET_ZONE)
  const runs: Rect[] = []
  for (let column = 0; column < modules.length; column++) {
    for (let row = 0; row < modules.length; row++) {
      if (!modules[row]![column] || modules[row - 1]?.[column]) continue
      let end = row
      while (modules[end + 1]?.[column]) end++
      runs.push({ x: x + (QR_QUIET_ZONE + column) * module, y: y + (QR_QUIET_ZONE + row) * module, width: module, height: (end - row + 1) * module })
    }
  }
  return { square: { x, y, width: side, height: side }, module, runs }
}

function cornerOf(corner: QrCorner, side: number, card: CardGeometry): { x: number; y: number } {
  const { margin, size } = card
  return {
    x: corner.endsWith('left') ? margin : size.width - margin - side,
    y: corner.startsWith('top') ? margin : size.height - margin - side,
  }
}

/**
 * The part of `box` the handwriting may use, kept QR_CLEARANCE from a code's square: `box` itself
 * when the square is clear of it, else the largest of its strips beside, above or below the
 * square, the most room for the writing (for the default code, bottom right, the message ends
 * above it and the signature's strip stops left of it).
 */
export function besideQr(box: Box, square: Box, card: CardGeometry): Box {
  const clearance = QR_CLEARANCE * card.scale
  const keepOut = {
    left: square.x - clearance,
    top: square.y - clearance,
    right: square.x + square.width + clearance,
    bottom: square.y + square.height + clearance,
  }
  const right = box.x + box.width
  const bottom = box.y + box.height
  if (keepOut.left >= right || keepOut.right <= box.x || keepOut.top >= bottom || keepOut.bottom <= box.y) return box
  const strips: Box[] = [
    { x: box.x, y: box.y, width: keepOut.left - box.x, height: box.height },
    { x: keepOut.right, y: box.y, width: right - keepOut.right, height: box.height },
    { x: box.x, y: box.y, width: box.width, height: keepOut.top - box.y },
    { x: box.x, y: keepOut.bottom, width: box.width, height: bottom - keepOut.bottom },
  ]
  let best: Box = { x: box.x, y: box.y, width: 0, height: 0 }
  for (const strip of strips) if (strip.width > 0 && strip.height > 0 && strip.width * strip.height > best.width * best.height) best = strip
  return best
}
