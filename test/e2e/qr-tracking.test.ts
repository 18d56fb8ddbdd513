/**
 * A letter's QR code and its return on the running stack: the gateway listening on a port of its
 * own (PUBLIC_BASE_URL, so the printed code links to it), the address and production workers
 * printing into the spool, and a webhook worker delivering to a real receiver. The code is read
 * back from the printed card as a phone reads it and its link opened over HTTP.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect } from 'vitest'
import { eq } from 'drizzle-orm'
import { QR_CODE_PATTERN, QR_SCANNED_EVENT } from '@letters/contracts'
import { letters, qrScans } from '@letters/db'
import { startWebhookWorker } from '@letters/webhook-worker/worker'
import { it as base } from '../support/fixtures.js'
import { pdfText } from '../support/pdf.js'
import { reachStatus, silentLog, type Pipeline } from '../support/pipeline.js'
import { freePort } from '../support/processes.js'
import { pagePixels, readQr } from '../support/qr.js'
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../support/webhook-receiver.js'

const RETURNED_EVENT = 'letter.returned'
/** The client's page, with parameters of its own (one with an escaped ñ) that a scan must keep. */
const TRACKING_URL = 'https://tienda.example.com/gracias?ref=carta&utm_campaign=oto%C3%B1o'
const PHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1'

// The port the gateway listens on is known before it starts: the printed code names it.
const port = await freePort()
const publicBaseUrl = `http://127.0.0.1:${port}`

/**
 * The pipeline's gateway listening on `port`, a webhook worker, and the account's endpoint on a
 * real receiver subscribed to letter.qr_scanned and letter.returned only (with its `secret`).
 */
const it = base
  .extend({
    pipelineOptions: {
      label: 'qrtrack',
      env: { PUBLIC_BASE_URL: publicBaseUrl, WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_SCHEDULE: '300,300,300', WEBHOOK_TIMEOUT_MS: '10000' },
    },
  })
  .extend('listening', { scope: 'file' }, ({ pipeline }) => pipeline.app.listen({ host: '127.0.0.1', port }))
  .extend('webhooks', { scope: 'file' }, async ({ pipeline }, { onCleanup }) => {
    const worker = startWebhookWorker({ config: pipeline.config, db: pipeline.app.db, log: silentLog })
    const receiver = await startWebhookReceiver(() => 204)
    onCleanup(async () => {
      await worker.close()
      await receiver.close()
    })
    const created = await pipeline.client('POST', '/webhooks', { url: receiver.url, events: [QR_SCANNED_EVENT, RETURNED_EVENT] })
    expect(created.statusCode, created.body).toBe(201)
    return { receiver, secret: created.json<{ secret: string }>().secret }
  })

/**
 * The events delivered to the receiver for a letter, each checked against its signature, and each
 * once: a delivery answered too late on a busy machine is sent again, as it should be.
 */
const deliveredFor = ({ receiver, secret }: { receiver: WebhookReceiver; secret: string }, letterId: string): Array<ReceivedWebhook['json']> => {
  const payloads = receiver.received.map((webhook) => receiver.verify(secret, webhook)).filter((payload) => payload.data.id === letterId)
  return [...new Map(payloads.map((payload) => [payload.id, payload])).values()]
}

/** The text of the QR code on the first page of the printed card that has one. */
async function printedQr(pipeline: Pipeline, id: string): Promise<string | undefined> {
  const pdf = await readFile(join(pipeline.spoolDir, `${id}.card.pdf`))
  const { pages } = await pdfText(pdf)
  for (let page = 1; page <= pages; page++) {
    const read = readQr(await pagePixels(pdf, page))
    if (read) return read.text
  }
  return undefined
}

type Tracking = { url: string; scans: number; firstScannedAt: string | null; lastScannedAt: string | null }
const trackingOf = async (pipeline: Pipeline, id: string) => {
  const response = await pipeline.client('GET', `/cards/${id}`)
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ tracking: Tracking }>().tracking
}

describe('a printed QR code on the running stack', () => {
  it(
    'reads as the short link, which over HTTP redirects a phone to the client’s URL with its parameters kept, counts the scan and delivers letter.qr_scanned; a HEAD and a link preview are redirected uncounted, an unknown code gets a Spanish page',
    { timeout: 150_000 },
    async ({ pipeline, listening, webhooks }) => {
      expect(listening).toBe(publicBaseUrl)
      const id = await pipeline.send({ trackingUrl: TRACKING_URL })
      // The letter through the address check and the production worker: some seconds alone, more on a loaded machine.
      await reachStatus(pipeline, id, 'printed', 90_000)
      const [stored] = await pipeline.app.db.select({ code: letters.trackingCode }).from(letters).where(eq(letters.id, id))
      expect(stored?.code).toMatch(QR_CODE_PATTERN)

      // The card in the spool, drawn as a phone's camera sees it: its code is this gateway's short link for the letter.
      const link = await printedQr(pipeline, id)
      expect(link).toBe(`${publicBaseUrl}/q/${stored!.code}`)
      expect(await trackingOf(pipeline, id)).toEqual({ url: TRACKING_URL, scans: 0, firstScannedAt: null, lastScannedAt: null })

      // A phone opens it, with a parameter of the campaign's poster.
      const before = Date.now()
      const scanned = await fetch(`${link}?utm_source=carta`, { redirect: 'manual', headers: { 'user-agent': PHONE } })
      expect(scanned.status).toBe(302)
      expect(scanned.headers.get('location')).toBe('https://tienda.example.com/gracias?ref=carta&utm_campaign=oto%C3%B1o&utm_source=carta')

      // One signed letter.qr_scanned delivery, of one scan.
      await expect.poll(() => deliveredFor(webhooks, id).length, { timeout: 20_000, interval: 100 }).toBe(1)
      const [delivered] = deliveredFor(webhooks, id)
      const tracking = await trackingOf(pipeline, id)
      expect(tracking).toEqual({ url: TRACKING_URL, scans: 1, firstScannedAt: expect.stringMatching(/Z$/), lastScannedAt: tracking.firstScannedAt })
      expect(Date.parse(tracking.firstScannedAt!)).toBeGreaterThanOrEqual(before - 1000)
      expect(delivered).toMatchObject({
        type: QR_SCANNED_EVENT,
        id: expect.any(String),
        data: { id, status: 'printed', scans: 1, firstScannedAt: tracking.firstScannedAt, lastScannedAt: tracking.lastScannedAt },
      })

      // GET /events lists the same event.
      const events = async () => {
        const response = await pipeline.client('GET', `/events?cardId=${id}&type=${QR_SCANNED_EVENT}`)
        expect(response.statusCode, response.body).toBe(200)
        return response.json<{ data: Array<{ id: string; type: string; data: { scans: number } }> }>().data
      }
      expect((await events()).map((event) => [event.id, event.type, event.data.scans])).toEqual([[delivered!.id, QR_SCANNED_EVENT, 1]])

      // A HEAD and a chat app's link preview are sent on too, and counted as no scan.
      for (const request of [
        { method: 'HEAD', headers: { 'user-agent': PHONE } },
        { method: 'GET', headers: { 'user-agent': 'WhatsApp/2.23.20.0' } },
        { method: 'GET', headers: { 'user-agent': 'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)' } },
      ]) {
        const response = await fetch(link!, { ...request, redirect: 'manual' })
        expect(response.status, JSON.stringify(request)).toBe(302)
        expect(response.headers.get('location')).toBe(TRACKING_URL)
      }
      // Each request is recorded, with what it was taken for, before it is answered: the count is still the one scan's.
      const kinds = (await pipeline.app.db.select({ kind: qrScans.kind }).from(qrScans).where(eq(qrScans.letterId, id))).map((row) => row.kind).sort()
      expect(kinds).toEqual(['counted', 'prefetch', 'preview', 'preview'])
      expect(await trackingOf(pipeline, id)).toEqual(tracking)
      expect((await events()).map((event) => [event.id, event.data.scans])).toEqual([[delivered!.id, 1]])

      // A code no letter has: a page in Spanish for the person holding the phone, not the API's JSON.
      const unknown = await fetch(`${publicBaseUrl}/q/zzzzzzzzzzzz`, { redirect: 'manual', headers: { 'user-agent': PHONE } })
      expect(unknown.status).toBe(404)
      expect(unknown.headers.get('content-type')).toMatch(/^text\/html/)
      const page = await unknown.text()
      expect(page).toMatch(/<html lang="es">/)
      expect(page).toContain('no corresponde a ninguna de nuestras cartas')
      expect(page).not.toMatch(/"error"/)

      // Nothing more was delivered for the letter: the uncounted requests made no event.
      expect(deliveredFor(webhooks, id).map((payload) => payload.id)).toEqual([delivered!.id])
    },
  )
})

describe('a letter the post brings back, on the running stack', () => {
  it(
    'delivers a signed letter.returned webhook with the returned status and the reason to the endpoint subscribed to it',
    { timeout: 120_000 },
    async ({ pipeline, webhooks }) => {
      const id = await pipeline.send({ name: 'Herminia', surname: 'Urquijo', address: 'Calle de Embajadores 12', zip: '28012', city: 'Madrid' })
      await reachStatus(pipeline, id, 'printed', 90_000)
      const mailed = await pipeline.admin('POST', `/admin/cards/${id}/mailed`)
      expect(mailed.statusCode, mailed.body).toBe(200)
      const returned = await pipeline.admin('POST', `/admin/cards/${id}/returned`, { reason: 'moved' })
      expect(returned.statusCode, returned.body).toBe(200)

      await expect.poll(() => deliveredFor(webhooks, id).length, { timeout: 20_000, interval: 100 }).toBe(1)
      // The endpoint is subscribed to letter.returned (and scans) only: none of the letter's other changes reached it.
      const [delivered] = deliveredFor(webhooks, id)
      const card = (await pipeline.client('GET', `/cards/${id}`)).json<{ returnedAt: string }>()
      expect(card.returnedAt).toMatch(/^\d{4}-\d\d-\d\dT/)
      expect(delivered).toMatchObject({
        type: RETURNED_EVENT,
        data: { id, status: 'returned', returnReason: 'moved', returnedAt: card.returnedAt },
      })
      const listed = (await pipeline.client('GET', `/events?cardId=${id}&type=${RETURNED_EVENT}`)).json<{ data: Array<{ id: string }> }>().data
      expect(listed.map((event) => event.id)).toEqual([delivered!.id])
    },
  )
})
