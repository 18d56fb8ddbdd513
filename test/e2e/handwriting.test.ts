import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect } from 'vitest'
import { eq } from 'drizzle-orm'
import { DRAWING_REVISION, fontNames, inkColors } from '@letters/contracts'
import { letters } from '@letters/db'
import { readLetterDrawings } from '@letters/letters'
import { drawingOf, envelopeOf, inkRgb, renderCard, renderEnvelope } from '@letters/render'
import { THANK_YOU_CARD, filledShapes, twinReport } from '../support/glyph-twins.js'
import { closestReading, ocrRegion, recipientRegion } from '../support/ocr.js'
import { reachStatus, type Pipeline } from '../support/pipeline.js'
import { it as base } from '../support/fixtures.js'

const it = base.extend({ pipelineOptions: { label: 'handwriting' } })

const MESSAGE = THANK_YOU_CARD

const spooled = (pipeline: Pipeline, id: string, file: string) => readFile(join(pipeline.spoolDir, `${id}.${file}`))

describe('the handwriting on the floor’s files', () => {
  it('gives every glyph of a 600-character card its own shape in every hand, in the ink asked for, and draws a reprint byte for byte', async ({ pipeline }) => {
    const sent = await Promise.all(
      fontNames.map(async (fontName, index) => {
        const inkColor = inkColors[index % inkColors.length]!
        return { fontName, inkColor, id: await pipeline.send({ fontName, inkColor, message: MESSAGE }) }
      }),
    )
    for (const { fontName, inkColor, id } of sent) {
      await reachStatus(pipeline, id, 'printed', 30_000)
      const card = await spooled(pipeline, id, 'card.pdf')
      const shapes = await filledShapes(card)
      const report = twinReport(shapes)
      console.log(
        `${fontName} (${inkColor}), spooled card: ${report.withoutTwin} of ${report.shapes} glyphs without an affine twin (${(report.share * 100).toFixed(1)} %)`,
      )
      expect(report.shapes).toBeGreaterThan(480)
      expect(report.share).toBeGreaterThanOrEqual(0.9)
      // Every glyph in the letter's ink, on the card and the envelope alike.
      const envelope = await spooled(pipeline, id, 'envelope.pdf')
      expect(new Set(shapes.map((shape) => shape.fill))).toEqual(new Set([inkRgb[inkColor]]))
      expect(new Set((await filledShapes(envelope)).map((shape) => shape.fill))).toEqual(new Set([inkRgb[inkColor]]))
      expect((await pipeline.card(id)) as unknown).toMatchObject({ fontName, inkColor })
      const [row] = await pipeline.app.db.select({ drawing: letters.drawing }).from(letters).where(eq(letters.id, id))
      expect(row?.drawing).toBe(DRAWING_REVISION)
      // Drawn again from the letter's row, as a reprint is: the same bytes.
      const [source] = await readLetterDrawings(pipeline.app.db, [id])
      const drawing = drawingOf(source!, pipeline.config.floorCountry)
      expect((await renderCard(drawing)).equals(card)).toBe(true)
      expect((await renderEnvelope(drawing)).equals(envelope)).toBe(true)
    }
  })

  it('prints a letter accepted before shapes, in black glyphs of its font, as it was drawn then', async ({ pipeline }) => {
    const id = await pipeline.send({ inkColor: 'green' })
    // As a letter of the earlier drawing is stored: a release before this one writes neither column.
    await pipeline.app.db.update(letters).set({ drawing: 4, inkColor: 'black' }).where(eq(letters.id, id))
    await reachStatus(pipeline, id, 'printed', 30_000)
    const card = await spooled(pipeline, id, 'card.pdf')
    expect(await filledShapes(card)).toHaveLength(0)
    const [source] = await readLetterDrawings(pipeline.app.db, [id])
    expect((await renderCard({ ...drawingOf(source!, pipeline.config.floorCountry), drawing: 4 })).equals(card)).toBe(true)
  })

  it('prints the town, postcode and country of a UK letter in homemade-apple so that OCR reads each back from its spooled envelope with at most one character wrong', async ({
    pipeline,
  }) => {
    const id = await pipeline.send({
      fontName: 'homemade-apple',
      name: 'Oliver',
      surname: 'Brown',
      address: '10 Downing Street',
      zip: 'SW1A 2AA',
      city: 'London',
      province: '',
      country: 'GB',
    })
    await reachStatus(pipeline, id, 'printed', 30_000)
    const [source] = await readLetterDrawings(pipeline.app.db, [id])
    const drawing = drawingOf(source!, pipeline.config.floorCountry)
    expect(drawing.recipientLines.slice(-3)).toEqual(['LONDON', 'SW1A 2AA', 'REINO UNIDO'])
    const read = await ocrRegion(await spooled(pipeline, id, 'envelope.pdf'), recipientRegion(envelopeOf(drawing)))
    const checks = ['LONDON', 'SW1A 2AA', 'REINO UNIDO'].map((expected) => ({ expected, ...closestReading(read, expected) }))
    console.log(
      `homemade-apple, spooled UK envelope: ${checks.map(({ expected, read, distance }) => `${expected} → ${JSON.stringify(read)} (${distance})`).join('  ')}`,
    )
    for (const { expected, read, distance } of checks) expect(distance, `${expected} read as ${JSON.stringify(read)}`).toBeLessThanOrEqual(1)
  })
})
