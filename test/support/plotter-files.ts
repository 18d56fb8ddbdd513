import { XMLParser, XMLValidator } from 'fast-xml-parser'

/** A plotter page's size and the margins its pen keeps off, in millimetres. */
export interface PenArea {
  width: number
  height: number
  margin: number
}

export const cardArea: PenArea = { width: 148, height: 105, margin: 12 }
export const envelopeArea: PenArea = { width: 162, height: 114, margin: 10 }

const inArea = (area: PenArea, x: number, y: number) => x >= area.margin && x <= area.width - area.margin && y >= area.margin && y <= area.height - area.margin

/**
 * What a G-code file holds, read by its line grammar: every line one of the header, G21, G90,
 * the pen commands, `G0 X Y F`, `G1 X Y [F]` or M2; anything else throws. Returns the drawn
 * points with the pen state, and the points outside the pen area (expected: none).
 */
export function readGcode(text: string, area: PenArea, pen: { up: string; down: string }) {
  const lines = text.split('\n')
  if (lines.at(-1) === '') lines.pop()
  let penDown = false
  let units: string | undefined
  let positioning: string | undefined
  const feeds = { G0: new Set<number>(), G1: new Set<number>() }
  const outside: string[] = []
  let draws = 0
  let lifts = 0
  lines.forEach((line, index) => {
    if (index === 0 && line.startsWith(';')) return
    if (line === 'G21' || line === 'G20') return void (units = line)
    if (line === 'G90' || line === 'G91') return void (positioning = line)
    if (line === pen.up) return void ((penDown = false), lifts++)
    if (line === pen.down) return void (penDown = true)
    if (line === 'M2' && index === lines.length - 1) return
    const move = /^(G0|G1) X(-?\d+\.\d{2}) Y(-?\d+\.\d{2})(?: F(\d+))?$/.exec(line)
    if (!move) throw new Error(`line ${index + 1} is not in the G-code grammar: ${line}`)
    const [, code, x, y, feed] = move as unknown as [string, 'G0' | 'G1', string, string, string | undefined]
    if (code === 'G0' && penDown) throw new Error(`line ${index + 1} travels with the pen down`)
    if (code === 'G1' && !penDown) throw new Error(`line ${index + 1} draws with the pen up`)
    if (code === 'G1') draws++
    if (feed) feeds[code].add(Number(feed))
    // The G-code's origin is the page's bottom left corner, as the area's margins are symmetric.
    const home = index === lines.length - 2 && Number(x) === 0 && Number(y) === 0
    if (!home && !inArea(area, Number(x), Number(y))) outside.push(line)
  })
  if (units !== 'G21' || positioning !== 'G90') throw new Error(`not millimetres and absolute: ${units} ${positioning}`)
  return { draws, lifts, feeds, outside, penDownAtEnd: penDown }
}

/** An SVG of the plotter, read by an XML parser: its size, viewBox and the points of its paths, with those outside the pen area. */
export function readSvg(text: string, area: PenArea) {
  const valid = XMLValidator.validate(text)
  if (valid !== true) throw new Error(`not well-formed XML: ${valid.err.msg} (line ${valid.err.line})`)
  const parsed = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', isArray: (name) => name === 'path' }).parse(text) as {
    svg: { width: string; height: string; viewBox: string; g: { path: Array<{ d: string }> } }
  }
  const { svg } = parsed
  const outside: string[] = []
  let points = 0
  for (const { d } of svg.g.path) {
    if (!/^M\d+\.\d{2} \d+\.\d{2}(L\d+\.\d{2} \d+\.\d{2})+$/.test(d)) throw new Error(`a path is not one polyline: ${d.slice(0, 80)}`)
    for (const pair of d.slice(1).split('L')) {
      const [x, y] = pair.split(' ').map(Number) as [number, number]
      points++
      if (!inArea(area, x, y)) outside.push(pair)
    }
  }
  return { width: svg.width, height: svg.height, viewBox: svg.viewBox, paths: svg.g.path.length, points, outside }
}
