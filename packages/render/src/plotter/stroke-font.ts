import { createRequire } from 'node:module'
import type { FontName } from '@letters/contracts'
import { lineSpacing, wordGap, type Measure, type PlacedGlyph, type Written } from '../handwriting.js'

const require = createRequire(import.meta.url)

/** The parts of hersheytext's API (CommonJS, untyped) read here. */
interface HersheyFont {
  type: 'svg' | 'hershey'
  info: Record<string, string>
  chars: Record<string, { width: number; d: string | null }>
}
const hersheytext = require('hersheytext') as { getFontData(name: string): HersheyFont }

/**
 * The single-stroke font that stands in for each handwriting font on the plotter, from the SVG
 * fonts hersheytext ships: the EMS scripts (SIL Open Font License, single-stroke versions of
 * Allura, Felipa… by Evil Mad Scientist) and Hershey's own script (public domain data). Each is
 * the closest in character to the TTF hand it replaces.
 */
export const strokeFontOf: Record<FontName, string> = {
  caveat: 'ems_felix',
  'dancing-script': 'ems_allure',
  'homemade-apple': 'hershey_script_1',
  'indie-flower': 'ems_readability',
  kalam: 'ems_readability_italic',
}

/** A polyline in ems, y up from the baseline. */
export type Stroke = Array<[number, number]>

export interface StrokeGlyph extends PlacedGlyph {
  strokes: Stroke[]
}

export interface StrokeFont {
  name: string
  measure: Measure
  /** The top of the tallest letters, in ems. */
  ascender: number
  character(character: string): Written<StrokeGlyph>
}

/** The most a cubic curve's chord may stray from the curve when it is cut into segments, in ems (a 20 pt glyph: 0.02 mm). */
const FLATNESS = 0.003

/**
 * A glyph's path data (absolute M, L, C and Z, all these fonts use) as polylines. A command
 * outside those is a font this code was not written for: it throws, and a test reads every glyph.
 */
export function strokesOf(d: string, unitsPerEm: number): Stroke[] {
  const tokens = d.match(/[A-Za-z]|-?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?/g) ?? []
  const strokes: Stroke[] = []
  let current: Stroke | undefined
  let command = ''
  let index = 0
  const number = () => {
    const token = tokens[index++]
    const value = Number(token)
    if (token === undefined || Number.isNaN(value)) throw new Error(`path data ends or breaks at "${token}": ${d}`)
    return value / unitsPerEm
  }
  while (index < tokens.length) {
    if (/[A-Za-z]/.test(tokens[index]!)) command = tokens[index++]!
    const last = current?.at(-1)
    switch (command) {
      case 'M':
        current = [[number(), number()]]
        strokes.push(current)
        command = 'L' // pairs after an M are lines
        break
      case 'L':
        if (!current) throw new Error(`path data draws before it moves: ${d}`)
        current.push([number(), number()])
        break
      case 'C': {
        if (!current || !last) throw new Error(`path data draws before it moves: ${d}`)
        const [x1, y1, x2, y2, x, y] = [number(), number(), number(), number(), number(), number()]
        const [x0, y0] = last
        // Enough segments that no chord strays more than FLATNESS from the curve (the control
        // polygon bounds the curve's bend).
        const bend = Math.max(Math.hypot(x0 - 2 * x1 + x2, y0 - 2 * y1 + y2), Math.hypot(x1 - 2 * x2 + x, y1 - 2 * y2 + y))
        const segments = Math.max(1, Math.ceil(Math.sqrt((0.75 * bend) / FLATNESS)))
        for (let step = 1; step <= segments; step++) {
          const t = step / segments
          const u = 1 - t
          current.push([
            u * u * u * x0 + 3 * u * u * t * x1 + 3 * u * t * t * x2 + t * t * t * x,
            u * u * u * y0 + 3 * u * u * t * y1 + 3 * u * t * t * y2 + t * t * t * y,
          ])
        }
        break
      }
      case 'Z':
      case 'z':
        if (current?.[0]) current.push([current[0][0], current[0][1]])
        command = ''
        break
      default:
        throw new Error(`path command "${command}" is not one the stroke fonts use: ${d}`)
    }
  }
  return strokes.filter((stroke) => stroke.length > 1)
}

/** A combining mark and the spacing glyphs that draw it, first found first used. */
const accentGlyphs: Record<string, string[]> = {
  '\u0300': ['`'],
  '\u0301': ['´', "'"],
  '\u0302': ['^', 'ˆ'],
  '\u0303': ['~', '˜'],
  '\u0304': ['¯', '-'],
  '\u0306': ['˘', '~'],
  '\u0307': ['˙', '.'],
  '\u0308': ['¨', '..'],
  '\u030A': ['˚', '°', 'o'],
  '\u030B': ['˝', '"'],
  '\u030C': ['ˇ', 'v'],
  '\u0327': ['¸', ','],
  '\u0328': ['˛', ','],
}
/** Marks drawn under their letter; the others go above. */
const marksBelow = new Set(['\u0327', '\u0328'])

/**
 * Characters with no decomposition that a stroke font lacks, written as others a reader takes
 * for them: typographic quotes and dashes, ligatures, symbols of the handwriting fonts' latin set.
 */
const substitutes: Record<string, string> = {
  '‘': "'",
  '’': "'",
  '‚': ',',
  '‛': "'",
  '“': '"',
  '”': '"',
  '„': '"',
  '′': "'",
  '″': '"',
  '…': '...',
  '–': '-',
  '—': '-',
  '‐': '-',
  '‑': '-',
  '‒': '-',
  '−': '-',
  '•': '·',
  '‹': '<',
  '›': '>',
  '«': '<<',
  '»': '>>',
  Œ: 'OE',
  œ: 'oe',
  Æ: 'AE',
  æ: 'ae',
  ß: 'ss',
  ı: 'i',
  Ð: 'D',
  ð: 'd',
  Þ: 'Th',
  þ: 'th',
  Ø: 'O',
  ø: 'o',
  '€': 'EUR',
  '™': 'TM',
  '©': '(c)',
  '®': '(R)',
  '¤': 'o',
  '¦': '|',
  '†': '+',
  '‡': '+',
  '‰': '%',
  '⁄': '/',
  '∕': '/',
  '↑': '^',
  '↓': 'v',
  '§': 'S',
  '¶': 'P',
  '¬': '-',
  '¯': '-',
  µ: 'u',
  ʼ: "'",
  ˆ: '^',
  '˚': '°',
  '˜': '~',
  '\uFFFD': '?',
}

interface Bounds {
  minX: number
  maxX: number
  minY: number
  maxY: number
}

function boundsOf(strokes: Stroke[]): Bounds | undefined {
  const points = strokes.flat()
  if (points.length === 0) return undefined
  return {
    minX: Math.min(...points.map(([x]) => x)),
    maxX: Math.max(...points.map(([x]) => x)),
    minY: Math.min(...points.map(([, y]) => y)),
    maxY: Math.max(...points.map(([, y]) => y)),
  }
}

const fonts = new Map<string, StrokeFont>()

/**
 * A stroke font, read once per process, its em scaled so that its letters span one em from the
 * lowest descender to the tallest ascender (as a handwriting TTF's roughly do): the layout then
 * fits a message with the same rules and boxes as the PDF's. Every character is written: the
 * font's glyph; else its letter and accents composed (á, ő, ŷ…); else a stand-in (… as ...);
 * else its compatibility form; else a question mark, never nothing.
 */
export function strokeFont(name: string): StrokeFont {
  const known = fonts.get(name)
  if (known) return known
  const data = hersheytext.getFontData(name)
  if (data.type !== 'svg') throw new Error(`${name} is not one of hersheytext's SVG fonts`)
  const unitsPerEm = Number(data.info['units-per-em'])
  const raw = new Map<string, { advance: number; strokes: Stroke[] }>()
  for (const [character, glyph] of Object.entries(data.chars)) {
    raw.set(character, { advance: glyph.width / unitsPerEm, strokes: glyph.d ? strokesOf(glyph.d, unitsPerEm) : [] })
  }
  // The span of the letters, accents aside: what the em is scaled to.
  const letters = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'].flatMap((letter) => raw.get(letter)?.strokes ?? [])
  const span = boundsOf(letters)
  if (!span) throw new Error(`${name} has no letters`)
  const scale = 1 / (span.maxY - span.minY)
  const glyphs = new Map<string, { advance: number; strokes: Stroke[]; bounds: Bounds | undefined }>()
  for (const [character, glyph] of raw) {
    const strokes = glyph.strokes.map((stroke) => stroke.map(([x, y]): [number, number] => [x * scale, y * scale]))
    glyphs.set(character, { advance: glyph.advance * scale, strokes, bounds: boundsOf(strokes) })
  }
  const ascender = span.maxY * scale
  const space = glyphs.get(' ')?.advance ?? 0.3
  const gap = 0.05 // between a letter and its accent, in ems

  /** Glyphs of a run of characters the font has, side by side. */
  const run = (text: string): Written<StrokeGlyph> | undefined => {
    let pen = 0
    const placed: StrokeGlyph[] = []
    for (const part of text) {
      const glyph = glyphs.get(part)
      if (!glyph) return undefined
      if (glyph.strokes.length > 0) placed.push({ dx: pen, dy: 0, strokes: glyph.strokes })
      pen += glyph.advance
    }
    return { advance: pen, glyphs: placed }
  }

  /** A letter and its combining marks, each mark's accent centred over (or under) the letter. */
  const composed = (character: string): Written<StrokeGlyph> | undefined => {
    const [base, ...marks] = character.normalize('NFD')
    if (!base || marks.length === 0) return undefined
    const letter = write(base)
    if (!letter.glyphs?.length) return undefined
    const letterBounds = boundsOf(
      letter.glyphs.flatMap((glyph) => glyph.strokes.map((stroke) => stroke.map(([x, y]): [number, number] => [x + glyph.dx, y + glyph.dy]))),
    )!
    const placed = [...letter.glyphs]
    let top = letterBounds.maxY
    let bottom = Math.min(0, letterBounds.minY)
    for (const mark of marks) {
      const accent = (accentGlyphs[mark] ?? []).map((stand) => run(stand)).find((found) => found?.glyphs?.length)
      // A mark no font draws (a rare combining character): the letter alone, rather than nothing.
      if (!accent?.glyphs) continue
      const accentBounds = boundsOf(
        accent.glyphs.flatMap((glyph) => glyph.strokes.map((stroke) => stroke.map(([x, y]): [number, number] => [x + glyph.dx, y]))),
      )!
      const dx = (letterBounds.minX + letterBounds.maxX) / 2 - (accentBounds.minX + accentBounds.maxX) / 2
      const below = marksBelow.has(mark)
      const dy = below ? bottom - gap / 2 - accentBounds.maxY : top + gap - accentBounds.minY
      if (below) bottom = dy + accentBounds.minY
      else top = dy + accentBounds.maxY
      placed.push(...accent.glyphs.map((glyph) => ({ ...glyph, dx: glyph.dx + dx, dy: glyph.dy + dy })))
    }
    return { advance: letter.advance, glyphs: placed }
  }

  /** Ł and ł: the letter with a bar drawn across its stem, as a hand writes them. */
  const barred = (character: string): Written<StrokeGlyph> | undefined => {
    const base = ({ Ł: 'L', ł: 'l' } as Record<string, string>)[character]
    const letter = base === undefined ? undefined : run(base)
    if (!letter?.glyphs?.[0]) return undefined
    const bounds = boundsOf(letter.glyphs[0].strokes)!
    const x = bounds.minX + (bounds.maxX - bounds.minX) * 0.35
    const y = bounds.minY + (bounds.maxY - bounds.minY) * 0.45
    const bar: Stroke = [
      [x - 0.12, y - 0.06],
      [x + 0.12, y + 0.06],
    ]
    return { advance: letter.advance, glyphs: [...letter.glyphs, { dx: 0, dy: 0, strokes: [bar] }] }
  }

  const written = new Map<string, Written<StrokeGlyph>>()
  function write(character: string): Written<StrokeGlyph> {
    let found = written.get(character)
    if (found) return found
    if (character === ' ' || /^\s$/u.test(character)) found = { advance: space, glyphs: null }
    else if (/^\p{Default_Ignorable_Code_Point}$/u.test(character)) found = { advance: 0, glyphs: null }
    else {
      const substitute = substitutes[character]
      const compatible = character.normalize('NFKC')
      found =
        run(character) ??
        composed(character) ??
        barred(character) ??
        (substitute === undefined ? undefined : run(substitute)) ??
        (compatible === character ? undefined : [...compatible].every((part) => glyphs.has(part)) ? run(compatible) : undefined) ??
        (compatible === character ? undefined : composed(compatible)) ??
        run('?')!
    }
    written.set(character, found)
    return found
  }

  const measure: Measure = {
    width(text) {
      let width = 0
      for (const character of text) width += write(character).advance
      return width
    },
    space: wordGap(space),
    lineHeight: lineSpacing(1),
  }
  const font: StrokeFont = { name, measure, ascender, character: write }
  fonts.set(name, font)
  return font
}
