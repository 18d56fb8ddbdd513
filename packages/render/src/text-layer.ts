import { deflateSync } from 'node:zlib'
import type PDFDocument from 'pdfkit'

type Doc = InstanceType<typeof PDFDocument>

/**
 * The invisible text under shaped writing. Each shaped glyph is a path, so a reader would find no
 * words on the page; the words are laid under it as text in render mode 3 (drawn with no ink), in
 * a font whose glyphs are all empty: what OCR tools put under a scan. Its character codes are
 * the characters themselves (two bytes each, Identity-H, mapped back to Unicode by its
 * ToUnicode map), so any character a hand can write is found and copied, in whatever font the
 * hand is. Embedding the hand's own font for this instead cost a subset of its glyph outlines
 * in every file, the dearest step of a render.
 */
export const TEXT_LAYER_FONT = 'HandText'

/** The font's program: a TrueType font of one empty glyph, 500 units wide. */
function glyphlessTrueType(): Buffer {
  const table = (size: number, fill: (data: Buffer) => void) => {
    const data = Buffer.alloc(size)
    fill(data)
    return data
  }
  const tables: Array<[string, Buffer]> = [
    ['glyf', Buffer.alloc(4)],
    [
      'head',
      table(54, (d) => {
        d.writeUInt32BE(0x00010000, 0) // version
        d.writeUInt32BE(0x00010000, 4) // font revision
        d.writeUInt32BE(0x5f0f3cf5, 12) // magic
        d.writeUInt16BE(0x000b, 16) // flags: baseline and left sidebearing at 0, integer scaling
        d.writeUInt16BE(1000, 18) // units per em
        d.writeUInt16BE(8, 46) // lowest readable size
        d.writeInt16BE(2, 48) // direction hint
        d.writeInt16BE(0, 50) // short loca offsets
      }),
    ],
    [
      'hhea',
      table(36, (d) => {
        d.writeUInt32BE(0x00010000, 0)
        d.writeInt16BE(800, 4) // ascender
        d.writeInt16BE(-200, 6) // descender
        d.writeUInt16BE(500, 10) // widest advance
        d.writeInt16BE(1, 18) // caret slope rise
        d.writeUInt16BE(1, 34) // advances given: one
      }),
    ],
    ['hmtx', table(4, (d) => d.writeUInt16BE(500, 0))],
    ['loca', Buffer.alloc(4)],
    [
      'maxp',
      table(32, (d) => {
        d.writeUInt32BE(0x00010000, 0)
        d.writeUInt16BE(1, 4) // glyphs
        d.writeUInt16BE(2, 14) // zones
      }),
    ],
  ]
  const checksum = (data: Buffer) => {
    let sum = 0
    const padded = Buffer.concat([data, Buffer.alloc((4 - (data.length % 4)) % 4)])
    for (let at = 0; at < padded.length; at += 4) sum = (sum + padded.readUInt32BE(at)) >>> 0
    return sum
  }
  const header = Buffer.alloc(12 + 16 * tables.length)
  header.writeUInt32BE(0x00010000, 0)
  header.writeUInt16BE(tables.length, 4)
  header.writeUInt16BE(64, 6) // search range: 4 tables' worth of 16 bytes
  header.writeUInt16BE(2, 8)
  header.writeUInt16BE(tables.length * 16 - 64, 10)
  let offset = header.length
  const bodies: Buffer[] = []
  tables.forEach(([tag, data], index) => {
    const entry = 12 + index * 16
    header.write(tag, entry, 'latin1')
    header.writeUInt32BE(checksum(data), entry + 4)
    header.writeUInt32BE(offset, entry + 8)
    header.writeUInt32BE(data.length, entry + 12)
    const padded = Buffer.concat([data, Buffer.alloc((4 - (data.length % 4)) % 4)])
    bodies.push(padded)
    offset += padded.length
  })
  const font = Buffer.concat([header, ...bodies])
  const headAt = header.readUInt32BE(12 + 16 + 8)
  font.writeUInt32BE((0xb1b0afba - checksum(font)) >>> 0, headAt + 8)
  return font
}

/** Every two-byte code to the same Unicode code unit: 256 ranges, as a range may vary in its last byte only. */
function identityToUnicode(): string {
  const ranges: string[] = []
  for (let high = 0; high < 256; high++) {
    const hex = high.toString(16).padStart(2, '0')
    ranges.push(`<${hex}00> <${hex}ff> <${hex}00>`)
  }
  const blocks: string[] = []
  for (let at = 0; at < ranges.length; at += 100) {
    const block = ranges.slice(at, at + 100)
    blocks.push(`${block.length} beginbfrange\n${block.join('\n')}\nendbfrange`)
  }
  return [
    '/CIDInit /ProcSet findresource begin',
    '12 dict begin',
    'begincmap',
    '/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def',
    '/CMapName /Adobe-Identity-UCS def',
    '/CMapType 2 def',
    '1 begincodespacerange',
    '<0000> <ffff>',
    'endcodespacerange',
    ...blocks,
    'endcmap',
    'CMapName currentdict /CMap defineresource pop',
    'end',
    'end',
  ].join('\n')
}

/** The font's streams, deflated once per process: every file carries the same bytes. */
const streams = {
  program: glyphlessTrueType(),
  deflated: {
    program: deflateSync(glyphlessTrueType()),
    toUnicode: deflateSync(identityToUnicode()),
    // Every code to the one empty glyph: two zero bytes per code.
    cidToGid: deflateSync(Buffer.alloc(2 * 65536)),
  },
}

const written = new WeakMap<Doc, unknown>()

/** The text layer's font in `doc`, written once per document; a page that uses it names it among its resources. */
export function textLayerFont(doc: Doc): unknown {
  const font = written.get(doc)
  if (font) return font
  const stream = (data: Buffer, dictionary: Record<string, unknown> = {}) => {
    // Deflated already: pdfkit writes a stream with a Filter as it is given.
    const ref = doc.ref({ Filter: 'FlateDecode', ...dictionary })
    ref.end(data)
    return ref
  }
  // A dictionary with no stream: ended with no data, or pdfkit would write an empty stream.
  const object = (dictionary: Record<string, unknown>) => {
    const ref = doc.ref(dictionary)
    ;(ref.end as () => void)()
    return ref
  }
  const program = stream(streams.deflated.program, { Length1: streams.program.length })
  const descriptor = object({
    Type: 'FontDescriptor',
    FontName: TEXT_LAYER_FONT,
    Flags: 4,
    FontBBox: [0, -200, 500, 800],
    ItalicAngle: 0,
    Ascent: 800,
    Descent: -200,
    CapHeight: 700,
    StemV: 80,
    FontFile2: program,
  })
  const cidFont = object({
    Type: 'Font',
    Subtype: 'CIDFontType2',
    BaseFont: TEXT_LAYER_FONT,
    CIDSystemInfo: { Registry: new String('Adobe'), Ordering: new String('Identity'), Supplement: 0 },
    FontDescriptor: descriptor,
    DW: 500,
    CIDToGIDMap: stream(streams.deflated.cidToGid),
  })
  const type0 = object({
    Type: 'Font',
    Subtype: 'Type0',
    BaseFont: TEXT_LAYER_FONT,
    Encoding: 'Identity-H',
    DescendantFonts: [cidFont],
    ToUnicode: stream(streams.deflated.toUnicode),
  })
  written.set(doc, type0)
  return type0
}

/**
 * A text's characters as the layer's hex string, four hex digits each. A code is one UTF-16 unit,
 * so a character beyond the Basic Multilingual Plane (an invisible tag or variation selector
 * that reached the hand) has no code of its own and is left out of the layer.
 */
export function textLayerCodes(text: string): string {
  let hex = ''
  for (const character of text) {
    const code = character.codePointAt(0)!
    if (code <= 0xffff) hex += code.toString(16).padStart(4, '0')
  }
  return hex
}
