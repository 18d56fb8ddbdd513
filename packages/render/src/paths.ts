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
