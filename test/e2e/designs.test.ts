import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'csv-parse/sync'
import { eq } from 'drizzle-orm'
import { PDFDocument } from 'pdf-lib'
import sharp from 'sharp'
import { Value } from 'typebox/value'
import { PrintSpec } from '@letters/contracts'
import { pdfPageToPng } from '@letters/artwork'
import { letters, printBatches } from '@letters/db'
import { drawingOf, renderCard, renderEnvelope } from '@letters/render'
import { cardSvg, logoSvg, signatureSvg } from '../support/artwork.js'
import { ADMIN_TOKEN } from '../support/context.js'
import { compact, pdfText } from '../support/pdf.js'
import { readSvg, type PenArea } from '../support/plotter-files.js'
import { reachStatus, startPipeline, type Pipeline } from '../support/pipeline.js'
import { readLetterDrawings } from '@letters/letters'

const MM = 72 / 25.4

/** Each page's size in millimetres, rounded to a tenth. */
async function pageSizes(pdf: Buffer): Promise<Array<[number, number]>> {
  const document = await PDFDocument.load(pdf)
  return document.getPages().map((page) => [Math.round((page.getWidth() / MM) * 10) / 10, Math.round((page.getHeight() / MM) * 10) / 10])
}

/** The colour at a point of a page, as a PNG of it shows it (x, y from 0 to 1). */
async function colourAt(pdf: Buffer, page: number, x: number, y: number): Promise<[number, number, number]> {
  const png = await pdfPageToPng(pdf, page, 400)
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true })
  const offset = (Math.floor(y * (info.height - 1)) * info.width + Math.floor(x * (info.width - 1))) * 3
  return [data[offset]!, data[offset + 1]!, data[offset + 2]!]
}

const near = (colour: [number, number, number], hex: string) => {
  const target = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16))
  return colour.every((channel, i) => Math.abs(channel - target[i]!) <= 24)
}

/** The admin API of the pipeline's gateway, any method; a string body is an artwork file (SVG). */
function adminCall(pipeline: Pipeline, method: 'GET' | 'POST' | 'PATCH' | 'PUT', url: string, payload?: object | string) {
  const headers: Record<string, string> = { authorization: `Bearer ${ADMIN_TOKEN}` }
  if (typeof payload === 'string') headers['content-type'] = 'image/svg+xml'
  return pipeline.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) })
}

async function putArtwork(pipeline: Pipeline, path: string, svg: string) {
  const response = await adminCall(pipeline, 'PUT', `/admin/accounts/${pipeline.account.id}/${path}/artwork`, svg)
  expect(response.statusCode, response.body).toBe(200)
}

/** Creates a design through the admin API and uploads its artwork; its id. */
async function design(pipeline: Pipeline, kind: 'card-designs' | 'envelope-designs', body: object, artwork?: string) {
  const created = await adminCall(pipeline, 'POST', `/admin/accounts/${pipeline.account.id}/${kind}`, body)
  expect(created.statusCode, created.body).toBe(201)
  const id = created.json<{ id: string }>().id
  if (artwork) await putArtwork(pipeline, `${kind}/${id}`, artwork)
  return id
}

const FLOOR_TOKEN = 'designs-floor-token-0123456789'
const floorHeaders = { authorization: `Basic ${Buffer.from(`planta:${FLOOR_TOKEN}`).toString('base64')}` }

const spooled = (pipeline: Pipeline, id: string, file: string) => readFile(join(pipeline.spoolDir, `${id}.${file}`))

describe('the letter the client chose reaches paper (PRINTER=spool)', () => {
  let pipeline: Pipeline
  beforeAll(async () => {
    pipeline = await startPipeline('designs')
  })
  afterAll(() => pipeline?.close())

  it('two letters with different designs give different files, each with its artwork', async () => {
    const floral = await design(pipeline, 'card-designs', { name: 'Tarjeta floral' }, cardSvg('A6', { fill: '#2e7d5b' }))
    const poster = await design(pipeline, 'card-designs', { name: 'Tarjeta grande', format: 'A5' }, cardSvg('A5', { fill: '#b03a2e' }))
    const white = await design(pipeline, 'envelope-designs', { name: 'Sobre blanco' })
    const kraft = await design(pipeline, 'envelope-designs', { name: 'Sobre kraft', format: 'DL', paperColor: '#C8A27A' }, logoSvg)
    const a = await pipeline.send({ cardDesignId: floral, envelopeDesignId: white })
    const b = await pipeline.send({ cardDesignId: poster, envelopeDesignId: kraft })
    await reachStatus(pipeline, a, 'printed', 20_000)
    await reachStatus(pipeline, b, 'printed', 20_000)

    const [cardA, cardB] = [await spooled(pipeline, a, 'card.pdf'), await spooled(pipeline, b, 'card.pdf')]
    // Front artwork then handwriting, each at trim plus 3 mm of bleed on every side.
    expect(await pageSizes(cardA)).toEqual([
      [154, 111],
      [154, 111],
    ])
    expect(await pageSizes(cardB)).toEqual([
      [216, 154],
      [216, 154],
    ])
    // Each front carries its own artwork: the background runs to the bleed's corner.
    expect(near(await colourAt(cardA, 1, 0.01, 0.01), '#2e7d5b')).toBe(true)
    expect(near(await colourAt(cardB, 1, 0.01, 0.01), '#b03a2e')).toBe(true)
    // The handwritten side is paper, not artwork.
    expect(near(await colourAt(cardA, 2, 0.01, 0.01), '#ffffff')).toBe(true)

    expect(await pageSizes(await spooled(pipeline, a, 'envelope.pdf'))).toEqual([[162, 114]])
    const envelopeB = await spooled(pipeline, b, 'envelope.pdf')
    expect(await pageSizes(envelopeB)).toEqual([[220, 110]])
    // The print file is on the paper the floor loads: never tinted with its colour (the proof is).
    expect(near(await colourAt(envelopeB, 1, 0.5, 0.3), '#ffffff')).toBe(true)

    const proof = await pipeline.client('GET', `/cards/${b}/proof`)
    expect(proof.statusCode).toBe(200)
    // Front, handwriting, envelope, at trim size; the envelope on its kraft.
    expect(await pageSizes(proof.rawPayload)).toEqual([
      [210, 148],
      [210, 148],
      [220, 110],
    ])
    expect(near(await colourAt(proof.rawPayload, 3, 0.5, 0.3), '#c8a27a')).toBe(true)
    const thumbnail = await pipeline.client('GET', `/cards/${b}/proof.png?page=3`)
    expect(thumbnail.statusCode).toBe(200)
    expect(thumbnail.headers['content-type']).toBe('image/png')
    expect((await sharp(thumbnail.rawPayload).metadata()).width).toBeLessThanOrEqual(1000)
    expect((await pipeline.client('GET', `/cards/${b}/proof.png?page=4`)).statusCode).toBe(404)
  })

  it('a preprinted design prints only the handwriting, at its trim size, and its proof shows the front from its artwork', async () => {
    const classic = await design(pipeline, 'card-designs', { name: 'Clásica', production: 'preprinted', stockCode: 'CLASICA-A6' }, cardSvg('A6'))
    const id = await pipeline.send({ cardDesignId: classic })
    await reachStatus(pipeline, id, 'printed', 20_000)
    const card = await spooled(pipeline, id, 'card.pdf')
    expect(await pageSizes(card)).toEqual([[148, 105]])
    expect(near(await colourAt(card, 1, 0.01, 0.01), '#ffffff')).toBe(true)
    expect((await pdfText(card)).text).toContain(compact('Gracias por tu pedido'))
    // Byte for byte the file the same letter gives without the artwork: the floor never prints it.
    const [source] = await readLetterDrawings(pipeline.app.db, [id])
    const drawing = drawingOf(source!, pipeline.config.floorCountry)
    expect(drawing.design?.card.front).toBeInstanceOf(Uint8Array)
    expect((await renderCard({ ...drawing, design: { ...drawing.design!, card: { ...drawing.design!.card, front: null } } })).equals(card)).toBe(true)

    // The proof: the front (the artwork's green, its yellow disc in the middle), the writing, the envelope.
    const proof = (await pipeline.client('GET', `/cards/${id}/proof`)).rawPayload
    expect(await pageSizes(proof)).toEqual([
      [148, 105],
      [148, 105],
      [162, 114],
    ])
    expect(near(await colourAt(proof, 1, 0.02, 0.02), '#2e7d5b')).toBe(true)
    expect(near(await colourAt(proof, 1, 0.5, 0.5), '#f4d35e')).toBe(true)
    expect(near(await colourAt(proof, 2, 0.02, 0.02), '#ffffff')).toBe(true)
    const thumbnail = await pipeline.client('GET', `/cards/${id}/proof.png?page=1`)
    expect(thumbnail.statusCode).toBe(200)
    const { data, info } = await sharp(thumbnail.rawPayload).removeAlpha().raw().toBuffer({ resolveWithObject: true })
    // Not a blank page: the artwork's green over most of it.
    const green = Array.from({ length: info.width * info.height }, (_, at) => [data[3 * at]!, data[3 * at + 1]!, data[3 * at + 2]!] as [number, number, number])
    expect(green.filter((pixel) => near(pixel, '#2e7d5b')).length / green.length).toBeGreaterThan(0.5)
  })

  it('a signature drawing replaces the typed name, and the return address is on the envelope', async () => {
    const account = pipeline.account
    const changed = await adminCall(pipeline, 'PATCH', `/admin/accounts/${account.id}/senders/${account.senderId}`, {
      returnAddress: { name: 'Papelería Luna', address: 'c/ sierpes 4', zip: '41004', city: 'Sevilla', country: 'ES' },
    })
    expect(changed.statusCode, changed.body).toBe(200)
    await putArtwork(pipeline, `signatures/${account.signatureId}`, signatureSvg)
    const signed = await pipeline.send({ signatureId: account.signatureId })
    const unsigned = await pipeline.send()
    await reachStatus(pipeline, signed, 'printed', 20_000)
    await reachStatus(pipeline, unsigned, 'printed', 20_000)
    // The sender's name (the pipeline's account signs as "Papelería Luna") is written only where no drawing signs.
    expect((await pdfText(await spooled(pipeline, unsigned, 'card.pdf'))).text).toContain(compact('Papelería Luna'))
    expect((await pdfText(await spooled(pipeline, signed, 'card.pdf'))).text).not.toContain(compact('Papelería Luna'))
    expect((await pipeline.card(signed)) as unknown).toMatchObject({ signatureId: account.signatureId })
    const envelope = (await pdfText(await spooled(pipeline, signed, 'envelope.pdf'))).text
    expect(envelope).toContain(compact('Calle Sierpes 4'))
    expect(envelope).toContain(compact('41004 Sevilla'))
  })

  it('addressLines are the recipient block as printed, laid out for the destination country', async () => {
    const destinations = [
      {
        to: { name: 'Jane', surname: 'Doe', address: '1600 Pennsylvania Ave NW', zip: '20500', city: 'Washington', province: 'DC', country: 'US' },
        lines: ['Jane Doe', '1600 Pennsylvania Ave NW', 'WASHINGTON DC 20500', 'ESTADOS UNIDOS'],
      },
      {
        to: { name: 'John', surname: 'Smith', address: '10 Downing Street', zip: 'SW1A 2AA', city: 'London', province: '', country: 'GB' },
        lines: ['John Smith', '10 Downing Street', 'LONDON', 'SW1A 2AA', 'REINO UNIDO'],
      },
      {
        to: { name: 'Anna', surname: 'Schmidt', address: 'Unter den Linden 1', zip: '10117', city: 'Berlin', province: '', country: 'DE' },
        lines: ['Anna Schmidt', 'Unter den Linden 1', '10117 BERLIN', 'ALEMANIA'],
      },
      {
        to: { name: 'Marie', surname: 'Dupont', address: '55 Rue du Faubourg Saint-Honoré', zip: '75008', city: 'Paris', province: '', country: 'FR' },
        lines: ['Marie Dupont', '55 Rue du Faubourg Saint-Honoré', '75008 PARIS', 'FRANCIA'],
      },
      {
        to: { name: 'Lucía', surname: 'García', address: 'c/ mayor 1', zip: '28013', city: 'Madrid', province: '', country: 'ES' },
        lines: ['Lucía García', 'Calle Mayor 1', '28013 Madrid'],
      },
    ]
    const ids = await Promise.all(destinations.map(({ to }) => pipeline.send(to)))
    for (const [index, id] of ids.entries()) {
      const card = (await reachStatus(pipeline, id, 'printed', 20_000)) as unknown as { addressLines: string[] | null }
      expect(card.addressLines).toEqual(destinations[index]!.lines)
      // Exactly as printed: every line is on the envelope.
      const envelope = (await pdfText(await spooled(pipeline, id, 'envelope.pdf'))).text
      for (const line of destinations[index]!.lines) expect(envelope).toContain(compact(line))
    }
    // Null before the address is verified: a scheduled letter has not been seen by the address stage.
    const later = new Date(Date.now() + 3_600_000).toISOString()
    const scheduled = await pipeline.send({ sendAt: later })
    expect(((await pipeline.card(scheduled)) as unknown as { addressLines: unknown }).addressLines).toBeNull()
  })

  it('an artwork uploaded after a letter was accepted leaves its reprint byte-identical', async () => {
    const floral = await design(pipeline, 'card-designs', { name: 'Versión 1' }, cardSvg('A6', { fill: '#225599' }))
    const id = await pipeline.send({ cardDesignId: floral })
    await reachStatus(pipeline, id, 'printed', 20_000)
    const printed = await spooled(pipeline, id, 'card.pdf')
    const proofBefore = (await pipeline.client('GET', `/cards/${id}/proof`)).rawPayload
    await putArtwork(pipeline, `card-designs/${floral}`, cardSvg('A6', { fill: '#ee8800' }))
    // Nor does a change of the design or a renamed sender.
    expect((await adminCall(pipeline, 'PATCH', `/admin/accounts/${pipeline.account.id}/card-designs/${floral}`, { name: 'Versión 2' })).statusCode).toBe(200)
    const renamed = await adminCall(pipeline, 'PATCH', `/admin/accounts/${pipeline.account.id}/senders/${pipeline.account.senderId}`, { name: 'Otro nombre' })
    expect(renamed.statusCode).toBe(200)
    // Drawn again from the letter's row, as a reprint is: the same bytes, with the first artwork.
    const [source] = await readLetterDrawings(pipeline.app.db, [id])
    const drawing = drawingOf(source!, pipeline.config.floorCountry)
    expect((await renderCard(drawing)).equals(printed)).toBe(true)
    expect((await renderEnvelope(drawing)).equals(await spooled(pipeline, id, 'envelope.pdf'))).toBe(true)
    expect(near(await colourAt(printed, 1, 0.01, 0.01), '#225599')).toBe(true)
    // The proof is kept once final, and a new one drawn would be the same.
    expect((await pipeline.client('GET', `/cards/${id}/proof`)).rawPayload.equals(proofBefore)).toBe(true)
    // A new letter gets the new version.
    const next = await pipeline.send({ cardDesignId: floral })
    await reachStatus(pipeline, next, 'printed', 20_000)
    expect(near(await colourAt(await spooled(pipeline, next, 'card.pdf'), 1, 0.01, 0.01), '#ee8800')).toBe(true)
    const [row] = await pipeline.app.db.select({ spec: letters.printSpec }).from(letters).where(eq(letters.id, id))
    expect(row?.spec?.card.artwork?.version).toBe(1)
    // The SQL that writes a print spec (letter_print_spec) and its schema agree.
    expect(Value.Errors(PrintSpec, row?.spec)).toEqual([])
    expect(row?.spec).toMatchObject({ card: { name: 'Versión 1' }, senderName: 'Papelería Luna' })
  })
})

describe('batches hold one stock (PRINTER=batch)', () => {
  let pipeline: Pipeline
  beforeAll(async () => {
    pipeline = await startPipeline('designbatch', { env: { PRINTER: 'batch', BATCH_MAX_LETTERS: '50', BATCH_MAX_WAIT_MS: '3000', FLOOR_TOKEN } })
  })
  afterAll(() => pipeline?.close())

  it('splits letters by card and envelope stock, and the manifest and the floor page name it', async () => {
    const plain = await design(pipeline, 'card-designs', { name: 'Lisa', stockCode: 'LISA' })
    // The same stock code on a card of another size: another stock for the floor, another batch.
    const big = await design(pipeline, 'card-designs', { name: 'Lisa grande', format: 'A5', stockCode: 'LISA' })
    // Its artwork is its proofs' only: the stock stays the preprinted one, no front printed on it.
    const classic = await design(pipeline, 'card-designs', { name: '<b>Clásica</b>', production: 'preprinted', stockCode: 'CLASICA-A6' }, cardSvg('A6'))
    const kraft = await design(pipeline, 'envelope-designs', { name: 'Sobre kraft', stockCode: 'C6-KRAFT' })
    const ids = [
      ...(await Promise.all([1, 2, 3].map(() => pipeline.send({ cardDesignId: plain, envelopeDesignId: kraft })))),
      ...(await Promise.all([1, 2].map(() => pipeline.send({ cardDesignId: classic, envelopeDesignId: kraft })))),
      await pipeline.send({ cardDesignId: big, envelopeDesignId: kraft }),
    ]
    // The floor page names each open tray's stock while it fills (the design names escaped).
    await expect.poll(async () => (await pipeline.app.db.select().from(printBatches)).length, { timeout: 20_000, interval: 50 }).toBe(3)
    const page = await pipeline.app.inject({ method: 'GET', url: '/floor', headers: floorHeaders })
    expect(page.statusCode).toBe(200)
    for (const stock of ['A6 LISA', 'A5 LISA', 'A6 CLASICA-A6', 'C6 C6-KRAFT']) expect(page.body).toContain(stock)
    for (const id of ids) await reachStatus(pipeline, id, 'printed', 30_000)
    const batches = await pipeline.app.db.select().from(printBatches)
    expect(batches.map((batch) => [batch.cardStock, batch.envelopeStock, batch.letterCount]).sort()).toEqual([
      ['A5 LISA', 'C6 C6-KRAFT', 1],
      ['A6 CLASICA-A6', 'C6 C6-KRAFT', 2],
      ['A6 LISA', 'C6 C6-KRAFT', 3],
    ])
    const names: Record<string, string> = { 'A5 LISA': 'Lisa grande', 'A6 CLASICA-A6': '<b>Clásica</b>', 'A6 LISA': 'Lisa' }
    for (const batch of batches) {
      const manifest = parse<Record<string, string>>(await readFile(join(pipeline.spoolDir, `batch-${batch.id}.manifest.csv`)), { bom: true, columns: true })
      expect(new Set(manifest.map((row) => `${row.cardDesign}|${row.cardStock}|${row.envelopeDesign}|${row.envelopeStock}`))).toEqual(
        new Set([`${names[batch.cardStock]}|${batch.cardStock}|Sobre kraft|C6 C6-KRAFT`]),
      )
    }
  })
})

describe('PRINTER=plotter draws a vector signature stroke by stroke', () => {
  let pipeline: Pipeline
  beforeAll(async () => {
    pipeline = await startPipeline('designplot', { env: { PRINTER: 'plotter' } })
  })
  afterAll(() => pipeline?.close())

  /** A rectangle three times as wide as it is high, then a diagonal: shapes no hand writes. */
  const boxSignature = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 120 40"><path d="M0 0 L120 0 L120 40 L0 40 Z"/><path d="M0 40 L120 0"/></svg>`

  it('puts the drawing’s strokes in the card’s plotter files, inside the card', async () => {
    const account = pipeline.account
    await putArtwork(pipeline, `signatures/${account.signatureId}`, boxSignature)
    const signed = await pipeline.send({ signatureId: account.signatureId })
    const unsigned = await pipeline.send()
    await reachStatus(pipeline, signed, 'printed', 20_000)
    await reachStatus(pipeline, unsigned, 'printed', 20_000)
    const area: PenArea = { width: 148, height: 105, margin: 5 }
    const boxes = async (id: string) => {
      const svg = readSvg(await readFile(join(pipeline.spoolDir, `${id}.card.svg`), 'utf8'), area)
      expect(svg.outside).toEqual([])
      return svg.strokes.filter((stroke) => {
        if (stroke.length !== 5) return false
        const xs = stroke.map(([x]) => x)
        const ys = stroke.map(([, y]) => y)
        const width = Math.max(...xs) - Math.min(...xs)
        const height = Math.max(...ys) - Math.min(...ys)
        return height > 3 && Math.abs(width / height - 3) < 0.05
      })
    }
    expect(await boxes(signed)).toHaveLength(1)
    expect(await boxes(unsigned)).toHaveLength(0)
  })

  it('hands what a pen cannot draw (the printed front, the logo) to a printer first, as PDFs', async () => {
    const floral = await design(pipeline, 'card-designs', { name: 'Floral' }, cardSvg('A6', { fill: '#2e7d5b' }))
    const kraft = await design(pipeline, 'envelope-designs', { name: 'Kraft', paperColor: '#C8A27A' }, logoSvg)
    const id = await pipeline.send({ cardDesignId: floral, envelopeDesignId: kraft })
    await reachStatus(pipeline, id, 'printed', 20_000)
    const files = (await pipeline.spooled()).filter((name) => name.startsWith(id))
    expect(files).toEqual([
      `${id}.card-front.pdf`,
      `${id}.card.gcode`,
      `${id}.card.svg`,
      `${id}.envelope-logo.pdf`,
      `${id}.envelope.gcode`,
      `${id}.envelope.svg`,
    ])
    const front = await spooled(pipeline, id, 'card-front.pdf')
    expect(await pageSizes(front)).toEqual([[154, 111]])
    expect(near(await colourAt(front, 1, 0.01, 0.01), '#2e7d5b')).toBe(true)
    expect(await pageSizes(await spooled(pipeline, id, 'envelope-logo.pdf'))).toEqual([[162, 114]])
  })
})
