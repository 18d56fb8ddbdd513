import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import * as fontkit from 'fontkit'
import { filledShapes, twinReport } from '@letters/test/support/glyph-twins'
import { withGlyphs, withRecursiveLayout } from '@letters/test/support/hostile-fonts'
import { sfntFromWoff } from '@letters/artwork/font-tables'
import { plotLetter, renderCard, renderEnvelope, unwritableCharacters, type LetterToRender } from '../src/index.js'
import { cardMessage } from './samples.js'

const require = createRequire(import.meta.url)
/** Patrick Hand (SIL OFL 1.1), as an account would upload it: a handwriting font none of the built-in hands is. */
const face = sfntFromWoff(readFileSync(require.resolve('@fontsource/patrick-hand/files/patrick-hand-latin-400-normal.woff')))

const letter: LetterToRender = {
  letterId: '5e0d6f4a-8c1b-4d2e-9f3a-1b2c3d4e5f60',
  code: 'OWNFONT001',
  fontName: 'mi-letra',
  ownFont: { key: '2c1d3e4f-0000-4000-8000-000000000001:1', face, plotterFont: 'kalam' },
  message: cardMessage(600),
  signature: 'Ana, de Papelería Luna',
  recipientLines: ['Lucía García Pérez', 'Calle Mayor 12, 3º B', '28013 Madrid'],
  senderLines: ['Papelería Luna', 'Calle Sierpes 4', '41004 Sevilla'],
}

describe('an account’s own font', () => {
  it('draws every glyph of a 600-character card with a shape of its own, as the built-in hands do', async () => {
    const report = twinReport(await filledShapes(await renderCard(letter)))
    console.log(`mi-letra (Patrick Hand): ${report.withoutTwin} of ${report.shapes} glyphs without an affine twin (${(report.share * 100).toFixed(1)} %)`)
    expect(report.shapes).toBeGreaterThan(480)
    expect(report.share).toBeGreaterThanOrEqual(0.9)
    expect(twinReport(await filledShapes(await renderEnvelope(letter))).share).toBeGreaterThanOrEqual(0.9)
  })

  it('writes in its own outlines, not a built-in hand’s, and the same letter draws the same bytes', async () => {
    const card = await renderCard(letter)
    // Parsed again from a copy of its bytes (another key: not the parse kept from the first drawing).
    expect(card.equals(await renderCard({ ...letter, ownFont: { ...letter.ownFont!, key: 'copy:1', face: Buffer.from(face) } }))).toBe(true)
    expect(card.equals(await renderCard({ ...letter, fontName: 'kalam', ownFont: undefined }))).toBe(false)
  })

  it('is written on the plotter in the built-in hand that stands in for it', () => {
    const own = plotLetter('card', letter, 0.5)
    const standIn = plotLetter('card', { ...letter, fontName: 'kalam', ownFont: undefined }, 0.5)
    expect(own.strokes).toEqual(standIn.strokes)
    expect(plotLetter('card', { ...letter, ownFont: { ...letter.ownFont!, plotterFont: 'caveat' } }, 0.5).strokes).not.toEqual(own.strokes)
  })

  it(
    'is laid out by its character map alone: layout rules that call themselves, or double at each of 30 levels, neither crash nor stall a card',
    { timeout: 20_000 },
    async () => {
      const x = (fontkit.create(face) as fontkit.Font).glyphForCodePoint(0x78).id
      const message = 'Un xilófono, por favor'
      for (const [depth, key] of [
        [0, 'recursive:1'],
        [30, 'exponential:1'],
      ] as const) {
        const hostile = { key, face: withRecursiveLayout(face, x, depth), plotterFont: 'kalam' as const }
        const shapes = await filledShapes(await renderCard({ ...letter, ownFont: hostile, message }))
        // Every character but the spaces, and the signature's, drawn.
        expect(shapes.length).toBe(message.replaceAll(' ', '').length + letter.signature.replaceAll(' ', '').length)
      }
    },
  )

  it('counts a character mapped to a glyph without an outline as one it cannot write', () => {
    const euro = (fontkit.create(face) as fontkit.Font).glyphForCodePoint(0x20ac).id
    const hollow = { key: 'hollow:1', face: withGlyphs(face, new Map([[euro, Buffer.alloc(0)]])), plotterFont: 'kalam' as const }
    expect(unwritableCharacters(hollow, 'Son 20 € al mes')).toEqual(['€'])
    expect(unwritableCharacters(letter.ownFont!, 'Son 20 € al mes')).toEqual([])
  })

  it('is refused by the renderer when its name is no built-in hand and no file comes with it', () => {
    expect(() => renderCard({ ...letter, ownFont: undefined })).toThrow(/neither a built-in hand nor given with its file/)
  })
})
