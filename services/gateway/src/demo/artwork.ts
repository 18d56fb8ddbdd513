/**
 * The demo account's artwork, drawn here in code so that the demo owns every line of it: two card
 * fronts, an envelope logo in two inks and a signature. Each is an SVG string in the subset the
 * artwork checks accept and every renderer draws alike: rect, circle, ellipse, path, g and
 * linearGradient, no text (fonts differ between renderers, so lettering is drawn as strokes), no
 * scripts, no external references.
 */
import { BLEED_MM, cardFormats, type admin, type CardFormat, type CardProduction, type EnvelopeFormat } from '@letters/contracts'

const SVG_NS = 'http://www.w3.org/2000/svg'

/** Coordinates with two decimals at most: a tenth of a millimetre is already finer than print. */
const n = (value: number) => String(Math.round(value * 100) / 100)

const rad = (degrees: number) => (degrees * Math.PI) / 180

/** A card front with bleed: the trim plus BLEED_MM on every side, in millimetres. */
const A6 = cardFormats.A6
const CARD_WIDTH = A6.width + 2 * BLEED_MM
const CARD_HEIGHT = A6.height + 2 * BLEED_MM

function cardSvg(body: string): string {
  return `<svg xmlns="${SVG_NS}" width="${n(CARD_WIDTH)}mm" height="${n(CARD_HEIGHT)}mm" viewBox="0 0 ${n(CARD_WIDTH)} ${n(CARD_HEIGHT)}">` + body + '</svg>'
}

// ---------------------------------------------------------------------------------------------
// Lettering: a small monoline stroke alphabet, capitals only, drawn with the pen's own line.
// ---------------------------------------------------------------------------------------------

/** A glyph on a cap height of 10 units, y down, baseline at 10; `width` is its advance without spacing. */
interface Glyph {
  width: number
  d: string
}

const glyphs: Record<string, Glyph> = {
  A: { width: 8, d: 'M0 10L4 0L8 10M1.5 6.4H6.5' },
  C: { width: 8.6, d: 'M8.4 1.9A5 5 0 1 0 8.4 8.1' },
  E: { width: 6.6, d: 'M6.6 0H0V10H6.6M0 5H5.4' },
  G: { width: 9.6, d: 'M8.4 1.9A5 5 0 1 0 9.6 5.6H5.8' },
  I: { width: 0, d: 'M0 0V10' },
  // The accent sits above the cap height, as printers set it on capitals.
  Í: { width: 0, d: 'M0 0V10M-0.5 -1.3L1.4 -3.1' },
  L: { width: 6.2, d: 'M0 0V10H6.2' },
  N: { width: 8, d: 'M0 10V0L8 10V0' },
  P: { width: 6.8, d: 'M0 10V0H3.9C7.6 0 7.6 5.6 3.9 5.6H0' },
  R: { width: 7.2, d: 'M0 10V0H3.9C7.6 0 7.6 5.6 3.9 5.6H0M3.8 5.6L7.2 10' },
  S: { width: 7.2, d: 'M6.9 1.7C5.6 -0.4 0.5 -0.4 0.5 2.6C0.5 5.6 7.2 4.3 7.2 7.4C7.2 10.6 1.6 10.7 0 8.2' },
  U: { width: 8, d: 'M0 0V6.4C0 11.2 8 11.2 8 6.4V0' },
  ' ': { width: 3.5, d: '' },
}

/** How wide `text` is, in glyph units, with `tracking` units between letters. */
function letteringWidth(text: string, tracking: number): number {
  const letters = [...text]
  return letters.reduce((sum, letter) => sum + glyph(letter).width, 0) + tracking * (letters.length - 1)
}

function glyph(letter: string): Glyph {
  const found = glyphs[letter]
  if (!found) throw new TypeError(`The demo lettering has no glyph for '${letter}'`)
  return found
}

/**
 * `text` as stroked paths, centred on `centerX` with its baseline at `baseline`, capitals
 * `capHeight` tall. The stroke width is given in the drawing's units and undone from the scale.
 */
function lettering(text: string, options: { centerX: number; baseline: number; capHeight: number; tracking: number; stroke: string; strokeWidth: number }) {
  const scale = options.capHeight / 10
  const left = options.centerX - (letteringWidth(text, options.tracking) * scale) / 2
  let x = 0
  const paths: string[] = []
  for (const letter of text) {
    const { width, d } = glyph(letter)
    if (d) paths.push(`<path transform="translate(${n(x)} 0)" d="${d}"/>`)
    x += width + options.tracking
  }
  return (
    `<g transform="translate(${n(left)} ${n(options.baseline - options.capHeight)}) scale(${n(scale)})" fill="none" stroke="${options.stroke}" ` +
    `stroke-width="${n(options.strokeWidth / scale)}" stroke-linecap="round" stroke-linejoin="round">${paths.join('')}</g>`
  )
}

// ---------------------------------------------------------------------------------------------
// Botany: leaves, flowers and branches, placed by angle so a wreath is a loop over its arc.
// ---------------------------------------------------------------------------------------------

/** A leaf from its base at (x, y) towards `angle` (degrees, y down), `length` long and `width` wide at its widest. */
function leaf(x: number, y: number, angle: number, length: number, width: number, fill: string, vein?: string): string {
  const half = width / 2
  // The widest point a third of the way up, and a tip slightly drawn out: a leaf, not an ellipse.
  const outline =
    `M0 0C${n(length * 0.22)} ${n(-half * 1.25)} ${n(length * 0.62)} ${n(-half * 1.1)} ${n(length)} 0` +
    `C${n(length * 0.62)} ${n(half * 1.1)} ${n(length * 0.22)} ${n(half * 1.25)} 0 0Z`
  const midrib = vein
    ? `<path d="M${n(length * 0.06)} 0Q${n(length * 0.5)} ${n(-half * 0.12)} ${n(length * 0.86)} 0" fill="none" stroke="${vein}" stroke-width="${n(Math.max(0.18, width * 0.05))}" stroke-linecap="round"/>`
    : ''
  return `<g transform="translate(${n(x)} ${n(y)}) rotate(${n(angle)})"><path d="${outline}" fill="${fill}"/>${midrib}</g>`
}

/** A five-petalled flower (a wild rose, a blossom) at (x, y), `radius` to the petals' tips. */
function flower(x: number, y: number, radius: number, colors: { petal: string; edge: string; heart: string; dots: string }, turn = 0): string {
  const petals: string[] = []
  for (let i = 0; i < 5; i++) {
    const angle = turn + i * 72
    petals.push(
      `<ellipse cx="${n(radius * 0.52)}" cy="0" rx="${n(radius * 0.5)}" ry="${n(radius * 0.36)}" transform="rotate(${n(angle)})" fill="${colors.petal}" stroke="${colors.edge}" stroke-width="${n(radius * 0.035)}"/>`,
    )
  }
  const dots: string[] = []
  for (let i = 0; i < 8; i++) {
    const angle = rad(turn + i * 45 + 20)
    dots.push(`<circle cx="${n(Math.cos(angle) * radius * 0.27)}" cy="${n(Math.sin(angle) * radius * 0.27)}" r="${n(radius * 0.045)}" fill="${colors.dots}"/>`)
  }
  return `<g transform="translate(${n(x)} ${n(y)})">${petals.join('')}<circle r="${n(radius * 0.2)}" fill="${colors.heart}"/>${dots.join('')}</g>`
}

/** A closed rose bud on a short stalk, from (x, y) towards `angle`, cupped by two sepals. */
function bud(x: number, y: number, angle: number, size: number, colors: { stalk: string; bud: string; edge: string }): string {
  const base = size * 1.4
  const tip = size * 3
  return (
    `<g transform="translate(${n(x)} ${n(y)}) rotate(${n(angle)})">` +
    `<path d="M0 0Q${n(size * 0.7)} ${n(size * 0.2)} ${n(base)} 0" fill="none" stroke="${colors.stalk}" stroke-width="${n(size * 0.16)}" stroke-linecap="round"/>` +
    `<path d="M${n(base)} 0C${n(base + size * 0.2)} ${n(-size * 0.85)} ${n(tip - size * 0.35)} ${n(-size * 0.55)} ${n(tip)} 0` +
    `C${n(tip - size * 0.35)} ${n(size * 0.55)} ${n(base + size * 0.2)} ${n(size * 0.85)} ${n(base)} 0Z" fill="${colors.bud}" stroke="${colors.edge}" stroke-width="${n(size * 0.05)}"/>` +
    leaf(base - size * 0.1, 0, -24, size * 1.05, size * 0.45, colors.stalk) +
    leaf(base - size * 0.1, 0, 24, size * 1.05, size * 0.45, colors.stalk) +
    '</g>'
  )
}

interface Circle {
  cx: number
  cy: number
  radius: number
}

interface Arc extends Circle {
  /** Degrees, y down (90 is straight down); the branch grows from `from` to `to`. */
  from: number
  to: number
}

/** The point of `circle` at `angle` degrees, y down. */
const pointOn = (circle: Circle, angle: number) => ({
  x: circle.cx + circle.radius * Math.cos(rad(angle)),
  y: circle.cy + circle.radius * Math.sin(rad(angle)),
})

/**
 * A branch grown along an arc: its stem, and pairs of leaves that lean forward and shrink towards
 * the tip, one outside the arc and one inside, so the branch reads as a wreath's half.
 */
function branch(arc: Arc, options: { leaves: number; length: number; width: number; fills: string[]; stem: string; vein: string }): string {
  const { from, to } = arc
  const direction = Math.sign(to - from)
  const start = pointOn(arc, from)
  const end = pointOn(arc, to)
  const sweep = direction > 0 ? 1 : 0
  const large = Math.abs(to - from) > 180 ? 1 : 0
  const parts = [
    `<path d="M${n(start.x)} ${n(start.y)}A${n(arc.radius)} ${n(arc.radius)} 0 ${large} ${sweep} ${n(end.x)} ${n(end.y)}" fill="none" stroke="${options.stem}" stroke-width="0.55" stroke-linecap="round"/>`,
  ]
  for (let i = 0; i < options.leaves; i++) {
    const t = (i + 0.6) / options.leaves
    const at = from + (to - from) * t
    const p = pointOn(arc, at)
    // The stem's heading at this point, then a leaf either side of it, leaning forward, the outer one a little larger.
    const heading = at + 90 * direction
    const size = 1 - 0.45 * t
    const fill = options.fills[i % options.fills.length]!
    const outward = direction > 0 ? -1 : 1
    parts.push(leaf(p.x, p.y, heading + 40 * outward, options.length * size, options.width * size, fill, options.vein))
    parts.push(
      leaf(
        p.x,
        p.y,
        heading - 36 * outward,
        options.length * size * 0.85,
        options.width * size * 0.85,
        options.fills[(i + 1) % options.fills.length]!,
        options.vein,
      ),
    )
  }
  // The tip: one leaf straight on.
  parts.push(leaf(end.x, end.y, to + 90 * direction, options.length * 0.55, options.width * 0.55, options.fills[0]!, options.vein))
  return parts.join('')
}

// ---------------------------------------------------------------------------------------------
// The floral card: a wreath of leaves and wild roses around "GRACIAS", on a warm cream that runs
// into the bleed, with large pale leaves coming in from two corners (cut by the trim, as intended).
// ---------------------------------------------------------------------------------------------

const floral = {
  paper: ['#FBF4EA', '#F6E6DC'],
  sage: ['#8FA98A', '#A7BC9F', '#7A9876'],
  pale: '#DCE5D3',
  stem: '#6F8A69',
  vein: '#EEF2E6',
  rose: { petal: '#EDB8AE', edge: '#D9968A', heart: '#E8C46A', dots: '#B9853A' },
  blush: { petal: '#F5D3C8', edge: '#E3AE9F', heart: '#E8C46A', dots: '#B9853A' },
  ink: '#4E6B4A',
}

function cornerSpray(x: number, y: number, angle: number, scale: number): string {
  // Drawn as if growing from the origin to the right, then placed in the corner and turned inwards.
  const parts = [`<path d="M-8 0C12 -2 30 -3 46 2" fill="none" stroke="${floral.pale}" stroke-width="1.1" stroke-linecap="round"/>`]
  const leaves: Array<[number, number, number]> = [
    [4, -1, -48],
    [10, -1.4, 42],
    [17, -1.8, -44],
    [24, -1.6, 40],
    [31, -1, -40],
    [38, 0.2, 38],
    [45, 1.8, 8],
  ]
  for (const [lx, ly, angle] of leaves) parts.push(leaf(lx, ly, angle, 15 - lx * 0.12, 6.5 - lx * 0.05, floral.pale))
  return `<g transform="translate(${n(x)} ${n(y)}) rotate(${n(angle)}) scale(${n(scale)})">${parts.join('')}</g>`
}

function floralFront(): string {
  const cx = CARD_WIDTH / 2
  const cy = CARD_HEIGHT / 2 + 1
  const radius = 31
  const leafOptions = { leaves: 9, length: 9.5, width: 4.4, fills: floral.sage, stem: floral.stem, vein: floral.vein }
  const wreath = { cx, cy, radius }
  // Two branches from a knot of roses at the bottom, open at the top.
  const left = branch({ ...wreath, from: 100, to: 252 }, leafOptions)
  const right = branch({ ...wreath, from: 80, to: -72 }, leafOptions)
  const bottom = pointOn(wreath, 90)
  const onLeft = pointOn(wreath, 198)
  const onRight = pointOn(wreath, -22)
  const lowLeft = pointOn(wreath, 158)
  const lowRight = pointOn(wreath, 22)
  const budColors = { stalk: floral.stem, bud: floral.rose.petal, edge: floral.rose.edge }
  return cardSvg(
    '<defs>' +
      `<linearGradient id="paper" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="${floral.paper[0]}"/><stop offset="1" stop-color="${floral.paper[1]}"/></linearGradient>` +
      '</defs>' +
      // The paper's colour to the very edge of the bleed: the cut may fall anywhere inside it.
      `<rect x="0" y="0" width="${n(CARD_WIDTH)}" height="${n(CARD_HEIGHT)}" fill="url(#paper)"/>` +
      cornerSpray(-4, -3, 30, 0.95) +
      cornerSpray(CARD_WIDTH + 4, CARD_HEIGHT + 3, 210, 0.95) +
      left +
      right +
      bud(lowLeft.x, lowLeft.y, 178, 2.7, budColors) +
      bud(lowRight.x, lowRight.y, 2, 2.7, budColors) +
      flower(bottom.x - 6.5, bottom.y - 0.5, 6.4, floral.blush, 12) +
      flower(bottom.x + 6, bottom.y + 0.8, 7.4, floral.rose, -8) +
      flower(onLeft.x + 0.5, onLeft.y - 9, 4.2, floral.blush, 30) +
      flower(onRight.x - 0.5, onRight.y - 9.5, 4.6, floral.rose, 5) +
      lettering('GRACIAS', { centerX: cx, baseline: cy - 1.5, capHeight: 6.2, tracking: 4.2, stroke: floral.ink, strokeWidth: 0.62 }) +
      // A short rule with a dot at each end, under the word.
      `<path d="M${n(cx - 11)} ${n(cy + 5)}H${n(cx + 11)}" stroke="${floral.rose.edge}" stroke-width="0.4" stroke-linecap="round"/>` +
      `<circle cx="${n(cx - 12.6)}" cy="${n(cy + 5)}" r="0.55" fill="${floral.rose.edge}"/><circle cx="${n(cx + 12.6)}" cy="${n(cy + 5)}" r="0.55" fill="${floral.rose.edge}"/>`,
  )
}

// ---------------------------------------------------------------------------------------------
// The classic card: ivory stock, a thin double frame in muted gold whose inner line turns in at
// the corners, and a fleuron in the middle. It is what the preprinted stock CLASICA-A6 carries:
// the design's artwork pictures it in proofs, and the floor never prints it.
// ---------------------------------------------------------------------------------------------

const classic = { paper: '#FBF8F1', gold: '#A8884F' }

/**
 * A symmetric fleuron centred on (x, y), `size` millimetres to a unit: a lozenge between two
 * tendrils that curl at their ends, drawn for the right and mirrored for the left.
 */
function fleuron(x: number, y: number, size: number, color: string): string {
  const tendrils =
    'M1.6 0C3.8 -2.3 6.9 -2.2 8.9 -0.6C10.5 0.7 12.6 0.9 13.7 -0.3C14.6 -1.3 14 -2.9 12.7 -2.8C11.7 -2.7 11.6 -1.5 12.4 -1.3' +
    'M1.6 0C3.5 1.7 5.9 2.3 7.5 1.5C8.5 1 8.4 -0.1 7.6 0.1'
  const half = `<path d="${tendrils}"/><circle cx="16" cy="0.1" r="0.42" fill="${color}" stroke="none"/>`
  return (
    `<g transform="translate(${n(x)} ${n(y)}) scale(${n(size)})" fill="none" stroke="${color}" stroke-width="${n(0.3 / size)}" stroke-linecap="round">` +
    half +
    `<g transform="scale(-1 1)">${half}</g>` +
    `<path d="M0 -1.7L0.95 0L0 1.7L-0.95 0Z" fill="${color}" stroke="none"/>` +
    '</g>'
  )
}

/** A rectangle whose corners turn inwards in quarter circles of `radius`: the inner line of the frame. */
function notchedFrame(x: number, y: number, width: number, height: number, radius: number): string {
  const r = n(radius)
  return (
    `M${n(x + radius)} ${n(y)}H${n(x + width - radius)}A${r} ${r} 0 0 0 ${n(x + width)} ${n(y + radius)}` +
    `V${n(y + height - radius)}A${r} ${r} 0 0 0 ${n(x + width - radius)} ${n(y + height)}` +
    `H${n(x + radius)}A${r} ${r} 0 0 0 ${n(x)} ${n(y + height - radius)}` +
    `V${n(y + radius)}A${r} ${r} 0 0 0 ${n(x + radius)} ${n(y)}Z`
  )
}

function classicFront(): string {
  const trim = BLEED_MM
  const outer = { x: trim + 7, y: trim + 7, width: A6.width - 14, height: A6.height - 14 }
  const gap = 1.8
  const inner = { x: outer.x + gap, y: outer.y + gap, width: outer.width - 2 * gap, height: outer.height - 2 * gap }
  const notch = 3.2
  const cx = CARD_WIDTH / 2
  const cy = CARD_HEIGHT / 2
  // A dot in each notch, where the inner line would have met itself.
  const dots = [
    [inner.x, inner.y],
    [inner.x + inner.width, inner.y],
    [inner.x, inner.y + inner.height],
    [inner.x + inner.width, inner.y + inner.height],
  ]
    .map(([x, y]) => `<circle cx="${n(x!)}" cy="${n(y!)}" r="0.7" fill="${classic.gold}"/>`)
    .join('')
  const lozenge = (y: number, size: number) =>
    `<path d="M${n(cx)} ${n(y - size)}L${n(cx + size * 0.6)} ${n(y)}L${n(cx)} ${n(y + size)}L${n(cx - size * 0.6)} ${n(y)}Z" fill="${classic.gold}"/>`
  return cardSvg(
    // Ivory to the edge of the bleed; the frame stays well inside the trim, so a cut a little off
    // still leaves margins that look even.
    `<rect x="0" y="0" width="${n(CARD_WIDTH)}" height="${n(CARD_HEIGHT)}" fill="${classic.paper}"/>` +
      `<rect x="${n(outer.x)}" y="${n(outer.y)}" width="${n(outer.width)}" height="${n(outer.height)}" fill="none" stroke="${classic.gold}" stroke-width="0.6"/>` +
      `<path d="${notchedFrame(inner.x, inner.y, inner.width, inner.height, notch)}" fill="none" stroke="${classic.gold}" stroke-width="0.25"/>` +
      dots +
      // A small lozenge at the head and the foot of the frame, inside it.
      lozenge(inner.y + 4.2, 1.3) +
      lozenge(inner.y + inner.height - 4.2, 1.3) +
      fleuron(cx, cy, 1.5, classic.gold),
  )
}

// ---------------------------------------------------------------------------------------------
// The envelope logo: a crescent moon and "PAPELERÍA LUNA" in the stroke capitals, 90 × 36 so it
// fills the 45 × 18 mm box of the sender's corner. No background: it prints on the paper itself.
// ---------------------------------------------------------------------------------------------

function logo(colors: { mark: string; ink: string; accent: string }): string {
  const moon = { cx: 14, cy: 18, r: 12 }
  // The crescent: the outer half circle down the left, and back up a flatter arc through the
  // same tips; drawn upright, then tilted a little.
  const inner = moon.r * 1.3
  const crescent =
    `M${n(moon.cx)} ${n(moon.cy - moon.r)}A${n(moon.r)} ${n(moon.r)} 0 0 0 ${n(moon.cx)} ${n(moon.cy + moon.r)}` +
    `A${n(inner)} ${n(inner)} 0 0 1 ${n(moon.cx)} ${n(moon.cy - moon.r)}Z`
  const star = (x: number, y: number, r: number) =>
    `<path d="M${n(x)} ${n(y - r)}Q${n(x + r * 0.18)} ${n(y - r * 0.18)} ${n(x + r)} ${n(y)}Q${n(x + r * 0.18)} ${n(y + r * 0.18)} ${n(x)} ${n(y + r)}Q${n(x - r * 0.18)} ${n(y + r * 0.18)} ${n(x - r)} ${n(y)}Q${n(x - r * 0.18)} ${n(y - r * 0.18)} ${n(x)} ${n(y - r)}Z" fill="${colors.accent}"/>`
  const textCenter = 59
  return (
    `<svg xmlns="${SVG_NS}" width="45mm" height="18mm" viewBox="0 0 90 36">` +
    `<path d="${crescent}" transform="rotate(-18 ${n(moon.cx)} ${n(moon.cy)})" fill="${colors.mark}"/>` +
    star(20.5, 12.5, 3) +
    star(24, 20.5, 1.6) +
    lettering('LUNA', { centerX: textCenter, baseline: 26, capHeight: 10.5, tracking: 3.6, stroke: colors.ink, strokeWidth: 1.5 }) +
    lettering('PAPELERÍA', { centerX: textCenter, baseline: 11.2, capHeight: 4, tracking: 2.6, stroke: colors.ink, strokeWidth: 0.75 }) +
    `<path d="M${n(textCenter - 21)} 30.2H${n(textCenter + 21)}" stroke="${colors.accent}" stroke-width="0.6" stroke-linecap="round"/>` +
    '</svg>'
  )
}

// ---------------------------------------------------------------------------------------------
// Ana's signature: a few pen strokes, each a smooth cubic Bézier path, in the order a hand (or
// the plotter) draws them: the "A", the crossbar running on into the "n", the "a", the underline.
// ---------------------------------------------------------------------------------------------

const signatureStrokes = [
  // The capital A: up the left leg from a small lead-in, a rounded apex, down the right leg.
  'M6 33.5C9 32.5 12.5 27 16 20.5C19.5 14 23.5 6.5 27.5 4.5C29.5 3.5 30.5 5 30.3 8C30 14 30.8 24 33 33.5',
  // The crossbar, carried on without lifting the pen into the "n", which ends in a flick towards the "a".
  'M13.5 23.5C20 21 29 20 36 21C40 21.6 41.5 23 41.5 26.5C41.5 29 41.3 31 41.2 33' +
    'C42 27.5 45 21.5 49.5 21.5C53 21.5 53.2 25 53 28C52.8 30.5 53.2 32.8 55.5 32.8C57.5 32.8 59.5 30.5 61 28',
  // The "a": its bowl from the top right, round and back up, then down the stem into a rising tail.
  'M74 22.6C70.5 20.2 63.5 23 62.6 28.5C62.1 31.8 64.6 33.4 67.3 32.2C70 31 72.4 27 73.8 22.4C73.2 26.5 72.9 30.8 74.6 32.5C76.6 34.4 81 32 84.5 28.5',
  // The underline: a long stroke from under the A, rising to the right and turning back on itself.
  'M9 37.5C30 38.5 62 37.8 92 34C101 32.8 108 31 112 28.5C114.5 26.8 113 25.5 109.5 26.8C104 28.8 99 31.5 95 35',
]

function signature(): string {
  return (
    `<svg xmlns="${SVG_NS}" viewBox="0 0 120 40">` +
    '<g fill="none" stroke="#1a2a6c" stroke-width="1.2" stroke-linecap="round" stroke-linejoin="round">' +
    signatureStrokes.map((d) => `<path d="${d}"/>`).join('') +
    '</g></svg>'
  )
}

export const floralCardFront = floralFront()
export const classicCardFront = classicFront()
/** Dark ink on kraft: the gold of the white envelope's logo would sink into the brown paper. */
export const kraftEnvelopeLogo = logo({ mark: '#3A2A1C', ink: '#3A2A1C', accent: '#5A4330' })
export const whiteEnvelopeLogo = logo({ mark: '#C9A24A', ink: '#1F2D4D', accent: '#C9A24A' })
export const anaSignature = signature()

/** What the demo account is given: its designs with their artwork, its signature and its sender. */
export interface DemoDesigns {
  cards: Array<{ name: string; format: CardFormat; production: CardProduction; stockCode: string | null; artwork: string }>
  envelopes: Array<{ name: string; format: EnvelopeFormat; stockCode: string | null; paperColor: string | null; logo: string }>
  signature: { name: string; svg: string }
  sender: { name: string; returnAddress: admin.ReturnAddressBody }
}

export const demoDesigns: DemoDesigns = {
  cards: [
    { name: 'Tarjeta floral', format: 'A6', production: 'printed', stockCode: null, artwork: floralCardFront },
    { name: 'Tarjeta clásica', format: 'A6', production: 'preprinted', stockCode: 'CLASICA-A6', artwork: classicCardFront },
  ],
  envelopes: [
    { name: 'Sobre blanco', format: 'C6', stockCode: 'C6-BLANCO', paperColor: '#FFFFFF', logo: whiteEnvelopeLogo },
    { name: 'Sobre kraft', format: 'C6', stockCode: 'C6-KRAFT', paperColor: '#C8A27A', logo: kraftEnvelopeLogo },
  ],
  signature: { name: 'Firma de Ana', svg: anaSignature },
  sender: {
    name: 'Equipo de Demostración',
    returnAddress: { name: 'Papelería Luna', company: null, address: 'Calle Sierpes 4', zip: '41004', city: 'Sevilla', province: 'Sevilla', country: 'ES' },
  },
}
