import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import { filledShapes, twinReport } from '@letters/test/support/glyph-twins'
import { sfntFromWoff } from '@letters/artwork/font-tables'
import { plotLetter, renderCard, renderEnvelope, type LetterToRender } from '../src/index.js'
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
    expect(card.equals(await renderCard({ ...letter, ownFont: { ...letter.ownFont!, face: Buffer.from(face) } }))).toBe(true)
    expect(card.equals(await renderCard({ ...letter, fontName: 'kalam', ownFont: undefined }))).toBe(false)
  })

  it('is written on the plotter in the built-in hand that stands in for it', () => {
    const own = plotLetter('card', letter, 0.5)
    const standIn = plotLetter('card', { ...letter, fontName: 'kalam', ownFont: undefined }, 0.5)
    expect(own.strokes).toEqual(standIn.strokes)
    expect(plotLetter('card', { ...letter, ownFont: { ...letter.ownFont!, plotterFont: 'caveat' } }, 0.5).strokes).not.toEqual(own.strokes)
  })

  it('is refused by the renderer when its name is no built-in hand and no file comes with it', () => {
    expect(() => renderCard({ ...letter, ownFont: undefined })).toThrow(/neither a built-in hand nor given with its file/)
  })
})
