import { readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect } from 'vitest'
import { eq } from 'drizzle-orm'
import { getDocument, OPS } from 'pdfjs-dist/legacy/build/pdf.mjs'
import { letters, printHandoffs } from '@letters/db'
import { proofKey } from '@letters/gateway/proofs'
import { pdfText } from '../support/pdf.js'
import { code128Bars } from '@letters/render'
import { barWidths } from '../support/barcode.js'
import { cardArea, envelopeArea, plottedBars, readGcode, readSvg } from '../support/plotter-files.js'
import { reachStatus } from '../support/pipeline.js'
import { singleLetter } from '../support/factories.js'
import { it as base } from '../support/fixtures.js'

// Pen commands other than the defaults, as a servo plotter's firmware wants them.
const it = base.extend({ pipelineOptions: { label: 'plotter', env: { PRINTER: 'plotter', PLOTTER_PEN_UP: 'M3 S30', PLOTTER_PEN_DOWN: 'M3 S90' } } })

const message = 'Querida Lucía: ¡qué alegría verte! ¿Vendrás mañana al jardín? La cigüeña y el pingüino te esperan. Ça va. '.repeat(10).slice(0, 1000)
const plotterFiles = (id: string) => [`${id}.card.gcode`, `${id}.card.svg`, `${id}.envelope.gcode`, `${id}.envelope.svg`]

/** How many strokes (PDF paths stroked) each page of a proof draws. */
async function strokedPaths(pdf: Buffer): Promise<number[]> {
  const document = await getDocument({ data: new Uint8Array(pdf), useSystemFonts: false, isEvalSupported: false }).promise
  const counts = []
  for (let page = 1; page <= document.numPages; page++)
    counts.push((await (await document.getPage(page)).getOperatorList()).fnArray.filter((op) => op === OPS.stroke).length)
  return counts
}

describe('PRINTER=plotter', () => {
  // 8 s alone, several times that on a loaded machine: the file's pipeline is started within this
  // test, the first to ask for it (5 s), and the letter is drawn twice, for the plotter and for its proof.
  it('prints a 1,000-character letter as four files in the spool, one handoff each, that parse and stay inside the margins', async ({ pipeline }) => {
    const id = await pipeline.send({ message })
    // Drawn in strokes and printed in 1.5 s alone, several times that on a loaded machine.
    const printed = await reachStatus(pipeline, id, 'printed', 60_000)
    expect(printed.events.at(-1)).toMatchObject({ status: 'printed', detail: 'Entregada al plóter (spool): tarjeta y sobre' })
    expect(await pipeline.spooled()).toEqual(plotterFiles(id))
    const handoffs = await pipeline.app.db.select({ file: printHandoffs.file }).from(printHandoffs).where(eq(printHandoffs.letterId, id))
    expect(handoffs.map((row) => row.file).sort()).toEqual(plotterFiles(id))

    const pen = { up: 'M3 S30', down: 'M3 S90' }
    const strokes: number[] = []
    for (const [kind, area] of [
      ['card', cardArea],
      ['envelope', envelopeArea],
    ] as const) {
      const gcode = readGcode(await readFile(join(pipeline.spoolDir, `${id}.${kind}.gcode`), 'utf8'), area, pen)
      expect(gcode.outside, kind).toEqual([])
      expect(gcode.feeds.G1).toEqual(new Set([pipeline.config.plotter.drawFeed]))
      const svg = readSvg(await readFile(join(pipeline.spoolDir, `${id}.${kind}.svg`), 'utf8'), area)
      expect(svg.outside, kind).toEqual([])
      expect(svg.paths).toBe(gcode.lifts - 1)
      strokes.push(svg.paths)
      if (kind === 'envelope') {
        // The letter's code, as the scanner on the floor reads it: the bars decode to it, in both files.
        const [letter] = await pipeline.app.db.select({ code: letters.code }).from(letters).where(eq(letters.id, id))
        const { penWidth } = pipeline.config.plotter
        for (const drawn of [svg.strokes, gcode.strokes]) expect(barWidths(plottedBars(drawn, penWidth, 10).bars, 0.3)).toEqual(code128Bars(letter!.code))
      }
      // The artifact store keeps what the plotter got.
      expect((await pipeline.app.artifacts.get(`${id}/${kind}.gcode`))?.equals(await readFile(join(pipeline.spoolDir, `${id}.${kind}.gcode`)))).toBe(true)
    }

    // The proof draws the same strokes, as paths: one stroked path per stroke, no text.
    const proof = await pipeline.client('GET', `/cards/${id}/proof`)
    expect(proof.statusCode).toBe(200)
    expect((await pdfText(proof.rawPayload)).text).toBe('')
    expect(await strokedPaths(proof.rawPayload)).toEqual(strokes)
    expect(await pipeline.app.artifacts.get(proofKey(id, 'plotter'))).toBeDefined()
  }, 180_000)

  it('never hands a test letter to the plotter: its files are kept, nothing reaches the spool', async ({ pipeline }) => {
    const issued = await pipeline.admin('POST', `/admin/accounts/${pipeline.account.id}/api-keys`, { mode: 'test' })
    const testKey = issued.json<{ apiKey: string }>().apiKey
    const response = await pipeline.app.inject({
      method: 'POST',
      url: '/single',
      headers: { 'x-api-key': testKey },
      payload: singleLetter(pipeline.account, { message: 'Una carta de prueba, señora.', address: 'C/ Mayor 1', province: '' }),
    })
    expect(response.statusCode, response.body).toBe(200)
    const id = response.json<{ cardId: string }>().cardId
    await expect
      .poll(
        async () => (await pipeline.app.inject({ method: 'GET', url: `/cards/${id}`, headers: { 'x-api-key': testKey } })).json<{ status: string }>().status,
        { timeout: 10_000, interval: 50 },
      )
      .toBe('printed')
    expect(await pipeline.app.artifacts.get(`${id}/card.gcode`)).toBeDefined()
    expect(await pipeline.app.artifacts.get(`${id}/envelope.svg`)).toBeDefined()
    expect((await pipeline.spooled()).filter((name) => name.startsWith(id))).toEqual([])
    expect(await pipeline.app.db.select().from(printHandoffs).where(eq(printHandoffs.letterId, id))).toEqual([])
  })

  it('gives a letter produced as PDFs its PDF proof, whatever the floor prints with now', async ({ pipeline }) => {
    // A letter the floor printed before it turned to the plotter: its card.pdf in the store.
    const id = await pipeline.send({ message: 'Una carta de antes del plóter.' })
    await reachStatus(pipeline, id, 'printed', 20_000)
    await rm(join(pipeline.config.artifactsDir, id, 'card.gcode'))
    await pipeline.app.artifacts.put(`${id}/card.pdf`, Buffer.from('%PDF-'))
    const proof = await pipeline.client('GET', `/cards/${id}/proof`)
    expect(proof.statusCode).toBe(200)
    expect((await pdfText(proof.rawPayload)).text).toContain('Unacartadeantesdelplóter.')
  })
})
