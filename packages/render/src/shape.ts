/**
 * Every glyph its own shape. A hand never writes the same letter twice: the pen's path drifts a
 * little from the last time, presses harder here and lighter there, and puts a dot or an accent
 * somewhere near where it belongs. Moving, sizing and slanting one outline is an affine change,
 * which the eye (and any measure) sees through; what makes two instances differ is a change that
 * is not affine. So each instance's outline is bent by a smooth random field over its box (a
 * grid of random moves, blended by cubic B-splines: both sides of a stroke move alike, so the
 * stroke bends and keeps its width), offset along its normal as a pen's pressure widens or thins
 * the line, and its detached marks (dots, accents, the tilde) moved on their own. The
 * displacement is seeded per instance: the same letter draws the same bytes.
 */

/**
 * The bend's grid: random moves over the glyph's box, CELLS × CELLS cells, blended by cubic
 * B-splines (drawing 5: GRID × GRID moves, each point reading 4 × 4 of them) or quadratic ones
 * (drawing 6: QUADRATIC_GRID × QUADRATIC_GRID moves, each point reading 3 × 3: smooth enough that
 * a smooth join's handles stay in line, at half the arithmetic).
 */
const CELLS = 4
const GRID = CELLS + 3
const QUADRATIC_GRID = CELLS + 2
/**
 * How far each of the grid's moves goes, at most, as a share of the glyph's height (the blend
 * averages neighbours, so points move about half as far). Less, and a card's forty a's include
 * pairs an affine map brings within 2 % of each other.
 */
const BEND = 0.15
/**
 * The same for a quadratic bend, which blends fewer moves and so follows each one more closely:
 * at 0.12 a card keeps some 96 % of its glyphs without a twin, as the cubic bend at 0.15 does.
 */
const QUADRATIC_BEND = 0.12
/** How much a pen's pressure widens or thins the line on each side, as a share of the glyph's stroke width. */
const PRESSURE = 0.12
/** A pen's line is never finer than its tip: every outline is widened by this on each side, in ems. */
const INK_SPREAD = 0.003
/** How far a dot or an accent lands from its place, in ems (across, up and down). */
const MARK_DRIFT = [0.035, 0.025]
/** Heights below this count as this, in ems: a comma's tiny outline still varies visibly. */
const MIN_HEIGHT = 0.3
/**
 * A joined hand's letters meet at their sides: within this distance of the glyph's left edge (its
 * origin) or its right edge (its advance), the displacement fades to none, so each entry still
 * meets the exit before it.
 */
const JOIN_RAMP = 0.06

/** How far a mark's edge may reach into its body's height and still be a mark, in ems. */
const MARK_CLEARANCE = 0.02

/**
 * Which parts of a glyph (its contours, or a pen's strokes) are marks: an i's dot, an accent, a
 * tilde, the dot of ¡ or ¿, each wholly above or below the glyph's body, the part of the largest
 * `extent` (the first of equals). A glyph of one part has none.
 */
function marksOf(parts: ReadonlyArray<{ bottom: number; top: number; extent: number }>): boolean[] {
  if (parts.length < 2) return parts.map(() => false)
  const body = parts.reduce((largest, part) => (part.extent > largest.extent ? part : largest))
  return parts.map((part) => part !== body && (part.bottom > body.top - MARK_CLEARANCE || part.top < body.bottom + MARK_CLEARANCE))
}

/**
 * How free a joined hand's point at `x` is to move: none on the glyph's sides (0 and `advance`),
 * fully JOIN_RAMP away from them on either side. A part that reaches past a side (an l's loop
 * leaning over the next letter) is free again beyond the ramp: only where the strokes cross the
 * sides do the letters meet.
 */
function joinFreedom(x: number, advance: number): number {
  const inside = Math.min(x, advance - x)
  const t = Math.min(1, inside >= 0 ? inside / JOIN_RAMP : -inside / (2 * JOIN_RAMP))
  return t * t * (3 - 2 * t)
}

/**
 * How a drawing prepares and bends a glyph's outline. Drawing 5 moves a curve's handles with the
 * ends they belong to, so that a glyph drawn with few curves (an o of four) had few points to move,
 * and after the best affine fit two instances little left to differ by: its longest curves were
 * cut in two until it had 14 ends. Drawing 6 bends the handles where they are, as the ends are
 * (the bend is smooth, so the two handles of a smooth join stay in line): every point of a curve
 * carries the bend, so that a glyph differs with fewer cuts (8 ends) and, where no hairline
 * depends on it, a coarser outline.
 */
export interface OutlineStyle {
  /** How far a glyph's simplified outline may stray from its font's, in ems. */
  tolerance: number
  /** The same where every hairline counts: a joined hand's, a printed line's. */
  fineTolerance: number
  /** The fewest end points a glyph's outline is cut into. */
  minAnchors: number
  /** Whether a curve's handles are bent where they are, rather than moved with their ends. */
  bentHandles: boolean
  /** The B-splines the bend blends its moves with. */
  bend: BendSpline
}

export type BendSpline = 'cubic' | 'quadratic'

/** The path with its longest cubic curves halved (the same line) until it has `least` end points. */
function withAnchors(path: PathCommands, least: number): PathCommands {
  const commands = path.commands.map(({ command, args }) => ({ command, args: [...args] }))
  const ends = () => commands.filter(({ command }) => command !== 'closePath').length
  while (ends() < least) {
    // The longest curve by its control polygon, from the point before it.
    let longest = -1
    let longestLength = 0
    let from: Pt = [0, 0]
    let longestFrom: Pt = [0, 0]
    commands.forEach(({ command, args }, index) => {
      if (command === 'bezierCurveTo') {
        const length =
          Math.hypot(args[0]! - from[0], args[1]! - from[1]) +
          Math.hypot(args[2]! - args[0]!, args[3]! - args[1]!) +
          Math.hypot(args[4]! - args[2]!, args[5]! - args[3]!)
        if (length > longestLength) {
          longest = index
          longestLength = length
          longestFrom = from
        }
      }
      if (args.length >= 2) from = [args.at(-2)!, args.at(-1)!]
    })
    if (longest === -1) break
    const [first, second] = splitCubic(cubicFrom(longestFrom, commands[longest]!.args), 0.5)
    commands.splice(longest, 1, curveCommand(first), curveCommand(second))
  }
  return { commands }
}

/** A path's cubic curve from the point before it and its command's arguments. */
const cubicFrom = (from: Pt, args: readonly number[]): Cubic => [from, [args[0]!, args[1]!], [args[2]!, args[3]!], [args[4]!, args[5]!]]
const curveCommand = ([, c1, c2, end]: Cubic) => ({ command: 'bezierCurveTo', args: [...c1, ...c2, ...end] })

/** The curve cut at `t` (de Casteljau's construction): the same line, as two curves. */
function splitCubic([p0, p1, p2, p3]: Cubic, t: number): [Cubic, Cubic] {
  const at = (a: Pt, b: Pt): Pt => [(1 - t) * a[0] + t * b[0], (1 - t) * a[1] + t * b[1]]
  const a = at(p0, p1)
  const b = at(p1, p2)
  const c = at(p2, p3)
  const d = at(a, b)
  const e = at(b, c)
  const f = at(d, e)
  return [
    [p0, a, d, f],
    [f, e, c, p3],
  ]
}

/** mulberry32's step: each number's state is the last one's plus this. */
const MULBERRY_STEP = 0x6d2b79f5

/** mulberry32's number for a state, in [-1, 1). */
function mulberry(state: number): number {
  let t = Math.imul(state ^ (state >>> 15), 1 | state)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1
}

/** A seeded generator for one glyph's shape (mulberry32), in [-1, 1). */
export function shapeRandom(seed: number): () => number {
  let state = seed | 0
  return () => {
    state = (state + MULBERRY_STEP) | 0
    return mulberry(state)
  }
}

/**
 * The generator of the outline being varied: shapeRandom's numbers, its state kept here rather
 * than in a closure made per glyph (a card varies some 600, each drawing some 50 numbers).
 */
let outlineState = 0
function outlineRandom(): number {
  outlineState = (outlineState + MULBERRY_STEP) | 0
  return mulberry(outlineState)
}

/** The commands of an outline's path: each draws to its points. */
export const MOVE = 0
export const LINE = 1
export const CURVE = 2
export const CLOSE = 3

/**
 * A glyph's outline made ready to be varied: its segments (cubic curves only; quadratic ones are
 * raised to cubic), its points in ems (y up) and, per point, what the displacement reads: the
 * point it moves with, its normal, and how free a joined hand leaves it.
 */
export interface Outline {
  ops: Uint8Array
  /** x, y of each point of the segments in order (a curve has three). */
  points: Float64Array
  /** Per point: its contour's number. */
  contourOf: Uint16Array
  /** Per point: the point on the outline it moves with (itself, or for a curve's handle the end it leaves or reaches). */
  anchorOf: Uint32Array
  /** The points that are their own anchors. */
  anchors: Uint32Array
  /** Per point: the unit normal of its contour there (x, y), pointing away from the ink. */
  normals: Float64Array
  /** Per point: 1 where it may move freely, fading to 0 where a joined hand's letters meet. */
  freedom: Float64Array
  /** Per contour: 1 for a detached mark (a dot, an accent), drifting as a whole. */
  marks: Uint8Array
  contours: number
  /** The glyph's box, ems. */
  left: number
  bottom: number
  width: number
  height: number
  /** The width of its strokes, ems: twice its inked area over its outline's length. */
  stroke: number
  /** Per point: where it reads a bend's grid (bendSpot), and its eight weights there. */
  bendCells: Uint16Array
  bendWeights: Float64Array
  /** The centre of its box, ems, about which a pen's pressure shifts. */
  cx: number
  cy: number
  /** Whether its bend blends quadratic B-splines (else cubic). */
  quadratic: boolean
  /** Whether a curve's handles are bent where they are (OutlineStyle). */
  bentHandles: boolean
}

/** A path as fontkit gives it. */
export interface PathCommands {
  commands: ReadonlyArray<{ command: string; args: number[] }>
}

/**
 * Prepares a path (font units, as fontkit gives it) for variation. `advance`: the glyph's advance
 * in ems, where a joined hand's next letter begins; null for a hand whose letters stand apart.
 */
export function outlineOf(
  source: PathCommands,
  unitsPerEm: number,
  joinedAdvance: number | null,
  style: Pick<OutlineStyle, 'minAnchors' | 'bend' | 'bentHandles'>,
): Outline {
  const spline = style.bend
  const path = withAnchors(source, style.minAnchors)
  const ops: number[] = []
  const points: number[] = []
  const contourOf: number[] = []
  let contour = -1
  let lastX = 0
  let lastY = 0
  const scale = 1 / unitsPerEm
  const push = (x: number, y: number) => {
    points.push(x * scale, y * scale)
    contourOf.push(contour)
  }
  const anchorOf: number[] = []
  // The curve's first handle moves with the point it leaves, the second with the point it reaches.
  const curve = (c1x: number, c1y: number, c2x: number, c2y: number, x: number, y: number) => {
    ops.push(CURVE)
    const start = contourOf.length - 1
    anchorOf.push(start, start + 3, start + 3)
    push(c1x, c1y)
    push(c2x, c2y)
    push(x, y)
  }
  for (const { command, args } of path.commands) {
    if (command === 'moveTo') {
      contour++
      ops.push(MOVE)
      anchorOf.push(contourOf.length)
      push(args[0]!, args[1]!)
    } else if (command === 'lineTo') {
      ops.push(LINE)
      anchorOf.push(contourOf.length)
      push(args[0]!, args[1]!)
    } else if (command === 'quadraticCurveTo') {
      const [cx, cy, x, y] = args as [number, number, number, number]
      curve(lastX + (2 / 3) * (cx - lastX), lastY + (2 / 3) * (cy - lastY), x + (2 / 3) * (cx - x), y + (2 / 3) * (cy - y), x, y)
    } else if (command === 'bezierCurveTo') {
      curve(args[0]!, args[1]!, args[2]!, args[3]!, args[4]!, args[5]!)
    } else if (command === 'closePath') {
      ops.push(CLOSE)
      continue
    } else throw new Error(`a glyph's path has a command this drawing does not know: ${command}`)
    lastX = args.at(-2)!
    lastY = args.at(-1)!
  }
  const count = contourOf.length
  const contours = contour + 1
  const xy = Float64Array.from(points)
  const normals = new Float64Array(count * 2)
  const freedom = new Float64Array(count).fill(1)
  const marks = new Uint8Array(contours)

  let left = Infinity
  let right = -Infinity
  let bottom = Infinity
  let top = -Infinity
  for (let i = 0; i < count; i++) {
    left = Math.min(left, xy[2 * i]!)
    right = Math.max(right, xy[2 * i]!)
    bottom = Math.min(bottom, xy[2 * i + 1]!)
    top = Math.max(top, xy[2 * i + 1]!)
  }

  // Per contour: its normals, its box for telling a mark, and its signed area and length (on its
  // control polygon, which follows the curve closely enough) for the stroke's width.
  const boxes: Array<{ bottom: number; top: number; area: number }> = []
  let inked = 0
  let perimeter = 0
  let start = 0
  while (start < count) {
    let end = start
    while (end < count && contourOf[end] === contourOf[start]) end++
    let boxBottom = Infinity
    let boxTop = -Infinity
    let boxLeft = Infinity
    let boxRight = -Infinity
    for (let i = start; i < end; i++) {
      const previous = i > start ? i - 1 : end - 1
      const next = i + 1 < end ? i + 1 : start
      const dx = xy[2 * next]! - xy[2 * previous]!
      const dy = xy[2 * next + 1]! - xy[2 * previous + 1]!
      const norm = Math.hypot(dx, dy) || 1
      normals[2 * i] = dy / norm
      normals[2 * i + 1] = -dx / norm
      inked += (xy[2 * i]! * xy[2 * next + 1]! - xy[2 * next]! * xy[2 * i + 1]!) / 2
      perimeter += Math.hypot(xy[2 * next]! - xy[2 * i]!, xy[2 * next + 1]! - xy[2 * i + 1]!)
      boxBottom = Math.min(boxBottom, xy[2 * i + 1]!)
      boxTop = Math.max(boxTop, xy[2 * i + 1]!)
      boxLeft = Math.min(boxLeft, xy[2 * i]!)
      boxRight = Math.max(boxRight, xy[2 * i]!)
    }
    boxes.push({ bottom: boxBottom, top: boxTop, area: (boxTop - boxBottom) * (boxRight - boxLeft) })
    start = end
  }

  // The normals point away from the ink: ink lies on one side of every contour of a glyph (the
  // right in TrueType, whose outer contours run clockwise; the left in CFF), the side its signed
  // area says.
  if (inked < 0) for (let i = 0; i < normals.length; i++) normals[i] = -normals[i]!

  // The body is the largest contour; a letter's counter (the inside of an o) lies within it.
  marksOf(boxes.map((box) => ({ ...box, extent: box.area }))).forEach((mark, index) => (marks[index] = mark ? 1 : 0))

  if (joinedAdvance !== null) {
    for (let i = 0; i < count; i++) if (!marks[contourOf[i]!]) freedom[i] = joinFreedom(xy[2 * i]!, joinedAdvance)
  }

  const size = Math.max(top - bottom, MIN_HEIGHT)
  const frame = bendFrame({ left, bottom, width: right - left, height: top - bottom }, size)
  const bendCells = new Uint16Array(count)
  const bendWeights = new Float64Array(count * 8)
  const quadratic = spline === 'quadratic'
  for (let i = 0; i < count; i++) {
    const x = xy[2 * i]!
    const y = xy[2 * i + 1]!
    bendCells[i] = bendSpot(frame, x, y, bendWeights, 8 * i, quadratic)
  }

  return {
    ops: Uint8Array.from(ops),
    points: xy,
    contourOf: Uint16Array.from(contourOf),
    anchorOf: Uint32Array.from(anchorOf),
    anchors: Uint32Array.from(anchorOf.flatMap((anchor, index) => (anchor === index ? [index] : []))),
    normals,
    freedom,
    marks,
    contours,
    left,
    bottom,
    width: right - left,
    height: top - bottom,
    stroke: perimeter > 0 ? (2 * Math.abs(inked)) / perimeter : 0,
    bendCells,
    bendWeights,
    cx: frame.cx,
    cy: frame.cy,
    quadratic,
    bentHandles: style.bentHandles,
  }
}

/** Reused by every instance: a card varies some 700 glyphs. */
const scratch = {
  grid: new Float64Array(GRID * GRID * 2),
  drift: new Float64Array(16),
  moved: new Float64Array(2),
  weights: new Float64Array(8),
}

/** A box in ems, y up. */
export interface EmBox {
  left: number
  bottom: number
  width: number
  height: number
}

/**
 * Where a bend's grid lies over a glyph's box: it spans the box made square (its height or width,
 * the larger), so that its cells are as wide as they are tall and a narrow letter bends as a wide
 * one does. It depends on the box alone, so an outline's points find their cells once (outlineOf).
 */
interface BendFrame {
  cx: number
  cy: number
  /** The grid's cells per unit of the box, from its lower left corner (x0, y0). */
  scale: number
  x0: number
  y0: number
}

function bendFrame(box: EmBox, size: number): BendFrame {
  const cx = box.left + box.width / 2
  const cy = box.bottom + box.height / 2
  const span = Math.max(size, box.width)
  return { cx, cy, scale: CELLS / span, x0: cx - span / 2, y0: cy - span / 2 }
}

/**
 * One instance's bend: the grid's random moves (scratch.grid), drawn from `random`, as far as a
 * glyph of `size` bends. One grid at a time: an instance is bent before the next is drawn. With
 * `halves`, each of `random`'s numbers (32 bits) gives two moves of 16 bits each: as fine as a
 * move needs, in half the draws.
 */
function drawBend(random: () => number, size: number, halves = false, grid = GRID): void {
  const moves = scratch.grid
  const reach = (grid === QUADRATIC_GRID ? QUADRATIC_BEND : BEND) * size
  if (!halves) {
    for (let k = 0; k < grid * grid * 2; k++) moves[k] = random() * reach
    return
  }
  for (let k = 0; k < grid * grid * 2; k += 2) {
    // random() is a 32-bit number over 2^31, less one: its high and low 16 bits.
    const high = (random() + 1) * 32768
    const whole = Math.floor(high)
    moves[k] = (whole / 32768 - 1) * reach
    moves[k + 1] = ((high - whole) * 2 - 1) * reach
  }
}

const LAST_CELL = CELLS - 1e-9

/**
 * Where (x, y) reads the grid: the first of the moves it blends (its index in the grid, returned)
 * and the B-spline's weights across and up, written into `weights` from `at` and `at` + 4: four
 * each for the cubic bend (4 × 4 moves), three each for the quadratic one (3 × 3).
 */
function bendSpot(frame: BendFrame, x: number, y: number, weights: Float64Array, at: number, quadratic: boolean): number {
  const u = Math.min(LAST_CELL, Math.max(0, (x - frame.x0) * frame.scale))
  const v = Math.min(LAST_CELL, Math.max(0, (y - frame.y0) * frame.scale))
  const column = u | 0
  const row = v | 0
  const f = u - column
  const g = v - row
  if (quadratic) {
    weights[at] = ((1 - f) * (1 - f)) / 2
    weights[at + 1] = (-2 * f * f + 2 * f + 1) / 2
    weights[at + 2] = (f * f) / 2
    weights[at + 4] = ((1 - g) * (1 - g)) / 2
    weights[at + 5] = (-2 * g * g + 2 * g + 1) / 2
    weights[at + 6] = (g * g) / 2
    return (row * QUADRATIC_GRID + column) * 2
  }
  const f2 = f * f
  const f3 = f2 * f
  const g2 = g * g
  const g3 = g2 * g
  weights[at] = (1 - 3 * f + 3 * f2 - f3) / 6
  weights[at + 1] = (3 * f3 - 6 * f2 + 4) / 6
  weights[at + 2] = (-3 * f3 + 3 * f2 + 3 * f + 1) / 6
  weights[at + 3] = f3 / 6
  weights[at + 4] = (1 - 3 * g + 3 * g2 - g3) / 6
  weights[at + 5] = (3 * g3 - 6 * g2 + 4) / 6
  weights[at + 6] = (-3 * g3 + 3 * g2 + 3 * g + 1) / 6
  weights[at + 7] = g3 / 6
  return (row * GRID + column) * 2
}

/** As bendMove, for a quadratic bend's cell and weights (bendSpot). */
function quadraticMove(cell: number, weights: Float64Array, at: number, out: Float64Array): void {
  const grid = scratch.grid
  const a0 = weights[at]!
  const a1 = weights[at + 1]!
  const a2 = weights[at + 2]!
  const b0 = weights[at + 4]!
  const b1 = weights[at + 5]!
  const b2 = weights[at + 6]!
  const l1 = cell + QUADRATIC_GRID * 2
  const l2 = l1 + QUADRATIC_GRID * 2
  out[0] =
    b0 * (a0 * grid[cell]! + a1 * grid[cell + 2]! + a2 * grid[cell + 4]!) +
    b1 * (a0 * grid[l1]! + a1 * grid[l1 + 2]! + a2 * grid[l1 + 4]!) +
    b2 * (a0 * grid[l2]! + a1 * grid[l2 + 2]! + a2 * grid[l2 + 4]!)
  out[1] =
    b0 * (a0 * grid[cell + 1]! + a1 * grid[cell + 3]! + a2 * grid[cell + 5]!) +
    b1 * (a0 * grid[l1 + 1]! + a1 * grid[l1 + 3]! + a2 * grid[l1 + 5]!) +
    b2 * (a0 * grid[l2 + 1]! + a1 * grid[l2 + 3]! + a2 * grid[l2 + 5]!)
}

/** The bend's move at a spot (bendSpot's cell and weights), ems, into `out`: the grid's moves blended. */
function bendMove(cell: number, weights: Float64Array, at: number, out: Float64Array): void {
  const grid = scratch.grid
  const a0 = weights[at]!
  const a1 = weights[at + 1]!
  const a2 = weights[at + 2]!
  const a3 = weights[at + 3]!
  let dx = 0
  let dy = 0
  let line = cell
  for (let b = 0; b < 4; b++, line += GRID * 2) {
    const wb = weights[at + 4 + b]!
    dx += wb * (a0 * grid[line]! + a1 * grid[line + 2]! + a2 * grid[line + 4]! + a3 * grid[line + 6]!)
    dy += wb * (a0 * grid[line + 1]! + a1 * grid[line + 3]! + a2 * grid[line + 5]! + a3 * grid[line + 7]!)
  }
  out[0] = dx
  out[1] = dy
}

/** A pen's stroke, a polyline in ems (y up). */
export type EmStroke = ReadonlyArray<readonly [number, number]>

/**
 * Points along a stroke at most this far apart, in ems, before it is bent: a straight stroke of
 * two points (a t's cross) would bend as a straight line, which an affine map matches.
 */
const STROKE_STEP = 0.05

/**
 * One instance of a pen's glyph: its strokes bent by a field drawn from `random` as an outline's
 * are, and a dot or an accent (a stroke wholly above or below the rest) drifted on its own, each
 * point by `variation`, a share, of its move. For a joined hand (`joinedAdvance`, the glyph's
 * advance) the bend fades to none at the glyph's sides, where its strokes meet the letters before
 * and after it.
 */
export function varyStrokes(strokes: readonly EmStroke[], random: () => number, joinedAdvance: number | null, variation = 1): Array<Array<[number, number]>> {
  let left = Infinity
  let right = -Infinity
  let bottom = Infinity
  let top = -Infinity
  for (const stroke of strokes)
    for (const [x, y] of stroke) {
      left = Math.min(left, x)
      right = Math.max(right, x)
      bottom = Math.min(bottom, y)
      top = Math.max(top, y)
    }
  if (!Number.isFinite(left)) return []
  const box = { left, bottom, width: right - left, height: top - bottom }
  const size = Math.max(box.height, MIN_HEIGHT)
  drawBend(random, size)
  const frame = bendFrame(box, size)
  const weights = scratch.weights
  // The body is the stroke that reaches lowest and highest.
  const marks = marksOf(
    strokes.map((stroke) => {
      const [bottom, top] = stroke.reduce((span, [, y]) => [Math.min(span[0], y), Math.max(span[1], y)], [Infinity, -Infinity])
      return { bottom, top, extent: top - bottom }
    }),
  )
  const moved = scratch.moved
  return strokes.map((stroke, index) => {
    const mark = marks[index]!
    const drift = mark ? [random() * MARK_DRIFT[0]!, random() * MARK_DRIFT[1]!] : [0, 0]
    const dense: Array<[number, number]> = []
    stroke.forEach(([x, y], at) => {
      if (at > 0) {
        const [px, py] = stroke[at - 1]!
        const steps = Math.ceil(Math.hypot(x - px, y - py) / STROKE_STEP)
        for (let step = 1; step < steps; step++) dense.push([px + ((x - px) * step) / steps, py + ((y - py) * step) / steps])
      }
      dense.push([x, y])
    })
    return dense.map(([x, y]): [number, number] => {
      bendMove(bendSpot(frame, x, y, weights, 0, false), weights, 0, moved)
      const free = (joinedAdvance !== null && !mark ? joinFreedom(x, joinedAdvance) : 1) * variation
      return [x + moved[0]! * free + drift[0]! * variation, y + moved[1]! * free + drift[1]! * variation]
    })
  })
}

/**
 * One instance of the outline: its points bent, pressed and its marks drifted by moves drawn from
 * a generator seeded with `seed` (shapeRandom's numbers), written into `out` (x, y in ems); each point moved by `variation`, a share, of its move.
 * The outline's style says how (OutlineStyle, kept with it by outlineOf).
 */
export function varyOutline(outline: Outline, seed: number, out: Float64Array, variation = 1): void {
  outlineState = seed | 0
  const random = outlineRandom
  const { points, contourOf, anchorOf, anchors, normals, freedom, marks, contours, bendCells, bendWeights, quadratic, bentHandles } = outline
  const size = Math.max(outline.height, MIN_HEIGHT)
  drawBend(random, size, bentHandles, quadratic ? QUADRATIC_GRID : GRID)
  const { cx, cy } = outline
  if (scratch.drift.length < contours * 2) scratch.drift = new Float64Array(contours * 2)
  const { drift } = scratch
  for (let c = 0; c < contours; c++) {
    drift[2 * c] = marks[c] ? random() * MARK_DRIFT[0]! : 0
    drift[2 * c + 1] = marks[c] ? random() * MARK_DRIFT[1]! : 0
  }
  // Pressure: heavier on one side of the glyph, or towards its top or foot; never lighter than
  // the font's own line widened by a pen's least (INK_SPREAD), as a script's hairlines, which a
  // bend may thin where it pulls a stroke's two sides apart, are thicker from a pen than from a font.
  const press = (PRESSURE * outline.stroke) / 2
  const p0 = INK_SPREAD + press + random() * press * 0.5
  const px = (random() * press * 0.5) / size
  const py = (random() * press * 0.5) / size
  const moved = scratch.moved
  const count = contourOf.length
  if (bentHandles) {
    // Every point bent where it is, and pressed, drifted and held (a joined hand's sides) as the
    // end it belongs to is: a smooth join's handles move alike but for the bend, which is smooth.
    for (let i = 0; i < count; i++) {
      const anchor = anchorOf[i]!
      if (quadratic) quadraticMove(bendCells[i]!, bendWeights, 8 * i, moved)
      else bendMove(bendCells[i]!, bendWeights, 8 * i, moved)
      const pressure = p0 + px * (points[2 * anchor]! - cx) + py * (points[2 * anchor + 1]! - cy)
      const free = freedom[anchor]!
      // Bent as far as it or its end is free, the less.
      const bent = Math.min(free, freedom[i]!)
      const c = contourOf[anchor]!
      out[2 * i] = points[2 * i]! + moved[0]! * bent + pressure * normals[2 * anchor]! * free + drift[2 * c]!
      out[2 * i + 1] = points[2 * i + 1]! + moved[1]! * bent + pressure * normals[2 * anchor + 1]! * free + drift[2 * c + 1]!
    }
  } else {
    // The anchors' displacements first (into `out`), then every point moved as its anchor is.
    for (let n = 0; n < anchors.length; n++) {
      const i = anchors[n]!
      const c = contourOf[i]!
      const x = points[2 * i]!
      const y = points[2 * i + 1]!
      if (quadratic) quadraticMove(bendCells[i]!, bendWeights, 8 * i, moved)
      else bendMove(bendCells[i]!, bendWeights, 8 * i, moved)
      const pressure = p0 + px * (x - cx) + py * (y - cy)
      const free = freedom[i]!
      out[2 * i] = (moved[0]! + pressure * normals[2 * i]!) * free + drift[2 * c]!
      out[2 * i + 1] = (moved[1]! + pressure * normals[2 * i + 1]!) * free + drift[2 * c + 1]!
    }
    // Each point moves as its anchor does: a curve's handles with the points they leave and
    // reach, so the curve's tangent there (a smooth join between two curves) is kept.
    for (let i = 0; i < count; i++) {
      const anchor = anchorOf[i]!
      if (anchor === i) continue
      out[2 * i] = points[2 * i]! + out[2 * anchor]!
      out[2 * i + 1] = points[2 * i + 1]! + out[2 * anchor + 1]!
    }
    for (let n = 0; n < anchors.length; n++) {
      const i = anchors[n]!
      out[2 * i] = out[2 * i]! + points[2 * i]!
      out[2 * i + 1] = out[2 * i + 1]! + points[2 * i + 1]!
    }
  }
  if (variation !== 1) for (let k = 0; k < count * 2; k++) out[k] = points[k]! + (out[k]! - points[k]!) * variation
}

/**
 * A font's outline as few cubic curves as follow it within `tolerance` ems. Handwriting fonts are
 * digitized pens: a glyph holds 50 to 140 quadratic pieces where a dozen cubic ones draw the same
 * line, and every point of a varied glyph is written out per instance. Each contour is cut at its
 * corners (where the direction turns by more than CORNER), sampled densely, and fitted piece by
 * piece, a piece split where it strays most until it follows (Schneider's method).
 */
export function simplifiedPath(path: PathCommands, tolerance: number): PathCommands {
  const commands: Array<{ command: string; args: number[] }> = []
  for (const contour of contoursOf(path)) {
    const runs = cornersCut(contour)
    commands.push({ command: 'moveTo', args: [runs[0]![0]![0], runs[0]![0]![1]] })
    for (const run of runs) fitRun(run, tolerance, commands)
    commands.push({ command: 'closePath', args: [] })
  }
  return { commands }
}

type Pt = [number, number]
/** A contour as its pieces: each a list of points from its start to its end, densely sampled, with the start of each source segment marked. */
interface Piece {
  points: Pt[]
}

const CORNER = (35 * Math.PI) / 180
const SAMPLES = 6

/** Each closed contour of a path as its segments, sampled (a segment's own points from just after its start to its end). */
function contoursOf(path: PathCommands): Piece[][] {
  const contours: Piece[][] = []
  let current: Piece[] = []
  let start: Pt = [0, 0]
  let last: Pt = [0, 0]
  const close = () => {
    if (current.length > 0 && (last[0] !== start[0] || last[1] !== start[1])) current.push({ points: [start] })
    if (current.length > 0) contours.push(current)
    current = []
  }
  for (const { command, args } of path.commands) {
    if (command === 'moveTo') {
      close()
      start = last = [args[0]!, args[1]!]
    } else if (command === 'lineTo') {
      const to: Pt = [args[0]!, args[1]!]
      if (to[0] !== last[0] || to[1] !== last[1]) current.push({ points: [to] })
      last = to
    } else if (command === 'quadraticCurveTo' || command === 'bezierCurveTo') {
      const from = last
      const control = command === 'quadraticCurveTo' ? [args[0]!, args[1]!] : args.slice(0, 4)
      const to: Pt = [args.at(-2)!, args.at(-1)!]
      const points: Pt[] = []
      for (let i = 1; i <= SAMPLES; i++) {
        const t = i / SAMPLES
        const u = 1 - t
        if (command === 'quadraticCurveTo')
          points.push([u * u * from[0] + 2 * u * t * control[0]! + t * t * to[0], u * u * from[1] + 2 * u * t * control[1]! + t * t * to[1]])
        else
          points.push([
            u * u * u * from[0] + 3 * u * u * t * control[0]! + 3 * u * t * t * control[2]! + t * t * t * to[0],
            u * u * u * from[1] + 3 * u * u * t * control[1]! + 3 * u * t * t * control[3]! + t * t * t * to[1],
          ])
      }
      current.push({ points })
      last = to
    } else if (command === 'closePath') close()
  }
  close()
  return contours
}

const direction = (from: Pt, to: Pt) => Math.atan2(to[1] - from[1], to[0] - from[0])
const turn = (a: number, b: number) => Math.abs(((b - a + 3 * Math.PI) % (2 * Math.PI)) - Math.PI)

/** A closed contour cut at its corners into runs of points, each run starting where the last ended; a smooth contour is one run, from its start round to it. */
function cornersCut(pieces: Piece[]): Pt[][] {
  const ends = pieces.map((piece) => piece.points.at(-1)!)
  const n = pieces.length
  const corner = pieces.map((piece, index) => {
    // At the start of this piece: the direction in (end of the one before) against the direction out.
    const previous = pieces[(index - 1 + n) % n]!
    const before = previous.points.length > 1 ? previous.points.at(-2)! : ends[(index - 2 + n) % n]!
    const at = ends[(index - 1 + n) % n]!
    return turn(direction(before, at), direction(at, piece.points[0]!)) > CORNER
  })
  const first = corner.indexOf(true)
  const startAt = first === -1 ? 0 : first
  const runs: Pt[][] = []
  let run: Pt[] = [ends[(startAt - 1 + n) % n]!]
  for (let k = 0; k < n; k++) {
    const index = (startAt + k) % n
    if (k > 0 && corner[index]) {
      runs.push(run)
      run = [run.at(-1)!]
    }
    run.push(...pieces[index]!.points)
  }
  runs.push(run)
  return runs
}

const sub = (a: Pt, b: Pt): Pt => [a[0] - b[0], a[1] - b[1]]
const unit = (v: Pt): Pt => {
  const length = Math.hypot(v[0], v[1]) || 1
  return [v[0] / length, v[1] / length]
}

/** Fits cubic curves to a run of points from its first to its last, appending them. */
function fitRun(points: Pt[], tolerance: number, out: Array<{ command: string; args: number[] }>): void {
  if (points.length < 3) {
    out.push({ command: 'lineTo', args: [...points.at(-1)!] })
    return
  }
  fitCubic(points, unit(sub(points[1]!, points[0]!)), unit(sub(points.at(-2)!, points.at(-1)!)), tolerance, out, 0)
}

function fitCubic(points: Pt[], tangentStart: Pt, tangentEnd: Pt, tolerance: number, out: Array<{ command: string; args: number[] }>, depth: number): void {
  const last = points.at(-1)!
  if (points.length === 2) {
    out.push({ command: 'lineTo', args: [...last] })
    return
  }
  // Chord-length places of the points along the curve.
  const places = [0]
  for (let i = 1; i < points.length; i++) places.push(places[i - 1]! + Math.hypot(points[i]![0] - points[i - 1]![0], points[i]![1] - points[i - 1]![1]))
  const total = places.at(-1)! || 1
  for (let i = 0; i < places.length; i++) places[i]! /= total
  let curve = leastSquares(points, places, tangentStart, tangentEnd)
  let [error, worst] = strayOf(points, places, curve)
  for (let pass = 0; pass < 3 && error > tolerance && error < tolerance * 16; pass++) {
    for (let i = 0; i < places.length; i++) places[i] = newtonStep(curve, points[i]!, places[i]!)
    curve = leastSquares(points, places, tangentStart, tangentEnd)
    ;[error, worst] = strayOf(points, places, curve)
  }
  if (error <= tolerance || depth > 12 || points.length < 4) {
    out.push({ command: 'bezierCurveTo', args: [...curve[1], ...curve[2], ...last] })
    return
  }
  const split = Math.min(points.length - 2, Math.max(1, worst))
  const centre = unit(sub(points[split - 1]!, points[split + 1]!))
  fitCubic(points.slice(0, split + 1), tangentStart, centre, tolerance, out, depth + 1)
  fitCubic(points.slice(split), [-centre[0], -centre[1]], tangentEnd, tolerance, out, depth + 1)
}

type Cubic = [Pt, Pt, Pt, Pt]

function bezierAt(curve: Cubic, t: number): Pt {
  const u = 1 - t
  const [p0, p1, p2, p3] = curve
  return [
    u * u * u * p0[0] + 3 * u * u * t * p1[0] + 3 * u * t * t * p2[0] + t * t * t * p3[0],
    u * u * u * p0[1] + 3 * u * u * t * p1[1] + 3 * u * t * t * p2[1] + t * t * t * p3[1],
  ]
}

/** The two inner control points along the end tangents that bring the curve closest to the points at their places. */
function leastSquares(points: Pt[], places: number[], tangentStart: Pt, tangentEnd: Pt): Cubic {
  const first = points[0]!
  const last = points.at(-1)!
  let c00 = 0
  let c01 = 0
  let c11 = 0
  let x0 = 0
  let x1 = 0
  for (let i = 0; i < points.length; i++) {
    const t = places[i]!
    const u = 1 - t
    const b1 = 3 * u * u * t
    const b2 = 3 * u * t * t
    const a1: Pt = [tangentStart[0] * b1, tangentStart[1] * b1]
    const a2: Pt = [tangentEnd[0] * b2, tangentEnd[1] * b2]
    c00 += a1[0] * a1[0] + a1[1] * a1[1]
    c01 += a1[0] * a2[0] + a1[1] * a2[1]
    c11 += a2[0] * a2[0] + a2[1] * a2[1]
    const b0 = u * u * u + b1
    const b3 = b2 + t * t * t
    const rest: Pt = [points[i]![0] - (first[0] * b0 + last[0] * b3), points[i]![1] - (first[1] * b0 + last[1] * b3)]
    x0 += a1[0] * rest[0] + a1[1] * rest[1]
    x1 += a2[0] * rest[0] + a2[1] * rest[1]
  }
  const determinant = c00 * c11 - c01 * c01
  const chord = Math.hypot(last[0] - first[0], last[1] - first[1])
  let alpha1 = determinant === 0 ? 0 : (x0 * c11 - x1 * c01) / determinant
  let alpha2 = determinant === 0 ? 0 : (c00 * x1 - c01 * x0) / determinant
  // A degenerate or backwards fit: a third of the chord along each tangent.
  if (!(alpha1 > chord * 1e-6) || !(alpha2 > chord * 1e-6)) alpha1 = alpha2 = chord / 3
  return [
    first,
    [first[0] + tangentStart[0] * alpha1, first[1] + tangentStart[1] * alpha1],
    [last[0] + tangentEnd[0] * alpha2, last[1] + tangentEnd[1] * alpha2],
    last,
  ]
}

/** The farthest any point lies from the curve at its place, and which point. */
function strayOf(points: Pt[], places: number[], curve: Cubic): [number, number] {
  let error = 0
  let worst = Math.floor(points.length / 2)
  for (let i = 1; i < points.length - 1; i++) {
    const at = bezierAt(curve, places[i]!)
    const distance = Math.hypot(at[0] - points[i]![0], at[1] - points[i]![1])
    if (distance > error) {
      error = distance
      worst = i
    }
  }
  return [error, worst]
}

/** A better place for a point on the curve: one Newton step towards the curve's nearest point. */
function newtonStep(curve: Cubic, point: Pt, t: number): number {
  const [p0, p1, p2, p3] = curve
  const u = 1 - t
  const at = bezierAt(curve, t)
  const d1: Pt = [
    3 * (u * u * (p1[0] - p0[0]) + 2 * u * t * (p2[0] - p1[0]) + t * t * (p3[0] - p2[0])),
    3 * (u * u * (p1[1] - p0[1]) + 2 * u * t * (p2[1] - p1[1]) + t * t * (p3[1] - p2[1])),
  ]
  const d2: Pt = [
    6 * (u * (p2[0] - 2 * p1[0] + p0[0]) + t * (p3[0] - 2 * p2[0] + p1[0])),
    6 * (u * (p2[1] - 2 * p1[1] + p0[1]) + t * (p3[1] - 2 * p2[1] + p1[1])),
  ]
  const diff = sub(at, point)
  const numerator = diff[0] * d1[0] + diff[1] * d1[1]
  const denominator = d1[0] * d1[0] + d1[1] * d1[1] + diff[0] * d2[0] + diff[1] * d2[1]
  if (denominator === 0) return t
  return Math.min(1, Math.max(0, t - numerator / denominator))
}
