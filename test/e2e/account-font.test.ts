import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { describe, expect } from 'vitest'
import { eq } from 'drizzle-orm'
import { letters } from '@letters/db'
import { readLetterDrawings } from '@letters/letters'
import { drawingOf, renderCard } from '@letters/render'
import { THANK_YOU_CARD, filledShapes, twinReport } from '../support/glyph-twins.js'
import { reachStatus, type Pipeline } from '../support/pipeline.js'
import { ADMIN_TOKEN } from '../support/context.js'
import { it as base } from '../support/fixtures.js'

const it = base.extend({ pipelineOptions: { label: 'account-font' } })
const require = createRequire(import.meta.url)

/** An openly licensed handwriting font, in the two forms a client may upload it in. */
const fontFile = (extension: 'woff' | 'woff2') => readFile(require.resolve(`@fontsource/patrick-hand/files/patrick-hand-latin-400-normal.${extension}`))

const MESSAGE = THANK_YOU_CARD

const spooledCard = (pipeline: Pipeline, id: string) => readFile(join(pipeline.spoolDir, `${id}.card.pdf`))

describe('a letter in the account’s own font', () => {
  it('is drawn in that font with every glyph its own shape, and keeps the version it was accepted with after a new upload', async ({ pipeline }) => {
    const { account } = pipeline
    const base = `/admin/accounts/${account.id}/fonts`
    expect((await pipeline.admin('POST', base, { name: 'mi-letra', family: 'Mi Letra' })).statusCode).toBe(201)
    const first = await pipeline.app.inject({
      method: 'PUT',
      url: `${base}/mi-letra/file`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'font/woff2' },
      payload: await fontFile('woff2'),
    })
    expect(first.statusCode, first.body).toBe(200)
    expect(first.json()).toMatchObject({ name: 'mi-letra', family: 'Mi Letra', file: { contentType: 'font/woff2', version: 1 } })

    const id = await pipeline.send({ fontName: 'mi-letra', message: MESSAGE })
    await reachStatus(pipeline, id, 'printed', 30_000)
    const card = await spooledCard(pipeline, id)
    const report = twinReport(await filledShapes(card))
    console.log(
      `mi-letra (Patrick Hand), spooled card: ${report.withoutTwin} of ${report.shapes} glyphs without an affine twin (${(report.share * 100).toFixed(1)} %)`,
    )
    expect(report.shapes).toBeGreaterThan(480)
    expect(report.share).toBeGreaterThanOrEqual(0.9)
    const [row] = await pipeline.app.db.select({ fontName: letters.fontName, fontVersion: letters.fontVersion }).from(letters).where(eq(letters.id, id))
    expect(row).toEqual({ fontName: 'mi-letra', fontVersion: 1 })

    // A second version (the same font as WOFF): new letters take it, the first letter keeps its own.
    const second = await pipeline.app.inject({
      method: 'PUT',
      url: `${base}/mi-letra/file`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'font/woff' },
      payload: await fontFile('woff'),
    })
    expect(second.json()).toMatchObject({ file: { contentType: 'font/woff', version: 2 } })
    const later = await pipeline.send({ fontName: 'mi-letra' })
    const [laterRow] = await pipeline.app.db.select({ fontVersion: letters.fontVersion }).from(letters).where(eq(letters.id, later))
    expect(laterRow?.fontVersion).toBe(2)
    // Drawn again from its row, as a reprint is: the same bytes, from version 1.
    const [source] = await readLetterDrawings(pipeline.app.db, [id])
    expect(source?.ownFont?.key).toMatch(/:1$/)
    expect((await renderCard(drawingOf(source!, pipeline.config.floorCountry))).equals(card)).toBe(true)
  })
})
