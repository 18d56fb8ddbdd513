import svgpath from 'svgpath'

type Point = [number, number]

/** One move of a path, absolute: a move to a point, a line, a cubic curve (its two control points and its end), a close. */
export type PathSegment = { kind: 'move' | 'line'; to: Point } | { kind: 'curve'; c1: Point; c2: Point; to: Point } | { kind: 'close' }

/**
 * SVG path data (a signature's: M, L, C, Q, Z; other commands are taken too) as moves, lines,
 * cubic curves and closes, absolute: the one reading of a signature that the printer strokes and
 * the plotter flattens, so both draw the same curves. svgpath makes the data absolute and turns
 * arcs and shorthand curves into curves; a quadratic is raised to the cubic that is the same curve
 * (pdfkit's own `path` writes a quadratic as PDF's `v`, which is another curve).
 */
export function pathSegments(d: string): PathSegment[] {
  const segments: PathSegment[] = []
  svgpath(d)
    .abs()
    .unarc()
    .unshort()
    .iterate((segment, _index, x, y) => {
      switch (segment[0]) {
        case 'M':
          segments.push({ kind: 'move', to: [segment[1], segment[2]] })
          break
        case 'L':
          segments.push({ kind: 'line', to: [segment[1], segment[2]] })
          break
        case 'H':
          segments.push({ kind: 'line', to: [segment[1], y] })
          break
        case 'V':
          segments.push({ kind: 'line', to: [x, segment[1]] })
          break
        case 'C':
          segments.push({ kind: 'curve', c1: [segment[1], segment[2]], c2: [segment[3], segment[4]], to: [segment[5], segment[6]] })
          break
        case 'Q': {
          const [, qx, qy, ex, ey] = segment
          segments.push({
            kind: 'curve',
            c1: [x + (2 / 3) * (qx - x), y + (2 / 3) * (qy - y)],
            c2: [ex + (2 / 3) * (qx - ex), ey + (2 / 3) * (qy - ey)],
            to: [ex, ey],
          })
          break
        }
        case 'Z':
        case 'z':
          segments.push({ kind: 'close' })
          break
        default:
          throw new RangeError(`a signature's path uses ${segment[0]}, which svgpath should have turned absolute`)
      }
    })
  return segments
}

/**
 * A path as the polylines a pen draws, one per subpath, in the path's own units: lines as they
 * are, curves cut into straight moves that stay within `tolerance` of the curve. A cubic cut into
 * n equal steps of t strays from its chords by at most max|B''| / (8 n²), and |B''| is at most 6
 * times the larger of its two second differences. A lone move stays a polyline of one point: the
 * plotter sets the pen down on it, a dot.
 */
export function flattenPath(d: string, tolerance: number): Point[][] {
  const polylines: Point[][] = []
  let line: Point[] = []
  let start: Point = [0, 0]
  let at: Point = [0, 0]
  const to = (point: Point) => {
    // Drawing on after a close, or before any move, starts from where the pen is.
    if (line.length === 0) polylines.push((line = [at]))
    line.push((at = point))
  }
  for (const segment of pathSegments(d)) {
    switch (segment.kind) {
      case 'move':
        polylines.push((line = [(start = at = segment.to)]))
        break
      case 'line':
        to(segment.to)
        break
      case 'curve': {
        const [x0, y0] = at
        const [[x1, y1], [x2, y2], [x3, y3]] = [segment.c1, segment.c2, segment.to]
        const bend = 6 * Math.max(Math.hypot(x0 - 2 * x1 + x2, y0 - 2 * y1 + y2), Math.hypot(x1 - 2 * x2 + x3, y1 - 2 * y2 + y3))
        const steps = Math.max(1, Math.ceil(Math.sqrt(bend / (8 * tolerance))))
        for (let step = 1; step <= steps; step++) {
          const t = step / steps
          const u = 1 - t
          const [a, b, c, e] = [u * u * u, 3 * u * u * t, 3 * u * t * t, t * t * t]
          to([a * x0 + b * x1 + c * x2 + e * x3, a * y0 + b * y1 + c * y2 + e * y3])
        }
        break
      }
      case 'close':
        to(start)
        // What follows a close starts from the subpath's start, in a new polyline.
        line = []
        break
    }
  }
  return polylines
}

/**
 * Polylines cut to the box from 0,0 to `width`, `height`: what lies outside is dropped, a line
 * that leaves the box ends at its edge and one that comes back starts again there. The printer
 * clips a signature to the box it declares; the plotter's strokes are cut the same way, so both
 * draw the same and a stray stroke never moves the rest of the card.
 */
export function clipToBox(lines: Point[][], width: number, height: number): Point[][] {
  const clipped: Point[][] = []
  for (const line of lines) {
    let current: Point[] | undefined
    for (let i = 1; i < line.length; i++) {
      const segment = clipSegment(line[i - 1]!, line[i]!, width, height)
      if (!segment) {
        current = undefined
        continue
      }
      const [from, to] = segment
      const last = current?.at(-1)
      if (!current || !last || last[0] !== from[0] || last[1] !== from[1]) clipped.push((current = [from]))
      current.push(to)
      // Cut at the far edge: the next segment starts outside, or again at this point.
      if (to[0] !== line[i]![0] || to[1] !== line[i]![1]) current = undefined
    }
  }
  return clipped
}

/** Liang–Barsky: the part of a segment inside the box, or undefined. */
function clipSegment(a: Point, b: Point, width: number, height: number): [Point, Point] | undefined {
  const dx = b[0] - a[0]
  const dy = b[1] - a[1]
  let enter = 0
  let leave = 1
  for (const [p, q] of [
    [-dx, a[0]],
    [dx, width - a[0]],
    [-dy, a[1]],
    [dy, height - a[1]],
  ] as const) {
    if (p === 0) {
      if (q < 0) return undefined
      continue
    }
    const t = q / p
    if (p < 0) enter = Math.max(enter, t)
    else leave = Math.min(leave, t)
    if (enter > leave) return undefined
  }
  const at = (t: number): Point => (t === 0 ? a : t === 1 ? b : [a[0] + t * dx, a[1] + t * dy])
  return [at(enter), at(leave)]
}
