import { describe, expect, it } from 'vitest'
import { fontNames, type FontName } from '@letters/contracts'
import { affineDistance, filledShapes, twinReport } from '@letters/test/support/glyph-twins'
import { handFont } from '../src/fonts.js'
import { renderCard, renderEnvelope, type LetterToRender } from '../src/index.js'
import { outlineOf, simplifiedPath, varyOutline } from '../src/shape.js'
import { cardMessage } from './samples.js'

const letter = (fontName: FontName): LetterToRender => ({
  letterId: '2b7d6c1e-4f3a-4e5b-9c8d-7a6b5c4d3e2f',
  code: 'SHAPES0001',
  fontName,
  message: cardMessage(600),
  signature: 'Ana, de Papelería Luna',
  recipientLines: ['Lucía García Pérez', 'Calle Mayor 12, 3º B', '28013 Madrid'],
  senderLines: ['Papelería Luna', 'Calle Sierpes 4', '41004 Sevilla'],
})

describe('every glyph drawn with a shape of its own', () => {
  it.each(fontNames)('%s: nine in ten glyphs of a 600-character card have no instance an affine map brings within 2 % of their height', async (fontName) => {
    const shapes = await filledShapes(await renderCard(letter(fontName)))
    const report = twinReport(shapes)
    // The figure, for the run's output.
    console.log(`${fontName}: ${report.withoutTwin} of ${report.shapes} glyphs without an affine twin (${(report.share * 100).toFixed(1)} %)`)
    expect(report.shapes).toBeGreaterThan(480)
    expect(report.share).toBeGreaterThanOrEqual(0.9)
  })

  it.each(fontNames)('%s: so do the envelope’s', async (fontName) => {
    const report = twinReport(await filledShapes(await renderEnvelope(letter(fontName))))
    expect(report.shapes).toBeGreaterThan(60)
    expect(report.share).toBeGreaterThanOrEqual(0.9)
  })

  it('is a twin, by the measure, of a glyph only moved, sized and slanted, and not of one bent', () => {
    const font = handFont('caveat')
    const outline = outlineOf(simplifiedPath(font.glyphForCodePoint('a'.codePointAt(0)!).path, 8), font.unitsPerEm, null, {
      minAnchors: 14,
      bend: 'cubic',
      bentHandles: false,
    })
    const placed = (points: Float64Array, scale: number, slant: number, dx: number) =>
      Array.from({ length: points.length / 2 }, (_, i) => {
        const x = points[2 * i]!
        const y = points[2 * i + 1]!
        return [scale * (x + slant * y) + dx, scale * y + dx / 3]
      }).flat()
    const moved = [0, 1, 2, 3].map((i) => ({ structure: 'a', points: placed(outline.points, 10 + i, 0.03 * i, 50 * i) }))
    expect(twinReport(moved).share).toBe(0)
    const bent = [0, 1, 2, 3].map((i) => {
      const varied = new Float64Array(outline.points.length)
      varyOutline(outline, 1000 + i, varied)
      return { structure: 'a', points: placed(varied, 10 + i, 0.03 * i, 50 * i) }
    })
    expect(twinReport(bent).share).toBe(1)
    // And the bend is small: the shape stays the letter's, within a few percent of its height.
    expect(affineDistance(moved[0]!.points, bent[0]!.points)).toBeLessThan(0.06)
  })

  it('leaves the glyphs of a letter accepted before shapes as its font’s text, drawn as before', async () => {
    const before = await renderCard({ ...letter('caveat'), drawing: 4 })
    expect(await filledShapes(before)).toHaveLength(0)
  })
})
