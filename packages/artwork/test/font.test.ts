import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import * as fontkit from 'fontkit'
import sharp from 'sharp'
import { beforeAll, describe, expect, test } from 'vitest'
import { FONT_MAX_BYTES, fontRequiredCharacters } from '@letters/contracts'
import { fontPreview, inspectFont, isRefusal, PREVIEW_MAX_WIDTH, type InspectedFont, type Refusal } from '../src/index.js'
import { sfntFromWoff } from '../src/font-tables.js'
import { FONT_MAX_GLYPH_POINTS, FONT_MAX_GLYPHS, FONT_READERS } from '../src/limits.js'
import {
  readSfnt,
  writeSfnt,
  withGlyphs,
  farGlyph,
  compositeGlyph,
  withoutCharacters,
  withTable,
  woff2Of,
  brotliOfZeros,
  withHundredThousandPointA,
} from '@letters/test/support/hostile-fonts'
import { until } from '@letters/test/support/wait'

const require = createRequire(import.meta.url)
const fontsource = (file: string) => readFileSync(require.resolve(`@fontsource/${file}`))

/** Caveat's latin subset, as the built-in hand ships it: it writes all of Spanish. */
const caveatWoff = fontsource('caveat/files/caveat-latin-400-normal.woff')
const caveatWoff2 = fontsource('caveat/files/caveat-latin-400-normal.woff2')
const caveatTtf = sfntFromWoff(caveatWoff)
/** Caveat's latin-ext subset: accented letters beyond Spanish's, and none of the basic alphabet. */
const caveatLatinExt = fontsource('caveat/files/caveat-latin-ext-400-normal.woff')

function expectAccepted(result: InspectedFont | Refusal): InspectedFont {
  if (isRefusal(result)) throw new Error(`refused (${result.status}): ${result.message}`)
  return result
}

function expectRefusal(result: InspectedFont | Refusal, status: number, ...parts: string[]): Refusal {
  if (!isRefusal(result)) throw new Error(`accepted a font that should have been refused (${result.contentType}, ${result.bytes} bytes)`)
  expect(result.status, result.message).toBe(status)
  for (const part of parts) expect(result.message).toContain(part)
  return result
}

/** `length` bytes that look random and are the same on every run (mulberry32 from `seed`). */
function seededBytes(length: number, seed: number): Buffer {
  let state = seed | 0
  return Buffer.from(
    Array.from({ length }, () => {
      state = (state + 0x6d2b79f5) | 0
      let t = Math.imul(state ^ (state >>> 15), 1 | state)
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
      return ((t ^ (t >>> 14)) >>> 0) & 0xff
    }),
  )
}

/** Inspects, printing how long the answer took (the figures a reviewer reads in the run's output). */
async function timed(what: string, contentType: string, data: Buffer): Promise<{ result: InspectedFont | Refusal }> {
  const start = performance.now()
  const result = await inspectFont({ contentType, data })
  const ms = Math.round(performance.now() - start)
  console.log(`${what}: ${isRefusal(result) ? `refused ${result.status}` : 'accepted'} in ${ms} ms${isRefusal(result) ? ` — ${result.message}` : ''}`)
  return { result }
}

describe('what a font file must be before it is parsed', () => {
  test('a body over 5 MB is refused with 413, whatever it is', async () => {
    const big = Buffer.alloc(FONT_MAX_BYTES + 1)
    caveatWoff.copy(big)
    const { result } = await timed('5 MB + 1 byte', 'font/woff', big)
    expectRefusal(result, 413, '5.242.881 bytes', 'máximo es 5 MB (5.242.880 bytes)')
  })

  test('an empty body is refused with 400', async () => {
    expectRefusal(await inspectFont({ contentType: 'font/ttf', data: Buffer.alloc(0) }), 400, 'vacío', 'TTF, OTF, WOFF o WOFF2')
  })

  test('a content type other than the four font types is refused with 415 naming them, and a font sent as octet-stream is told its type', async () => {
    const { result } = await timed('application/octet-stream', 'application/octet-stream', caveatWoff)
    expectRefusal(result, 415, '«application/octet-stream»', 'font/ttf, font/otf, font/woff o font/woff2', 'parece una fuente WOFF', 'envíalo como font/woff')
    expectRefusal(await inspectFont({ contentType: 'application/font-woff', data: caveatWoff }), 415, '«application/font-woff»')
    expectRefusal(await inspectFont({ contentType: '', data: caveatWoff }), 415, '(vacío)')
  })

  test('bytes that are not what the content type says are refused with 400, saying what they look like', async () => {
    expectRefusal(await inspectFont({ contentType: 'font/ttf', data: caveatWoff }), 400, 'enviado como font/ttf', 'parece una fuente WOFF', 'tipo font/woff')
    expectRefusal(await inspectFont({ contentType: 'font/woff2', data: caveatTtf }), 400, 'no es una fuente WOFF2', 'parece una fuente TrueType (TTF)')
    expectRefusal(await inspectFont({ contentType: 'font/otf', data: caveatTtf }), 400, 'no es una fuente OpenType (OTF)', 'font/ttf')
    expectRefusal(await inspectFont({ contentType: 'font/ttf', data: Buffer.from('PK\x03\x04 a zip', 'latin1') }), 400, 'archivo ZIP', 'descomprímelo')
    expectRefusal(await inspectFont({ contentType: 'font/ttf', data: Buffer.from('ttcf\x00\x02\x00\x00', 'latin1') }), 400, 'colección de fuentes')
  })

  test('random bytes sent with a font content type are refused with 400', async () => {
    const random = seededBytes(50_000, 7)
    random[0] = 0x41 // never by chance a font's signature
    for (const type of ['font/ttf', 'font/otf', 'font/woff', 'font/woff2']) {
      const { result } = await timed(`random bytes as ${type}`, type, random)
      expectRefusal(result, 400, `enviado como ${type}`, 'no empieza por')
    }
    // Behind a real signature, random bytes are caught by the container's headers.
    for (const [type, signature] of [
      ['font/ttf', '\x00\x01\x00\x00'],
      ['font/woff', 'wOFF'],
      ['font/woff2', 'wOF2'],
    ] as const) {
      const { result } = await timed(`a ${type} signature then random bytes`, type, Buffer.concat([Buffer.from(signature, 'latin1'), random]))
      expectRefusal(result, 400)
    }
  })

  test('a truncated font (the first half of a real one) is refused with 400, as WOFF, WOFF2 and TTF', async () => {
    for (const [type, font] of [
      ['font/woff', caveatWoff],
      ['font/woff2', caveatWoff2],
      ['font/ttf', caveatTtf],
    ] as const) {
      const { result } = await timed(`first half of a ${type}`, type, font.subarray(0, font.length >> 1))
      expectRefusal(result, 400, 'incompleto')
    }
  })
})

describe('a font that is read', () => {
  test('a WOFF is accepted: its face is the plain TrueType font fontkit reads, with its family name and a preview', async () => {
    const { result } = await timed('Caveat WOFF', 'font/woff', caveatWoff)
    const font = expectAccepted(result)
    expect(font).toMatchObject({ contentType: 'font/woff', bytes: caveatWoff.length, familyName: 'Caveat' })
    expect(font.sha256).toMatch(/^[0-9a-f]{64}$/)
    expect(font.face.equals(caveatTtf)).toBe(true)
    const parsed = fontkit.create(font.face) as fontkit.Font
    expect(parsed.type).toBe('TTF')
    expect([...fontRequiredCharacters].every((character) => parsed.hasGlyphForCodePoint(character.codePointAt(0)!))).toBe(true)
  })

  test('a WOFF2 and a TTF are accepted, their face the upload as is; parameters and capitals in the content type are ignored', async () => {
    const woff2 = expectAccepted((await timed('Caveat WOFF2', 'Font/WOFF2; charset=binary', caveatWoff2)).result)
    expect(woff2.contentType).toBe('font/woff2')
    expect(woff2.face.equals(caveatWoff2)).toBe(true)
    const ttf = expectAccepted((await timed('Caveat TTF', 'font/ttf', caveatTtf)).result)
    expect(ttf.face.equals(caveatTtf)).toBe(true)
    expect(ttf.familyName).toBe('Caveat')
  })

  // A dozen files, each read by a child process of its own: some 4 s each on a busy machine.
  test(
    'every handwriting font installed from @fontsource (latin subset, WOFF and WOFF2) is accepted with a preview at most 1000 px wide, dark ink on white',
    { timeout: 180_000 },
    async () => {
      const root = dirname(dirname(require.resolve('@fontsource/caveat/package.json')))
      const files = readdirSync(root)
        .flatMap((family) => [`${family}/files/${family}-latin-400-normal.woff`, `${family}/files/${family}-latin-400-normal.woff2`])
        .filter((file) => existsSync(join(root, file)))
      expect(files.length).toBeGreaterThanOrEqual(10)
      for (const file of files) {
        const type = file.endsWith('woff2') ? 'font/woff2' : 'font/woff'
        const font = expectAccepted((await timed(file.split('/').at(-1)!, type, readFileSync(join(root, file)))).result)
        const { width, height, format } = await sharp(font.preview).metadata()
        const { channels } = await sharp(font.preview).stats()
        console.log(`  preview ${width} × ${height} px, ${font.preview.length} bytes, family «${font.familyName}»`)
        expect(format).toBe('png')
        expect(width).toBeLessThanOrEqual(PREVIEW_MAX_WIDTH)
        expect(height).toBeGreaterThan(100)
        expect(height).toBeLessThan(400)
        // White paper, and ink: the darkest pixel is dark.
        expect(channels[0]!.max).toBe(255)
        expect(channels[0]!.min).toBeLessThan(60)
      }
    },
  )

  test('fontPreview draws a font already parsed, as the built-in hands are', async () => {
    const preview = await fontPreview(fontkit.create(caveatTtf) as fontkit.Font)
    const { width, height } = await sharp(preview).metadata()
    expect(width).toBe(PREVIEW_MAX_WIDTH)
    expect(height).toBeGreaterThan(100)
  })
})

describe('a font that is read and refused', () => {
  test('a font without the Spanish alphabet is refused with 400 naming the first 20 missing characters and counting the rest', async () => {
    const { result } = await timed('Caveat latin-ext', 'font/woff', caveatLatinExt)
    const refused = expectRefusal(result, 400, 'carta en español', 'a b c d e f g h i j k l m n ñ o p q r s', 'y 74 más')
    expect(refused.message).not.toContain(' t ')
  })

  test('a font lacking only ñ and Ñ is refused with 400 naming exactly those two', async () => {
    const lacking = withoutCharacters(caveatTtf, 'ñÑ')
    expect((fontkit.create(lacking) as fontkit.Font).hasGlyphForCodePoint(0xf1)).toBe(false)
    const { result } = await timed('Caveat without ñ Ñ', 'font/ttf', lacking)
    expectRefusal(result, 400, 'no tiene 2 de los caracteres', ': ñ Ñ.')
  })

  test('a glyph of 100,000 points, which fontkit itself parses, is refused with 400', async () => {
    const hostile = withHundredThousandPointA(caveatTtf)
    const start = performance.now()
    const unchecked = fontkit.create(hostile) as fontkit.Font
    const commands = unchecked.glyphForCodePoint(0x61).path.commands.length
    console.log(`fontkit alone draws the hostile «a» with ${commands} commands in ${Math.round(performance.now() - start)} ms (file ${hostile.length} bytes)`)
    expect(commands).toBeGreaterThan(100_000)

    const { result } = await timed('a glyph of 100,000 points', 'font/ttf', hostile)
    expectRefusal(result, 400, 'de «a»', `${commands.toLocaleString('es-ES')} puntos`, `máximo es ${FONT_MAX_GLYPH_POINTS.toLocaleString('es-ES')}`)
  })

  test('a glyph that reaches 20 em from its origin is refused with 400', async () => {
    const b = (fontkit.create(caveatTtf) as fontkit.Font).glyphForCodePoint(0x62).id
    const { result } = await timed('a glyph reaching 20 em', 'font/ttf', withGlyphs(caveatTtf, new Map([[b, farGlyph(20_000)]])))
    expectRefusal(result, 400, 'de «b»', 'llega a 20 em', 'máximo es 4 em')
  })

  test('a font that declares more than 10,000 glyphs is refused with 400 before any is drawn', async () => {
    const { result } = await timed(
      '65,000 glyphs',
      'font/ttf',
      withTable(caveatTtf, 'maxp', (maxp) => maxp.writeUInt16BE(65_000, 4)),
    )
    expectRefusal(result, 400, '65.000 glifos', `máximo es ${FONT_MAX_GLYPHS.toLocaleString('es-ES')}`)
  })

  test('a font whose units per em are outside 16–16384 is refused with 400', async () => {
    const { result } = await timed(
      '5 units per em',
      'font/ttf',
      withTable(caveatTtf, 'head', (head) => head.writeUInt16BE(5, 18)),
    )
    expectRefusal(result, 400, '5 unidades por eme', 'entre 16 y 16.384')
  })

  test('a font whose tables are random bytes is refused with 400, not thrown', async () => {
    const sfnt = readSfnt(caveatTtf)
    for (const table of sfnt.tables.values()) seededBytes(table.length, table.length).copy(table)
    const { result } = await timed('tables of random bytes', 'font/ttf', writeSfnt(sfnt))
    expectRefusal(result, 400)
  })

  test('a composite glyph that multiplies into millions of points is stopped by the reader’s limits: 400, within the time limit', async () => {
    const font = fontkit.create(caveatTtf) as fontkit.Font
    const [a, b, c] = ['a', 'b', 'c'].map((character) => font.glyphForCodePoint(character.codePointAt(0)!).id) as [number, number, number]
    // «a» is 2,000 «b», each 2,000 «c»: four million copies of a letter, from 24 KB of records.
    const hostile = withGlyphs(
      caveatTtf,
      new Map([
        [a, compositeGlyph(b, 2000)],
        [b, compositeGlyph(c, 2000)],
      ]),
    )
    const rss = process.memoryUsage().rss
    const { result } = await timed('a composite bomb', 'font/ttf', hostile)
    expectRefusal(result, 400, 'dentro de los límites de tiempo y memoria')
    const grown = (process.memoryUsage().rss - rss) / 1024 / 1024
    console.log(`  this process's memory grew by ${grown.toFixed(1)} MB`)
    expect(grown).toBeLessThan(100)
  })
})

describe('compression bombs', () => {
  let zeros: Buffer
  beforeAll(async () => {
    zeros = await brotliOfZeros(400)
    console.log(`400 MB of zeros compress with brotli to ${zeros.length} bytes`)
  })

  test('a WOFF2 that declares 400 MB of tables is refused from its header with 400, and this process does not grow', async () => {
    const rss = process.memoryUsage().rss
    const { result } = await timed('a WOFF2 declaring 400 MB', 'font/woff2', woff2Of(zeros, 400 * 1024 * 1024))
    expectRefusal(result, 400, 'ocupa 400 MB una vez descomprimida', 'máximo es 32 MB')
    const { result: sfntSize } = await timed('a WOFF2 whose header says 400 MB', 'font/woff2', woff2Of(zeros, 1000, 400 * 1024 * 1024))
    expectRefusal(sfntSize, 400, '400 MB')
    const grown = (process.memoryUsage().rss - rss) / 1024 / 1024
    console.log(`  this process's memory grew by ${grown.toFixed(1)} MB`)
    expect(grown).toBeLessThan(50)
  })

  test('a WOFF2 whose few hundred bytes claim megabytes within the size limit is refused for its expansion', async () => {
    const { result } = await timed('a WOFF2 expanding 20 MB from bytes', 'font/woff2', woff2Of(zeros, 20 * 1024 * 1024))
    expectRefusal(result, 400, 'veces más', 'nunca más de 100 veces')
  })

  test('a WOFF2 that declares little but inflates to 400 MB is stopped at what it declared: 400, this process unmoved', async () => {
    const rss = process.memoryUsage().rss
    const { result } = await timed('a WOFF2 inflating to 400 MB', 'font/woff2', woff2Of(zeros, zeros.length * 50))
    expectRefusal(result, 400, 'se descomprimen a más de los', 'que declara')
    const grown = (process.memoryUsage().rss - rss) / 1024 / 1024
    console.log(`  this process's memory grew by ${grown.toFixed(1)} MB`)
    expect(grown).toBeLessThan(50)
  })

  test('a WOFF whose tables declare more than 32 MB is refused before any is inflated', async () => {
    const woff = Buffer.from(caveatWoff)
    // The first table's declared size, far past what its bytes hold.
    woff.writeUInt32BE(100 * 1024 * 1024, 44 + 12)
    const { result } = await timed('a WOFF declaring 100 MB', 'font/woff', woff)
    expectRefusal(result, 400, 'MB una vez descomprimida')
  })

  test('a WOFF table that inflates past its declared size is refused with 400', async () => {
    const woff = Buffer.from(caveatWoff)
    const table = 44 + 20 * 7 // glyf, compressed
    expect(woff.toString('latin1', table, table + 4)).toBe('glyf')
    woff.writeUInt32BE(woff.readUInt32BE(table + 12) - 100, table + 12)
    const { result } = await timed('a WOFF table inflating past its size', 'font/woff', woff)
    expectRefusal(result, 400, 'glyf', 'no se descomprime')
  })
})

/** The font readers this process has started and that are still running. */
function readers(): number[] {
  const found: number[] = []
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (parent === process.pid && readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes('font-child')) found.push(Number(pid))
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return found
}

/** Every reader is free again: as many fonts as there are readers, and one more, are all read. */
async function expectEveryReaderFree() {
  const results = await Promise.all(Array.from({ length: FONT_READERS + 1 }, () => inspectFont({ contentType: 'font/woff2', data: caveatWoff2 })))
  results.forEach(expectAccepted)
}

describe('the reading processes', () => {
  test(`at most ${FONT_READERS} fonts are parsed at once; the others wait their turn and are answered`, async () => {
    let most = 0
    const children = () => readers().length
    const watch = setInterval(() => (most = Math.max(most, children())), 5)
    const start = performance.now()
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, index) => inspectFont({ contentType: index % 2 ? 'font/woff2' : 'font/woff', data: index % 2 ? caveatWoff2 : caveatWoff })),
    )
    clearInterval(watch)
    console.log(`6 fonts at once: answered in ${Math.round(performance.now() - start)} ms, at most ${most} reading processes at a time`)
    results.forEach(expectAccepted)
    expect(most).toBeGreaterThan(0)
    expect(most).toBeLessThanOrEqual(FONT_READERS)
  })

  test('a read given up on before it starts is refused at once, and takes no reader', async () => {
    await expect(inspectFont({ contentType: 'font/woff2', data: caveatWoff2 }, AbortSignal.abort())).rejects.toThrow()
    await expectEveryReaderFree()
  })

  test('a read given up on while it waits for a reader leaves the line at once, before the reads ahead of it end', async () => {
    const ahead = Array.from({ length: FONT_READERS }, () => inspectFont({ contentType: 'font/woff2', data: caveatWoff2 }))
    const giveUp = new AbortController()
    const waiting = inspectFont({ contentType: 'font/woff2', data: caveatWoff2 }, giveUp.signal)
    giveUp.abort()
    const first = await Promise.race([
      waiting.then(
        () => 'read',
        () => 'left the line',
      ),
      Promise.all(ahead).then(() => 'the reads ahead'),
    ])
    expect(first).toBe('left the line')
    ;(await Promise.all(ahead)).forEach(expectAccepted)
    await expectEveryReaderFree()
  })

  test('a read given up on while it runs is stopped: its reader is ended and its turn passes on', async () => {
    const giveUp = new AbortController()
    const reading = inspectFont({ contentType: 'font/woff2', data: caveatWoff2 }, giveUp.signal)
    const reader = await until('a reader to start', () => readers()[0], { everyMs: 2 })
    giveUp.abort()
    await expect(reading).rejects.toThrow(/stopped/)
    await until('the reader to be ended', () => !readers().includes(reader))
    await expectEveryReaderFree()
  })
})
