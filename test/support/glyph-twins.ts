import { OPS, getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs'

/**
 * A shape drawn on a page: its structure (the sequence of its path's operators, or its point
 * count for a pen's stroke) and its points in page space.
 */
export interface DrawnShape {
  structure: string
  /** x, y pairs. */
  points: number[]
  /** The colour it is filled with, #rrggbb (a pen's stroke: undefined). */
  fill?: string
}

type Matrix = [number, number, number, number, number, number]

const multiply = (m: Matrix, n: Matrix): Matrix => [
  m[0] * n[0] + m[1] * n[2],
  m[0] * n[1] + m[1] * n[3],
  m[2] * n[0] + m[3] * n[2],
  m[2] * n[1] + m[3] * n[3],
  m[4] * n[0] + m[5] * n[2] + n[4],
  m[4] * n[1] + m[5] * n[3] + n[5],
]

/**
 * Every filled path of a PDF drawn with curves or lines (a glyph written as its own outline), its
 * points mapped to the page: read from the operators a PDF reader runs, as a reader's eye would
 * see them. Rectangles (a barcode's bars) and stroked lines (a signature's drawing) are left out.
 */
export async function filledShapes(pdf: Buffer | Uint8Array): Promise<DrawnShape[]> {
  // Errors only: an envelope's small print is in a standard font pdf.js would look for, and warns.
  const document = await getDocument({ data: new Uint8Array(pdf), useSystemFonts: false, isEvalSupported: false, verbosity: 0 }).promise
  const shapes: DrawnShape[] = []
  for (let number = 1; number <= document.numPages; number++) {
    const page = await document.getPage(number)
    const { fnArray, argsArray } = await page.getOperatorList()
    let ctm: Matrix = [1, 0, 0, 1, 0, 0]
    let fill = '#000000'
    const stack: Array<{ ctm: Matrix; fill: string }> = []
    let ops: number[] = []
    let points: number[] = []
    let rectangles = false
    fnArray.forEach((fn, index) => {
      const args = argsArray[index] as unknown[]
      if (fn === OPS.save) stack.push({ ctm, fill })
      else if (fn === OPS.restore) ({ ctm, fill } = stack.pop() ?? { ctm: [1, 0, 0, 1, 0, 0], fill: '#000000' })
      else if (fn === OPS.setFillRGBColor) fill = `#${Array.from(args as unknown as ArrayLike<number>, (part) => part.toString(16).padStart(2, '0')).join('')}`
      else if (fn === OPS.transform) ctm = multiply(args as Matrix, ctm)
      else if (fn === OPS.constructPath) {
        const [pathOps, coordinates] = args as [number[], number[]]
        let at = 0
        for (const op of pathOps) {
          const count =
            op === OPS.moveTo || op === OPS.lineTo ? 2 : op === OPS.curveTo ? 6 : op === OPS.curveTo2 || op === OPS.curveTo3 ? 4 : op === OPS.rectangle ? 4 : 0
          if (op === OPS.rectangle) rectangles = true
          ops.push(op)
          for (let k = 0; k < count; k += 2) {
            const x = coordinates[at + k]!
            const y = coordinates[at + k + 1]!
            points.push(ctm[0] * x + ctm[2] * y + ctm[4], ctm[1] * x + ctm[3] * y + ctm[5])
          }
          at += count
        }
      } else if (fn === OPS.fill || fn === OPS.eoFill || fn === OPS.stroke || fn === OPS.endPath || fn === OPS.fillStroke) {
        if ((fn === OPS.fill || fn === OPS.eoFill) && !rectangles && points.length >= 6) shapes.push({ structure: ops.join(','), points, fill })
        ops = []
        points = []
        rectangles = false
      }
    })
  }
  return shapes
}

/**
 * How far `from` is from `to` after the affine map that brings it closest (least squares): the
 * root mean square of the distances left, as a share of `to`'s height. Both have the same number
 * of points, in the same order.
 */
export function affineDistance(from: readonly number[], to: readonly number[]): number {
  const n = from.length / 2
  let fx = 0
  let fy = 0
  let tx = 0
  let ty = 0
  let top = -Infinity
  let bottom = Infinity
  for (let i = 0; i < n; i++) {
    fx += from[2 * i]!
    fy += from[2 * i + 1]!
    tx += to[2 * i]!
    ty += to[2 * i + 1]!
    top = Math.max(top, to[2 * i + 1]!)
    bottom = Math.min(bottom, to[2 * i + 1]!)
  }
  fx /= n
  fy /= n
  tx /= n
  ty /= n
  // The 2 × 2 part: (Σ q pᵀ)(Σ p pᵀ)⁻¹ on centred points; the translation is the centres' difference.
  let sxx = 0
  let sxy = 0
  let syy = 0
  let qx_px = 0
  let qx_py = 0
  let qy_px = 0
  let qy_py = 0
  for (let i = 0; i < n; i++) {
    const px = from[2 * i]! - fx
    const py = from[2 * i + 1]! - fy
    const qx = to[2 * i]! - tx
    const qy = to[2 * i + 1]! - ty
    sxx += px * px
    sxy += px * py
    syy += py * py
    qx_px += qx * px
    qx_py += qx * py
    qy_px += qy * px
    qy_py += qy * py
  }
  const determinant = sxx * syy - sxy * sxy
  let [a, b, c, d] = [0, 0, 0, 0]
  if (Math.abs(determinant) > 1e-12 * (sxx + syy) ** 2) {
    a = (qx_px * syy - qx_py * sxy) / determinant
    b = (qx_py * sxx - qx_px * sxy) / determinant
    c = (qy_px * syy - qy_py * sxy) / determinant
    d = (qy_py * sxx - qy_px * sxy) / determinant
  }
  let sum = 0
  for (let i = 0; i < n; i++) {
    const px = from[2 * i]! - fx
    const py = from[2 * i + 1]! - fy
    const ex = a * px + b * py - (to[2 * i]! - tx)
    const ey = c * px + d * py - (to[2 * i + 1]! - ty)
    sum += ex * ex + ey * ey
  }
  return Math.sqrt(sum / n) / Math.max(top - bottom, 1e-9)
}

export interface TwinReport {
  shapes: number
  /** Shapes with no other of their structure within `threshold` of them after the best affine fit. */
  withoutTwin: number
  share: number
}

/**
 * The share of shapes that have no affine twin: no other shape of the same structure comes
 * within `threshold` (a share of the shape's height, RMS) of it after the affine map that brings
 * it closest. A glyph moved, sized and slanted is its original's twin; one whose outline itself
 * differs is not.
 */
export function twinReport(shapes: readonly DrawnShape[], threshold = 0.02): TwinReport {
  const groups = new Map<string, DrawnShape[]>()
  for (const shape of shapes) {
    const group = groups.get(shape.structure) ?? []
    group.push(shape)
    groups.set(shape.structure, group)
  }
  let withoutTwin = 0
  for (const group of groups.values())
    for (const shape of group) if (group.every((other) => other === shape || affineDistance(other.points, shape.points) >= threshold)) withoutTwin++
  return { shapes: shapes.length, withoutTwin, share: shapes.length === 0 ? 0 : withoutTwin / shapes.length }
}

/** A card's worth of Spanish, 600 characters of a thank-you note: what the spooled cards' shapes are measured on. */
export const THANK_YOU_CARD = (
  'Querida Lucía: muchas gracias por venir a la inauguración de la tienda el sábado pasado. Nos hizo muchísima ilusión verte allí con tu familia, ' +
  '¡y qué bien lo pasamos! ¿Te acuerdas de la mesa de papel japonés? Ya tenemos los sobres a juego que preguntaste, en azul y en verde. ' +
  'Si te apetece pasar a verlos, estaremos encantados. Un abrazo muy fuerte para Marta y los niños; esperamos veros pronto por Sevilla, ' +
  'quizá en primavera, cuando los naranjos están en flor y las tardes son largas. Te guardamos unas tarjetas de lino que acaban de llegar, ' +
  'con sus sobres forrados. Un beso enorme de todos.'
).slice(0, 600)
