import svgpath from 'svgpath'
import { refuse } from './refusal.js'
import { attributeOf, SVG_NAMESPACE, type ParsedSvg, type XmlElement } from './svg.js'

export interface SignaturePaths {
  kind: 'paths'
  width: number
  height: number
  paths: string[]
}

/** Elements a signature of paths may hold: the strokes, the groups that place them, and their labels. */
const allowed = 'elementos <path>, agrupados si hace falta con <g>, y <title> o <desc>'

/**
 * A signature SVG as the printer and the plotter draw it: every path's data with its transforms
 * applied, in absolute M, L, C, Q and Z only, in the viewBox's coordinates moved so the viewBox
 * starts at 0,0. Anything drawn another way (shapes, text, images, references) is refused rather
 * than approximated, because the plotter can only follow paths.
 */
export function signaturePaths(svg: ParsedSvg): SignaturePaths {
  const origin = svg.viewBox ?? { x: 0, y: 0, width: svg.size.width, height: svg.size.height }
  const paths: string[] = []
  let pathCount = 0

  const visit = (element: XmlElement, transforms: string[]) => {
    for (const child of element.children) {
      if ('text' in child) continue
      // Editors keep their own data in their own namespaces (Inkscape's sodipodi:namedview): never drawn.
      if (child.uri !== svg.root.uri && child.uri !== SVG_NAMESPACE) continue
      if (hidden(child)) continue
      switch (child.local) {
        case 'title':
        case 'desc':
        case 'metadata':
          continue
        case 'defs':
          // An empty <defs/> is what editors write when nothing is defined; anything in it could be referenced.
          if (child.children.some((node) => !('text' in node)))
            refuse(`La firma tiene un elemento <defs> con contenido (línea ${child.line}): solo se admiten ${allowed}.`)
          continue
        case 'g':
          visit(child, withTransform(transforms, child))
          continue
        case 'path': {
          pathCount++
          const d = attributeOf(child, 'd')
          if (d === undefined || d.trim() === '') continue
          const path = normalizePath(d, withTransform(transforms, child), origin, child.line)
          if (path) paths.push(path)
          continue
        }
        default:
          refuse(
            `La firma contiene un elemento <${child.name}> (línea ${child.line}): una firma en SVG solo puede tener ${allowed}. Convierte formas y textos en trazos.`,
          )
      }
    }
  }
  visit(svg.root, [])

  if (paths.length === 0)
    refuse(
      pathCount === 0
        ? `La firma no contiene ningún trazo: debe tener al menos un elemento <path> con líneas o curvas (${allowed}).`
        : 'Los trazos de la firma no dibujan nada: sus <path> no tienen ninguna línea ni curva, solo desplazamientos.',
    )
  const width = round(origin.width)
  const height = round(origin.height)
  if (!(width > 0 && height > 0)) refuse('La firma no tiene tamaño: su viewBox (o su ancho y alto) es 0.')
  assertDrawable(paths, width, height)
  return { kind: 'paths', width, height, paths }
}

/** A signature a pen draws in seconds: this many moves, lines and curves at most. */
const MAX_SIGNATURE_SEGMENTS = 5_000
/** How far past its box a signature's points may reach, in boxes: what lies outside is cut, but numbers like 1e15 make curves no one can draw. */
const MAX_SIGNATURE_REACH = 10

/**
 * A signature is written by hand on every card, and drawn stroke by stroke by the plotter: one of
 * tens of thousands of strokes, or of points a universe away, would take a worker minutes and
 * gigabytes per letter after it was paid for. Refused at upload instead.
 */
function assertDrawable(paths: string[], width: number, height: number): void {
  let segments = 0
  const inReach = (value: number, size: number) => Number.isFinite(value) && value >= -MAX_SIGNATURE_REACH * size && value <= (MAX_SIGNATURE_REACH + 1) * size
  for (const d of paths) {
    svgpath(d).iterate((segment) => {
      segments++
      for (let i = 1; i < segment.length; i += 2) {
        if (!inReach(Number(segment[i]), width) || !inReach(Number(segment[i + 1]), height))
          refuse(`Un trazo de la firma llega a un punto muy lejos de su viewBox (${segment.join(' ').slice(0, 60)}): ajusta la firma a su viewBox.`)
      }
    })
  }
  if (segments > MAX_SIGNATURE_SEGMENTS)
    refuse(
      `La firma tiene ${segments.toLocaleString('es')} tramos: el máximo es ${MAX_SIGNATURE_SEGMENTS.toLocaleString('es')}, que el plóter dibuja en un tiempo razonable. Simplifica sus trazos.`,
    )
}

function hidden(element: XmlElement): boolean {
  const style = attributeOf(element, 'style') ?? ''
  return attributeOf(element, 'display')?.trim() === 'none' || /(^|;)\s*display\s*:\s*none\s*(;|$)/i.test(style)
}

function withTransform(transforms: string[], element: XmlElement): string[] {
  const transform = attributeOf(element, 'transform')?.trim()
  return transform ? [...transforms, transform] : transforms
}

/** Returns null when the path only moves (nothing for a pen to draw). */
function normalizePath(d: string, transforms: string[], origin: { x: number; y: number }, line: number): string | null {
  const parsed = svgpath(d)
  const error = (parsed as unknown as { err?: string }).err
  if (error) refuse(`La firma tiene un <path> con datos no válidos (línea ${line}): su atributo d no es una ruta SVG correcta.`)
  // An SVG transform list applies right to left, as svgpath's transform() reads it: the outermost group's first.
  let path = transforms.length > 0 ? parsed.transform(transforms.join(' ')) : parsed
  path = path.translate(-origin.x, -origin.y).abs().unarc().unshort()

  const out: string[] = []
  let drawable = false
  let bad = false
  path.iterate((segment, _index, x, y) => {
    const command = segment[0]
    const args = segment.slice(1) as number[]
    if (!args.every(Number.isFinite)) bad = true
    switch (command) {
      case 'M':
        out.push(`M${coords(args)}`)
        break
      case 'L':
      case 'C':
      case 'Q':
        drawable = true
        out.push(`${command}${coords(args)}`)
        break
      case 'H':
        drawable = true
        out.push(`L${coords([args[0]!, y])}`)
        break
      case 'V':
        drawable = true
        out.push(`L${coords([x, args[0]!])}`)
        break
      case 'Z':
      case 'z':
        out.push('Z')
        break
      default:
        // abs(), unarc() and unshort() leave nothing else; a command that slips through is not drawn as something else.
        bad = true
    }
  })
  if (bad) refuse(`La firma tiene un <path> que no se puede convertir en trazos (línea ${line}): revisa sus coordenadas y transformaciones.`)
  return drawable ? out.join('') : null
}

function round(value: number): number {
  const rounded = Math.round(value * 1000) / 1000
  return Object.is(rounded, -0) ? 0 : rounded
}

function coords(values: number[]): string {
  return values.map((value) => String(round(value))).join(' ')
}

/** The signature's print form: a small SVG of its paths, stroked as a pen would draw them. */
export function signatureSvg(signature: SignaturePaths, pixelSize?: { width: number; height: number }): string {
  const stroke = round(Math.max(signature.width, signature.height) / 250)
  const width = pixelSize ? pixelSize.width : signature.width
  const height = pixelSize ? pixelSize.height : signature.height
  return (
    `<svg xmlns="${SVG_NAMESPACE}" width="${width}" height="${height}" viewBox="0 0 ${signature.width} ${signature.height}">` +
    `<g fill="none" stroke="#000" stroke-width="${stroke}" stroke-linecap="round" stroke-linejoin="round">` +
    signature.paths.map((d) => `<path d="${d}"/>`).join('') +
    '</g></svg>'
  )
}
