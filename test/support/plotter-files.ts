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

/** A pen-down movement read back from a file: its points in millimetres on the page, from its top left corner, y downwards. */
export type ReadStroke = Array<[number, number]>

/**
 * What a G-code file holds, read by its line grammar: every line one of the header, G21, G90,
 * the pen commands, `G0 X Y F`, `G1 X Y [F]` or M2; anything else throws. Returns the drawn
 * points with the pen state, the strokes (turned to the page's top-left origin, as the SVG's),
 * and the points outside the pen area (expected: none).
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
  const strokes: ReadStroke[] = []
  let at: [number, number] | undefined
  let stroke: ReadStroke | undefined
  // The header: comment lines before the first command (what the page is; from drawing 5, its pen and estimate).
  const header: string[] = []
  while (lines[header.length]?.startsWith(';')) header.push(lines[header.length]!)
  lines.forEach((line, index) => {
    if (index < header.length) return
    if (line === 'G21' || line === 'G20') return void (units = line)
    if (line === 'G90' || line === 'G91') return void (positioning = line)
    if (line === pen.up) return void ((penDown = false), lifts++, (stroke = undefined))
    if (line === pen.down) {
      penDown = true
      if (!at) throw new Error(`line ${index + 1} sets the pen down before moving`)
      strokes.push((stroke = [at]))
      return
    }
    if (line === 'M2' && index === lines.length - 1) return
    const move = /^(G0|G1) X(-?\d+\.\d{2}) Y(-?\d+\.\d{2})(?: F(\d+))?$/.exec(line)
    if (!move) throw new Error(`line ${index + 1} is not in the G-code grammar: ${line}`)
    const [, code, x, y, feed] = move as unknown as [string, 'G0' | 'G1', string, string, string | undefined]
    if (code === 'G0' && penDown) throw new Error(`line ${index + 1} travels with the pen down`)
    if (code === 'G1' && !penDown) throw new Error(`line ${index + 1} draws with the pen up`)
    if (code === 'G1') draws++
    at = [Number(x), area.height - Number(y)]
    if (code === 'G1') stroke!.push(at)
    if (feed) feeds[code].add(Number(feed))
    // The G-code's origin is the page's bottom left corner, as the area's margins are symmetric.
    const home = index === lines.length - 2 && Number(x) === 0 && Number(y) === 0
    if (!home && !inArea(area, Number(x), Number(y))) outside.push(line)
  })
  if (units !== 'G21' || positioning !== 'G90') throw new Error(`not millimetres and absolute: ${units} ${positioning}`)
  return { header, draws, lifts, feeds, outside, strokes, penDownAtEnd: penDown }
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
  const strokes: ReadStroke[] = []
  let points = 0
  for (const { d } of svg.g.path) {
    if (!/^M\d+\.\d{2} \d+\.\d{2}(L\d+\.\d{2} \d+\.\d{2})+$/.test(d)) throw new Error(`a path is not one polyline: ${d.slice(0, 80)}`)
    const stroke: ReadStroke = []
    for (const pair of d.slice(1).split('L')) {
      const [x, y] = pair.split(' ').map(Number) as [number, number]
      points++
      stroke.push([x, y])
      if (!inArea(area, x, y)) outside.push(pair)
    }
    strokes.push(stroke)
  }
  const strokeWidth = Number((svg.g as unknown as Record<string, string>)['stroke-width'])
  return { width: svg.width, height: svg.height, viewBox: svg.viewBox, paths: svg.g.path.length, points, strokes, strokeWidth, outside }
}

/**
 * The bars a plotter drew, read back from its strokes: a bar is a stroke of vertical lines joined
 * at their ends, as tall as the bars (`height`, mm, give or take a pen's width); the ink covers
 * its lines' span widened by half the pen's line on each side. Returns each bar's left edge and
 * width in millimetres, for barWidths to read as modules, and the strokes that are not bars.
 */
export function plottedBars(strokes: ReadStroke[], penWidth: number, height: number) {
  const bars: Array<{ x: number; width: number; top: number; bottom: number }> = []
  const others: ReadStroke[] = []
  for (const stroke of strokes) {
    const xs = stroke.map(([x]) => x)
    const ys = stroke.map(([, y]) => y)
    const tall = Math.max(...ys) - Math.min(...ys)
    // Every move straight down, up or across, never across by more than the pen: a hatched bar.
    const hatched = stroke.every(([x, y], index) => {
      const previous = stroke[index - 1]
      return !previous || x === previous[0] || (y === previous[1] && Math.abs(x - previous[0]) <= penWidth + 0.011)
    })
    if (hatched && Math.abs(tall - (height - penWidth)) <= 0.02) {
      bars.push({
        x: Math.min(...xs) - penWidth / 2,
        width: Math.max(...xs) - Math.min(...xs) + penWidth,
        top: Math.min(...ys) - penWidth / 2,
        bottom: Math.max(...ys) + penWidth / 2,
      })
    } else others.push(stroke)
  }
  return { bars, others }
}
