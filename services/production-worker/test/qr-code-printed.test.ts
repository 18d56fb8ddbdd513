import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect } from 'vitest'
import { eq } from 'drizzle-orm'
import sharp from 'sharp'
import { QR_CODE_ALPHABET, QR_CODE_LENGTH, QR_CODE_PATTERN } from '@letters/contracts'
import { cardDesigns, letters } from '@letters/db'
import { singleLetter } from '@letters/test/support/factories'
import { it as base } from '@letters/test/support/fixtures'
import { pdfText } from '@letters/test/support/pdf'
import { reachStatus, type Pipeline } from '@letters/test/support/pipeline'
import { pagePixels, readQr, type ReadQr } from '@letters/test/support/qr'

const it = base.extend({ pipelineOptions: { label: 'qrprint' } })

const trackingUrl = 'https://tienda.example.com/gracias'

/** The QR code on the page of a PDF that has one (a card printed with its front has it on its back), and which page; null when none has. */
async function qrOf(pdf: Buffer): Promise<{ page: number; read: ReadQr; width: number; height: number } | null> {
  const { pages } = await pdfText(pdf)
  for (let page = 1; page <= pages; page++) {
    const pixels = await pagePixels(pdf, page)
    const read = readQr(pixels)
    if (read) return { page, read, width: (pixels.width * 25.4) / pixels.dpi, height: (pixels.height * 25.4) / pixels.dpi }
  }
  return null
}

async function trackingOf(pipeline: Pipeline, id: string) {
  const [row] = await pipeline.app.db.select({ url: letters.trackingUrl, code: letters.trackingCode }).from(letters).where(eq(letters.id, id))
  return row!
}

describe('a letter sent with a trackingUrl', () => {
  // Three letters through the whole pipeline and three rasterised files: 10 s alone, several times that on a loaded machine.
  it("reaches the printer with a card whose QR code reads as the letter's short link, in the corner its design had when it was accepted", async ({
    pipeline,
  }) => {
    const base = pipeline.config.publicBaseUrl
    const tracked = await pipeline.send({ trackingUrl })
    // A design placing the code later: the letter accepted before keeps the default place, the next one takes the design's.
    await pipeline.app.db
      .update(cardDesigns)
      .set({ qrPlacement: { corner: 'top-left', sizeMm: 25 } })
      .where(eq(cardDesigns.id, pipeline.account.cardDesignId))
    const placed = await pipeline.send({ trackingUrl })
    const plain = await pipeline.send()
    for (const id of [tracked, placed, plain]) await reachStatus(pipeline, id, 'printed', 90_000)
    expect(await pipeline.spooled()).toEqual(expect.arrayContaining([tracked, placed, plain].map((id) => `${id}.card.pdf`)))

    for (const [id, corner] of [
      [tracked, 'bottom-right'],
      [placed, 'top-left'],
    ] as const) {
      const tracking = await trackingOf(pipeline, id)
      expect(tracking.url).toBe(trackingUrl)
      expect(tracking.code).toMatch(QR_CODE_PATTERN)
      const card = await qrOf(await readFile(join(pipeline.spoolDir, `${id}.card.pdf`)))
      expect(card?.read.text).toBe(`${base}/q/${tracking.code}`)
      // The page holds the card (and its bleed, printed with a front): the code in the expected quarter of it.
      const { topLeft, bottomRight } = card!.read.corners
      if (corner === 'top-left') expect([bottomRight.x < card!.width / 2, bottomRight.y < card!.height / 2]).toEqual([true, true])
      else expect([topLeft.x > card!.width / 2, topLeft.y > card!.height / 2]).toEqual([true, true])
    }
    // Without a trackingUrl, no code and no tracking.
    expect(await qrOf(await readFile(join(pipeline.spoolDir, `${plain}.card.pdf`)))).toBeNull()
    expect(await trackingOf(pipeline, plain)).toEqual({ url: null, code: null })

    // The proof the client looks at, drawn by the gateway: the same code.
    const proof = await pipeline.client('GET', `/cards/${tracked}/proof`)
    expect(proof.statusCode).toBe(200)
    expect((await qrOf(proof.rawPayload))?.read.text).toBe(`${base}/q/${(await trackingOf(pipeline, tracked)).code}`)
  }, 240_000)

  it("previews the card with a code of the account's, the same image for the same body, no letter's", async ({ pipeline }) => {
    const body = singleLetter(pipeline.account, { message: 'Gracias por tu pedido, Lucía. ¡Hasta pronto!', address: 'C/ Mayor 1', province: '', trackingUrl })
    const previews = await Promise.all([1, 2].map(() => pipeline.client('POST', '/single/preview', body)))
    for (const preview of previews) expect(preview.statusCode, preview.body).toBe(200)
    expect(previews[0]!.rawPayload.equals(previews[1]!.rawPayload)).toBe(true)
    // At most 1,000 px for a 148 mm card, some 170 dpi: three pixels and more to a module, which jsQR reads.
    const { data, info } = await sharp(previews[0]!.rawPayload).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
    const read = readQr({
      data: new Uint8ClampedArray(data.buffer, data.byteOffset, data.length),
      width: info.width,
      height: info.height,
      dpi: (info.width * 25.4) / 148,
    })
    const link = new RegExp(`^${pipeline.config.publicBaseUrl.replace(/[.]/g, '\\.')}/q/[${QR_CODE_ALPHABET}]{${QR_CODE_LENGTH}}$`)
    expect(read?.text).toMatch(link)
    const [stored] = await pipeline.app.db
      .select({ id: letters.id })
      .from(letters)
      .where(eq(letters.trackingCode, read!.text.split('/q/')[1]!))
    expect(stored).toBeUndefined()
  })
})
