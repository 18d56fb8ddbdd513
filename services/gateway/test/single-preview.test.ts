import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { afterAll, beforeAll, describe, expect } from 'vitest'
import { count, eq } from 'drizzle-orm'
import sharp from 'sharp'
import { accounts, idempotencyKeys, ledgerEntries, letterEvents, letters, outbox, type Db } from '@letters/db'
import { letterFileKey, letterFolder } from '@letters/letters'
import { sfntFromWoff } from '@letters/artwork/font-tables'
import { cardSvg, signatureSvg } from '@letters/test/support/artwork'
import { it as base } from '@letters/test/support/fixtures'
import { withoutCharacters } from '@letters/test/support/hostile-fonts'
import type { App } from '../src/app.js'
import { previewId } from '../src/features/letters/preview.js'
import { adminAccount, adminClient, expectError, publicClient, singleLetter, startGateway } from './helpers.js'

// A database of its own, so that counting whole tables sees this file's writes only; proofs'
// limit raised, as these tests ask for many previews with one key.
const it = base.extend({ gatewayOptions: { isolate: 'single-preview', env: { PROOF_RATE_LIMIT_MAX: '1000' } } })

const require = createRequire(import.meta.url)
/** Patrick Hand (SIL OFL 1.1) as plain TrueType: an account's own font. */
const patrickHand = sfntFromWoff(readFileSync(require.resolve('@fontsource/patrick-hand/files/patrick-hand-latin-400-normal.woff')))

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
/** An A6 card, landscape: 148 × 105 mm. */
const A6_RATIO = 148 / 105

type Client = ReturnType<typeof publicClient>

/** The preview's pixels: its size, and the pixels written on it (darker than the white card), with their mean colour. */
async function inkOf(png: Buffer) {
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true })
  let inked = 0
  const sum = [0, 0, 0]
  for (let at = 0; at < data.length; at += 3) {
    const [r, g, b] = [data[at]!, data[at + 1]!, data[at + 2]!]
    if (Math.min(r, g, b) > 200) continue
    inked++
    sum[0]! += r
    sum[1]! += g
    sum[2]! += b
  }
  const [r, g, b] = sum.map((value) => value / Math.max(1, inked)) as [number, number, number]
  return { width: info.width, height: info.height, inked, share: inked / (info.width * info.height), mean: { r, g, b } }
}

/** What a refusal tells the client: its status, error and message (each has its own request id). */
const refusal = (response: { statusCode: number; json: () => unknown }) => {
  const { error, message } = response.json() as { error: string; message: string }
  return { status: response.statusCode, error, message }
}

/** A preview answered 200: its PNG. */
async function previewOf(client: Client, body: object, headers: Record<string, string> = {}): Promise<Buffer> {
  const response = await client.post('/single/preview', body, headers)
  expect(response.statusCode, response.body).toBe(200)
  return response.rawPayload
}

/** Every row a creation writes, in the whole (own) database, and the account's balance. */
async function written(db: Db, accountId: string) {
  const rows = async (table: typeof letters | typeof ledgerEntries | typeof idempotencyKeys | typeof outbox | typeof letterEvents) =>
    (await db.select({ n: count() }).from(table))[0]!.n
  const [account] = await db.select({ balance: accounts.balance }).from(accounts).where(eq(accounts.id, accountId))
  return {
    letters: await rows(letters),
    letterEvents: await rows(letterEvents),
    ledgerEntries: await rows(ledgerEntries),
    idempotencyKeys: await rows(idempotencyKeys),
    outbox: await rows(outbox),
    balance: account!.balance,
  }
}

/** The account's own font `name`, its file uploaded (another upload is a new version). */
async function ownFont(app: App, accountId: string, name: string, file: Buffer) {
  const admin = adminClient(app)
  const created = await admin.post(`/admin/accounts/${accountId}/fonts`, { name, family: 'Mi Letra' })
  expect([201, 409], created.body).toContain(created.statusCode)
  const uploaded = await admin.put(`/admin/accounts/${accountId}/fonts/${name}/file`, file, 'font/ttf')
  expect(uploaded.statusCode, uploaded.body).toBe(200)
}

describe('POST /single/preview', () => {
  it('answers the handwritten side of the card as a PNG at most 1,000 px wide, not cached, with ink on it', async ({ account, client }) => {
    const response = await client.post('/single/preview', singleLetter(account, { message: 'Querida Lucía, gracias por tu compra. ¡Hasta pronto!' }))
    expect(response.statusCode, response.body).toBe(200)
    expect(response.headers['content-type']).toBe('image/png')
    expect(response.headers['cache-control']).toBe('no-store')
    expect(response.rawPayload.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true)
    const ink = await inkOf(response.rawPayload)
    expect(ink.width).toBeLessThanOrEqual(1000)
    expect(ink.width).toBeGreaterThan(500)
    expect(Math.abs(ink.width / ink.height - A6_RATIO)).toBeLessThan(0.005)
    // Written on, and mostly blank card: a message and a signature, not a filled page.
    expect(ink.share).toBeGreaterThan(0.005)
    expect(ink.share).toBeLessThan(0.3)
    // The default ink is blue.
    expect(ink.mean.b).toBeGreaterThan(ink.mean.r + 30)
  })

  it('gives the same bytes for the same body, and another image for another message', async ({ account, client }) => {
    const body = singleLetter(account, { message: 'Gracias por venir a la tienda' })
    const first = await previewOf(client, body)
    expect((await previewOf(client, body)).equals(first)).toBe(true)
    expect((await previewOf(client, { ...body, message: 'Gracias por venir a la feria' })).equals(first)).toBe(false)
  })

  it("writes in the body's ink", async ({ account, client }) => {
    const red = await inkOf(await previewOf(client, singleLetter(account, { inkColor: 'red' })))
    expect(red.mean.r).toBeGreaterThan(red.mean.b + 30)
    const green = await inkOf(await previewOf(client, singleLetter(account, { inkColor: 'green' })))
    expect(green.mean.g).toBeGreaterThan(green.mean.r + 15)
  })

  it('writes in a built-in hand the body names, each its own', async ({ account, client }) => {
    const kalam = await previewOf(client, singleLetter(account, { fontName: 'kalam' }))
    const caveat = await previewOf(client, singleLetter(account, { fontName: 'caveat' }))
    expect(kalam.equals(caveat)).toBe(false)
    expect((await inkOf(kalam)).inked).toBeGreaterThan(0)
  })

  it("writes in the account's own font at its current version, refusing what that version cannot write as POST /single does", async ({
    account,
    client,
    gateway,
  }) => {
    await ownFont(gateway, account.id, 'mi-letra', patrickHand)
    const body = singleLetter(account, { fontName: 'mi-letra', message: 'Querida Lucía, ¿qué tal? Tu pedido #100 ya está aquí' })
    const own = await previewOf(client, body)
    expect(own.equals(await previewOf(client, { ...body, fontName: 'caveat' }))).toBe(false)
    expect((await inkOf(own)).inked).toBeGreaterThan(0)
    // A new version without '#': the letter would be written in it, so the preview refuses the message.
    await ownFont(gateway, account.id, 'mi-letra', withoutCharacters(patrickHand, '#'))
    const refused = await client.post('/single/preview', body)
    expectError(refused, 400, 'Bad Request', "El campo 'message' contiene caracteres que la letra 'mi-letra' no puede escribir: #")
    expect(refusal(refused)).toEqual(refusal(await client.post('/single', body)))
    await previewOf(client, { ...body, message: 'Querida Lucía, ¿qué tal?' })
  })

  it('draws the signature the body names instead of the sender’s name', async ({ account, admin, client }) => {
    const uploaded = await admin.put(`/admin/accounts/${account.id}/signatures/${account.signatureId}/artwork`, signatureSvg, 'image/svg+xml')
    expect(uploaded.statusCode, uploaded.body).toBe(200)
    const named = await previewOf(client, singleLetter(account))
    const signed = await previewOf(client, singleLetter(account, { signatureId: account.signatureId }))
    expect(signed.equals(named)).toBe(false)
    // The same message above it: only the signature's strip differs, at the bottom right.
    const [a, b] = await Promise.all([named, signed].map((png) => sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true })))
    const { width, height } = a!.info
    const differing = { top: height, left: width }
    for (let y = 0; y < height; y++)
      for (let x = 0; x < width; x++)
        for (let c = 0; c < 3; c++)
          if (a!.data[(y * width + x) * 3 + c] !== b!.data[(y * width + x) * 3 + c]) {
            differing.top = Math.min(differing.top, y)
            differing.left = Math.min(differing.left, x)
          }
    expect(differing.top).toBeGreaterThan(height / 2)
    expect(differing.left).toBeGreaterThan(width / 3)
  })

  it('shows the handwriting and not the front when the floor prints the card with its artwork', async ({ account, admin, client }) => {
    const body = singleLetter(account)
    const blank = await previewOf(client, body)
    const front = await admin.put(
      `/admin/accounts/${account.id}/card-designs/${account.cardDesignId}/artwork`,
      cardSvg('A6', { fill: '#ff0000' }),
      'image/svg+xml',
    )
    expect(front.statusCode, front.body).toBe(200)
    const withFront = await previewOf(client, body)
    // The writing side is the same card whatever its front: nothing red on it.
    expect(withFront.equals(blank)).toBe(true)
    const ink = await inkOf(withFront)
    expect(ink.mean.b).toBeGreaterThan(ink.mean.r)
  })

  it('is drawn at the size of the proof’s handwriting page', async ({ account, client }) => {
    const body = singleLetter(account, { message: 'Gracias por todo' })
    const preview = await sharp(await previewOf(client, body)).metadata()
    const created = await client.post('/single', body)
    const cardId = created.json<{ cardId: string }>().cardId
    const page = await client.get(`/cards/${cardId}/proof.png?page=1`)
    const proofPage = await sharp(page.rawPayload).metadata()
    expect([preview.width, preview.height]).toEqual([proofPage.width, proofPage.height])
  })

  it('charges and stores nothing, ignores an Idempotency-Key, and previews a letter the balance cannot pay for', async ({ gateway }) => {
    const account = await adminAccount(gateway, 0)
    const client = publicClient(gateway, account.apiKey)
    const before = await written(gateway.db, account.id)
    const body = singleLetter(account, { signatureId: account.signatureId, sendAt: new Date(Date.now() + 3 * 86_400_000).toISOString() })
    const first = await previewOf(client, body, { 'idempotency-key': 'vista-previa-1' })
    // The same key again is no replay nor a conflict: each preview is drawn, and alike.
    expect((await previewOf(client, { ...body, message: 'Otro mensaje' }, { 'idempotency-key': 'vista-previa-1' })).equals(first)).toBe(false)
    expect((await previewOf(client, body, { 'idempotency-key': 'vista-previa-1' })).equals(first)).toBe(true)
    expect(await written(gateway.db, account.id)).toEqual(before)
    expect(await gateway.artifacts.list(letterFolder(previewId(account.id)))).toEqual([])
    expect(await gateway.artifacts.get(letterFileKey(previewId(account.id), 'card.pdf'))).toBeUndefined()
    // The letter itself is refused for its balance.
    expectError(await client.post('/single', body), 402, 'Payment Required')
  })

  it('refuses each body POST /single refuses with the same 400 and message', async ({ account, client, gateway }) => {
    const other = await adminAccount(gateway)
    const { name: _name, ...withoutName } = singleLetter(account)
    const refusals: Array<[string, object, string | RegExp]> = [
      ['a missing field', withoutName, /name/],
      [
        'a message the font cannot write',
        singleLetter(account, { message: 'Gracias 🎉' }),
        /El campo 'message' contiene caracteres que la letra .* no puede escribir: 🎉/,
      ],
      ['a recipient the font cannot write', singleLetter(account, { city: 'Москва' }), /El campo 'city' contiene caracteres/],
      [
        "another account's card design",
        singleLetter(account, { cardDesignId: other.cardDesignId }),
        "El campo 'cardDesignId' no corresponde a ningún diseño de tarjeta de la cuenta",
      ],
      [
        "another account's envelope design",
        singleLetter(account, { envelopeDesignId: other.envelopeDesignId }),
        "El campo 'envelopeDesignId' no corresponde a ningún diseño de sobre de la cuenta",
      ],
      ["another account's sender", singleLetter(account, { senderId: other.senderId }), "El campo 'senderId' no corresponde a ningún remitente de la cuenta"],
      [
        "another account's signature",
        singleLetter(account, { signatureId: other.signatureId }),
        "El campo 'signatureId' no corresponde a ninguna firma de la cuenta",
      ],
      ['an unknown font', singleLetter(account, { fontName: 'comic-sans' }), /La fuente 'comic-sans' no existe; las disponibles son: caveat/],
      ['an unknown ink', singleLetter(account, { inkColor: 'orange' }), /inkColor/],
      ['a message too long', singleLetter(account, { message: 'a'.repeat(1001) }), /message/],
      ['an unassigned country', singleLetter(account, { country: 'XX' }), /'country' debe ser un código ISO 3166-1 alfa-2 asignado/],
      ['a postal code not of the country', singleLetter(account, { zip: '123' }), /El campo 'zip' \('123'\) no es un código postal válido para ES/],
      ['a sendAt in the past', singleLetter(account, { sendAt: '2020-01-01T00:00:00Z' }), /ya ha pasado/],
      ['an unknown field', singleLetter(account, { campaignId: other.cardDesignId }), /campaignId/],
    ]
    for (const [what, body, message] of refusals) {
      const preview = await client.post('/single/preview', body)
      const single = await client.post('/single', body)
      expectError(single, 400, 'Bad Request', message)
      expect(refusal(preview), what).toEqual(refusal(single))
    }
  })

  it('answers 401 without a valid key', async ({ account, gateway }) => {
    const body = singleLetter(account)
    expectError(await gateway.inject({ method: 'POST', url: '/single/preview', payload: body }), 401, 'Unauthorized')
    expectError(await publicClient(gateway, 'lk_live_nada').post('/single/preview', body), 401, 'Unauthorized')
  })

  it('answers 415 for a body that is not JSON', async ({ client }) => {
    expectError(await client.post('/single/preview', 'name=Ana', { 'content-type': 'application/x-www-form-urlencoded' }), 415, 'Unsupported Media Type')
  })
})

describe('the preview on a floor that writes with a pen plotter', () => {
  let plotter: App
  let printer: App
  beforeAll(async () => {
    ;[plotter, printer] = await Promise.all([startGateway({ PRINTER: 'plotter' }), startGateway({ PRINTER: 'spool' })])
  })
  afterAll(() => Promise.all([plotter.close(), printer.close()]))

  it("shows the plotter's strokes of the card, another drawing than a printer's of the same letter", async () => {
    const account = await adminAccount(plotter)
    const body = singleLetter(account)
    const plotted = await previewOf(publicClient(plotter, account.apiKey), body)
    const ink = await inkOf(plotted)
    expect(ink.width).toBeLessThanOrEqual(1000)
    expect(Math.abs(ink.width / ink.height - A6_RATIO)).toBeLessThan(0.005)
    expect(ink.share).toBeGreaterThan(0.002)
    expect(plotted.equals(await previewOf(publicClient(printer, account.apiKey), body))).toBe(false)
  })
})

describe('the preview rate limit', () => {
  let app: App
  beforeAll(async () => {
    app = await startGateway({ PROOF_RATE_LIMIT_MAX: '2', PROOF_RATE_LIMIT_WINDOW_MS: '60000' })
  })
  afterAll(() => app.close())

  it('answers 429 with Retry-After past the proofs’ limit', async () => {
    const account = await adminAccount(app)
    const client = publicClient(app, account.apiKey)
    for (let i = 0; i < 2; i++) {
      const response = await client.post('/single/preview', singleLetter(account))
      expect(response.statusCode).toBe(200)
      expect(response.headers['x-ratelimit-limit']).toBe('2')
    }
    const limited = await client.post('/single/preview', singleLetter(account))
    expectError(limited, 429, 'Too Many Requests', /Se ha superado el límite de 2 pruebas cada 60 segundos/)
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
  })
})

describe('the preview when the render queue is full', () => {
  let app: App
  beforeAll(async () => {
    app = await startGateway({ RENDER_THREADS: '1', RENDER_QUEUE_MAX: '1', PROOF_RATE_LIMIT_MAX: '1000' })
  })
  afterAll(() => app.close())

  it('answers 503 with Retry-After as a proof does, and draws again once the queue has room', async () => {
    const account = await adminAccount(app)
    const client = publicClient(app, account.apiKey)
    const long = 'Querida Lucía, gracias por venir a la inauguración de la tienda. '.repeat(15).slice(0, 1000)
    // One render in hand, one waiting: most of thirty arriving together find the queue full.
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, n) => client.post('/single/preview', singleLetter(account, { message: `${n} ${long}`.slice(0, 1000) }))),
    )
    const refused = responses.filter((response) => response.statusCode === 503)
    expect(refused.length).toBeGreaterThanOrEqual(1)
    expect(responses.filter((response) => response.statusCode === 200).length + refused.length).toBe(responses.length)
    for (const response of refused) {
      expectError(response, 503, 'Service Unavailable', 'Hay demasiadas pruebas en preparación; inténtalo de nuevo en unos segundos')
      expect(Number(response.headers['retry-after'])).toBeGreaterThan(0)
    }
    expect((await client.post('/single/preview', singleLetter(account))).statusCode).toBe(200)
  })
})
