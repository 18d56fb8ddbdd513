import { describe, expect } from 'vitest'
import { eq, inArray } from 'drizzle-orm'
import { QR_CODE_PATTERN } from '@letters/contracts'
import { letters } from '@letters/db'
import type { App } from '../src/app.js'
import { it } from '@letters/test/support/fixtures'
import type { Account } from '@letters/test/support/gateway'
import { adminCampaign, adminClient, expectError } from './helpers.js'

const recipient = { name: 'Lucía', surname: 'García', address: 'Calle Mayor 1', zip: '28013', city: 'Madrid', province: 'Madrid', country: 'ES' }

const post = (app: App, owner: Account, url: string, payload: unknown) =>
  app.inject({ method: 'POST', url, headers: { 'x-api-key': owner.apiKey }, payload: payload as object })
const single = (owner: Account, extra: Record<string, unknown> = {}) => ({
  cardDesignId: owner.cardDesignId,
  envelopeDesignId: owner.envelopeDesignId,
  senderId: owner.senderId,
  message: 'Querida Lucía, gracias.',
  ...recipient,
  ...extra,
})

async function balanceOf(app: App, owner: Account): Promise<number> {
  return (await app.inject({ method: 'GET', url: '/balance', headers: { 'x-api-key': owner.apiKey } })).json<{ balance: number }>().balance
}

async function trackingRows(app: App, ids: string[]) {
  return app.db
    .select({ id: letters.id, url: letters.trackingUrl, code: letters.trackingCode, letterCode: letters.code })
    .from(letters)
    .where(inArray(letters.id, ids))
}

const REFUSED = /^El campo 'trackingUrl' debe ser una URL https:\/\/ de como mucho 2000 caracteres, sin usuario ni contraseña$/

describe('a letter with a trackingUrl', () => {
  it('keeps the URL and gets a random short-link code of its own, shown as tracking with no scans yet', async ({ gateway, account }) => {
    const url = 'https://tienda.example.com/gracias?utm_source=carta&utm_campaign=navidad'
    const ids: string[] = []
    for (let i = 0; i < 3; i++) {
      const created = await post(gateway, account, '/single', single(account, { trackingUrl: url }))
      expect(created.statusCode, created.body).toBe(200)
      ids.push(created.json<{ cardId: string }>().cardId)
    }
    const rows = await trackingRows(gateway, ids)
    for (const row of rows) {
      expect(row.url).toBe(url)
      expect(row.code).toMatch(QR_CODE_PATTERN)
      // Nothing of the letter is in it: neither its id nor its envelope code.
      expect(row.id.replaceAll('-', '')).not.toContain(row.code!.toLowerCase())
      expect(row.code).not.toContain(row.letterCode)
    }
    expect(new Set(rows.map((row) => row.code)).size).toBe(3)
    const card = (await gateway.inject({ method: 'GET', url: `/cards/${ids[0]}`, headers: { 'x-api-key': account.apiKey } })).json()
    expect(card).toMatchObject({ tracking: { url, scans: 0, firstScannedAt: null, lastScannedAt: null }, returnedAt: null, returnReason: null })
  })

  it('without one has no code and shows tracking null', async ({ gateway, account }) => {
    const created = await post(gateway, account, '/single', single(account, { trackingUrl: null }))
    expect(created.statusCode, created.body).toBe(200)
    const [row] = await trackingRows(gateway, [created.json<{ cardId: string }>().cardId])
    expect(row).toMatchObject({ url: null, code: null })
  })

  it.for([
    ['not https', 'http://tienda.example.com/gracias'],
    ['credentials', 'https://ana:secreto@tienda.example.com/'],
    ['a user name', 'https://ana@tienda.example.com/'],
    ['another scheme', 'ftp://tienda.example.com/'],
    ['a script', 'javascript:alert(1)'],
    ['no scheme', 'tienda.example.com/gracias'],
    ['no host', 'https://'],
    ['a space', 'https://tienda.example.com/a b'],
    ['a line break', 'https://tienda.example.com/\nSet-Cookie: x'],
    ['over 2,000 characters', `https://tienda.example.com/?q=${'a'.repeat(2000)}`],
    ['empty', ''],
    ['a zero-width space', 'https://evil.example\u200b.tienda.example.com/'],
    ['a direction override', 'https://tienda.example.com/\u202egpj.exe'],
    ['no slashes after the scheme', 'https:tienda.example.com/'],
    ['a backslash', 'https://tienda.example.com\\@evil.example/'],
  ] as const)('refuses a trackingUrl with %s with a Spanish 400 on /single, /card and /cards/bulk, charging nothing', async ([, url], { gateway, account }) => {
    const before = await balanceOf(gateway, account)
    expectError(await post(gateway, account, '/single', single(account, { trackingUrl: url })), 400, 'Bad Request', REFUSED)
    const campaignId = await adminCampaign(gateway, account)
    expectError(await post(gateway, account, '/card', { campaignId, ...recipient, variables: { cupon: 'X' }, trackingUrl: url }), 400, 'Bad Request', REFUSED)
    const bulk = await post(gateway, account, '/cards/bulk', { campaignId, trackingUrl: url, recipients: [{ ...recipient, variables: { cupon: 'X' } }] })
    // The request's own is the whole request's: refused as a whole.
    expectError(bulk, 400, 'Bad Request', REFUSED)
    const perRecipient = await post(gateway, account, '/cards/bulk', {
      campaignId,
      recipients: [
        { ...recipient, variables: { cupon: 'X' }, trackingUrl: url },
        { ...recipient, variables: { cupon: 'Y' } },
      ],
    })
    expect(perRecipient.statusCode, perRecipient.body).toBe(200)
    expect(perRecipient.json()).toMatchObject({ created: 1, errors: [{ index: 0, message: expect.stringMatching(REFUSED) }] })
    // Only the valid recipient was charged.
    expect(await balanceOf(gateway, account)).toBe(before - 3)
  })
})

describe('trackingUrl on campaign letters', () => {
  it("takes the recipient's own, else the request's, else the campaign's with its variables filled in URL-encoded", async ({ gateway, account }) => {
    const campaignId = await adminCampaign(gateway, account, { trackingUrl: 'https://tienda.example.com/c/{{ cupon }}?n={{nombre}}' })
    const sent = await post(gateway, account, '/cards/bulk', {
      campaignId,
      recipients: [
        { ...recipient, variables: { cupon: 'OTOÑO 10', nombre: 'José/María&x=1' } },
        { ...recipient, variables: { cupon: 'B' }, trackingUrl: 'https://otra.example.com/propia' },
      ],
    })
    expect(sent.statusCode, sent.body).toBe(200)
    const viaRequest = await post(gateway, account, '/cards/bulk', {
      campaignId,
      trackingUrl: 'https://otra.example.com/peticion',
      recipients: [{ ...recipient, variables: { cupon: 'C' } }],
    })
    const viaCard = await post(gateway, account, '/card', { campaignId, ...recipient, variables: { cupon: 'D' } })
    const ids = [...sent.json<{ cardIds: string[] }>().cardIds, ...viaRequest.json<{ cardIds: string[] }>().cardIds, viaCard.json<{ cardId: string }>().cardId]
    const urls = new Map((await trackingRows(gateway, ids)).map((row) => [row.id, row.url]))
    expect(ids.map((id) => urls.get(id))).toEqual([
      'https://tienda.example.com/c/OTO%C3%91O%2010?n=Jos%C3%A9%2FMar%C3%ADa%26x%3D1',
      'https://otra.example.com/propia',
      'https://otra.example.com/peticion',
      'https://tienda.example.com/c/D?n=amigo',
    ])
  })

  it('refuses a campaign whose trackingUrl names an undeclared variable, or is no https URL with its examples filled in', async ({ gateway, account }) => {
    const admin = adminClient(gateway)
    const base = {
      name: 'Con QR',
      cardDesignId: account.cardDesignId,
      envelopeDesignId: account.envelopeDesignId,
      senderId: account.senderId,
      message: 'Hola {{nombre}}',
      variables: [{ name: 'nombre', maxSize: 40, defaultValue: 'amigo', example: 'Lucía' }],
    }
    expectError(
      await admin.post(`/admin/accounts/${account.id}/campaigns`, { ...base, trackingUrl: 'https://x.example.com/{{cupon}}' }),
      400,
      'Bad Request',
      "El campo 'trackingUrl' usa la variable '{{cupon}}', que no está declarada en 'variables'",
    )
    expectError(
      // Within 2,000 characters as written, past them once its example is filled in, URL-encoded.
      await admin.post(`/admin/accounts/${account.id}/campaigns`, {
        ...base,
        variables: [{ name: 'nombre', maxSize: 40, defaultValue: 'amigo', example: 'José María Ñúñez' }],
        trackingUrl: `https://x.example.com/${'a'.repeat(1960)}{{nombre}}`,
      }),
      400,
      'Bad Request',
      /^El campo 'trackingUrl', con los ejemplos de sus variables, debe ser una URL https:\/\//,
    )
    // A value could move the redirect to another host: variables go after the host only.
    for (const trackingUrl of [
      'https://{{nombre}}/',
      'https://x.example.com{{nombre}}',
      'https://{{nombre}}.example.com/',
      'https://x.example.com:{{nombre}}/',
    ]) {
      expectError(
        await admin.post(`/admin/accounts/${account.id}/campaigns`, { ...base, trackingUrl }),
        400,
        'Bad Request',
        /solo admite variables después del dominio/,
      )
    }
    const created = await admin.post(`/admin/accounts/${account.id}/campaigns`, { ...base, trackingUrl: 'https://x.example.com/{{nombre}}' })
    expect(created.statusCode, created.body).toBe(201)
    expect(created.json()).toMatchObject({ trackingUrl: 'https://x.example.com/{{nombre}}' })
  })
})

describe("a card design's qrPlacement", () => {
  it('is kept and shown, and fixed into the print spec of the letters accepted with it', async ({ gateway, account }) => {
    const admin = adminClient(gateway)
    const path = `/admin/accounts/${account.id}/card-designs/${account.cardDesignId}`
    const placed = await admin.patch(path, { qrPlacement: { corner: 'top-left', sizeMm: 20 } })
    expect(placed.statusCode, placed.body).toBe(200)
    expect(placed.json()).toMatchObject({ qrPlacement: { corner: 'top-left', sizeMm: 20 } })
    const created = await post(gateway, account, '/single', single(account, { trackingUrl: 'https://tienda.example.com/' }))
    const [row] = await gateway.db.select({ spec: letters.printSpec }).from(letters).where(eq(letters.id, created.json<{ cardId: string }>().cardId))
    expect(row!.spec!.card.qrPlacement).toEqual({ corner: 'top-left', sizeMm: 20 })
    expect((await admin.patch(path, { qrPlacement: null })).json()).toMatchObject({ qrPlacement: null })
  })

  it.for([
    [{ corner: 'top-left', sizeMm: 14 }, /sizeMm/],
    [{ corner: 'top-left', sizeMm: 41 }, /sizeMm/],
    [{ corner: 'middle', sizeMm: 20 }, /corner/],
    [{ corner: 'top-left' }, /qrPlacement/],
    [{ corner: 'top-left', sizeMm: 20, color: 'red' }, /qrPlacement|color/],
  ] as const)('refuses %j with a Spanish 400', async ([qrPlacement, message], { gateway, account }) => {
    expectError(
      await adminClient(gateway).patch(`/admin/accounts/${account.id}/card-designs/${account.cardDesignId}`, { qrPlacement }),
      400,
      'Bad Request',
      message,
    )
  })
})
