import { describe, expect } from 'vitest'
import { eq } from 'drizzle-orm'
import { letters } from '@letters/db'
import type { App } from '../src/app.js'
import { it as base } from '@letters/test/support/fixtures'
import type { Account } from '@letters/test/support/gateway'
import { UNKNOWN_ID, adminAccount, adminCampaign, expectError } from './helpers.js'

type Summary = { id: string; status: string; campaignId: string | null }
type Page = { data: Summary[]; nextCursor: string | null }

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const recipient = { name: 'Lucía', surname: 'García', address: 'Calle Mayor 1', zip: '28013', city: 'Madrid', province: 'Madrid', country: 'ES' }

const get = (app: App, owner: Account | undefined, url: string) => app.inject({ method: 'GET', url, headers: owner ? { 'x-api-key': owner.apiKey } : {} })
const post = (app: App, owner: Account, url: string, payload: Record<string, unknown>) =>
  app.inject({ method: 'POST', url, headers: { 'x-api-key': owner.apiKey }, payload })

async function createSingle(app: App, owner: Account, overrides: Record<string, unknown> = {}) {
  const response = await post(app, owner, '/single', {
    cardDesignId: owner.cardDesignId,
    envelopeDesignId: owner.envelopeDesignId,
    senderId: owner.senderId,
    message: 'Querida Lucía, gracias.',
    ...recipient,
    ...overrides,
  })
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ cardId: string }>().cardId
}

const createCampaign = (app: App, owner: Account) => adminCampaign(app, owner, { fontName: 'kalam' })

async function createCampaignLetter(app: App, owner: Account, campaignId: string) {
  const response = await post(app, owner, '/card', { campaignId, ...recipient, variables: { cupon: 'OTONO10' } })
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ cardId: string }>().cardId
}

const it = base
  /** Another account, with letters of its own where a test needs them. */
  .extend('other', ({ gateway }) => adminAccount(gateway, 500))
  /**
   * The letters GET /cards lists: five singles of `owner` and a letter of its campaign after
   * each even one; `created` is every letter of `owner` in creation order, `singles` and
   * `campaignLetters` split them by type, and `otherLetter` is one of `other`'s.
   */
  .extend('listed', async ({ gateway: app, account: owner, other }) => {
    const campaignId = await createCampaign(app, owner)
    const created: string[] = []
    const singles: string[] = []
    const campaignLetters: string[] = []
    for (let i = 0; i < 5; i++) {
      singles.push(await createSingle(app, owner))
      created.push(singles.at(-1)!)
      if (i % 2 === 0) {
        campaignLetters.push(await createCampaignLetter(app, owner, campaignId))
        created.push(campaignLetters.at(-1)!)
      }
    }
    return { owner, campaignId, created, singles, campaignLetters, otherLetter: await createSingle(app, other) }
  })
it.override({ accountCredits: 500 })

describe('GET /cards/{cardId}', () => {
  it('returns a single letter whole, as received, with its first event', async ({ gateway: app, account }) => {
    const cardId = await createSingle(app, account, { country: 'es', fontName: null })
    const response = await get(app, account, `/cards/${cardId}`)
    expect(response.statusCode).toBe(200)
    const body = response.json<{ createdAt: string; events: Array<{ at: string }> }>()
    expect(body).toEqual({
      id: cardId,
      code: expect.stringMatching(/^[0-9A-HJKMNP-TV-Z]{10}$/),
      livemode: true,
      type: 'single',
      status: 'received',
      sendAt: null,
      campaignId: null,
      cardDesignId: account.cardDesignId,
      envelopeDesignId: account.envelopeDesignId,
      senderId: account.senderId,
      signatureId: null,
      fontName: 'caveat',
      inkColor: 'blue',
      message: 'Querida Lucía, gracias.',
      recipient: { ...recipient, company: null, country: 'ES' },
      address: null,
      addressLines: null,
      cost: 3,
      tracking: null,
      returnedAt: null,
      returnReason: null,
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
      personalDataErasedAt: null,
      events: [{ status: 'received', at: expect.stringMatching(ISO), detail: null }],
    })
    expect(Math.abs(Date.parse(body.createdAt) - Date.now())).toBeLessThan(60_000)
  })

  it('charges 5 for a letter abroad', async ({ gateway: app, account }) => {
    const cardId = await createSingle(app, account, { zip: '75001', city: 'Paris', province: null, country: 'FR' })
    const body = (await get(app, account, `/cards/${cardId}`)).json()
    expect(body).toMatchObject({ cost: 5, recipient: { zip: '75001', city: 'Paris', province: null, country: 'FR' } })
  })

  it("returns a campaign letter with the campaign's designs and font and the message filled with defaults", async ({ gateway: app, account }) => {
    const campaignId = await createCampaign(app, account)
    const cardId = await createCampaignLetter(app, account, campaignId)
    const response = await get(app, account, `/cards/${cardId}`)
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({
      id: cardId,
      code: expect.stringMatching(/^[0-9A-HJKMNP-TV-Z]{10}$/),
      livemode: true,
      type: 'campaign',
      status: 'received',
      sendAt: null,
      campaignId,
      cardDesignId: account.cardDesignId,
      envelopeDesignId: account.envelopeDesignId,
      senderId: account.senderId,
      signatureId: null,
      fontName: 'kalam',
      inkColor: 'blue',
      message: 'Hola amigo, tu cupón es OTONO10.',
      recipient: { ...recipient, company: null },
      address: null,
      addressLines: null,
      cost: 3,
      tracking: null,
      returnedAt: null,
      returnReason: null,
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
      personalDataErasedAt: null,
      events: [{ status: 'received', at: expect.stringMatching(ISO), detail: null }],
    })
  })

  it("answers 404 for an unknown id, a malformed id and another account's letter", async ({ gateway: app, account, other }) => {
    const foreign = await createSingle(app, other)
    for (const id of [UNKNOWN_ID, 'abc', foreign]) {
      expectError(await get(app, account, `/cards/${id}`), 404, 'Not Found', 'La carta no existe')
    }
    expect((await get(app, other, `/cards/${foreign}`)).statusCode).toBe(200)
  })

  it('answers 401 without a key', async ({ gateway: app, account }) => {
    const cardId = await createSingle(app, account)
    expectError(await get(app, undefined, `/cards/${cardId}`), 401, 'Unauthorized', /API key/)
  })
})

describe('GET /cards', () => {
  const newestFirst = (ids: string[]) => [...ids].reverse()

  /** Follows `nextCursor` from the first page; fails on any page that is not a 200. */
  async function collect(app: App, who: Account, query: string) {
    const ids: string[] = []
    const cursors: Array<string | null> = []
    let cursor: string | null = null
    do {
      const response = await get(app, who, `/cards?${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
      expect(response.statusCode, `page ${cursors.length + 1}: ${response.body}`).toBe(200)
      const page = response.json<Page>()
      expect(page.data.length).toBeLessThanOrEqual(2)
      ids.push(...page.data.map((card) => card.id))
      cursors.push(page.nextCursor)
      cursor = page.nextCursor
    } while (cursor && cursors.length < 20)
    return { ids, cursors }
  }

  it('lists the account letters newest first, each in its summary shape (the card without events)', async ({
    gateway: app,
    listed: { owner, created, singles },
  }) => {
    const page = (await get(app, owner, '/cards')).json<Page & { data: Array<Record<string, unknown>> }>()
    expect(page.data.map((card) => card.id)).toEqual(newestFirst(created))
    expect(page.nextCursor).toBeNull()
    const { events: _, ...summary } = (await get(app, owner, `/cards/${singles[0]}`)).json<Record<string, unknown>>()
    expect(page.data.at(-1)).toEqual(summary)
  })

  it('pages with limit and cursor without duplicates or gaps, the last page having a null nextCursor', async ({ gateway: app, listed: { owner, created } }) => {
    const { ids, cursors } = await collect(app, owner, 'limit=2')
    expect(ids).toEqual(newestFirst(created))
    expect(cursors).toEqual([expect.any(String), expect.any(String), expect.any(String), null])
  })

  it('keeps the filter across pages', async ({ gateway: app, listed: { owner, campaignId, campaignLetters } }) => {
    const { ids, cursors } = await collect(app, owner, `campaignId=${campaignId}&status=received&limit=2`)
    expect(ids).toEqual(newestFirst(campaignLetters))
    expect(cursors).toEqual([expect.any(String), null])
  })

  it('filters by campaignId and by status', async ({ gateway: app, listed: { owner, campaignId, created, singles, campaignLetters } }) => {
    const byCampaign = (await get(app, owner, `/cards?campaignId=${campaignId}`)).json<Page>()
    expect(byCampaign.data.map((card) => card.id)).toEqual(newestFirst(campaignLetters))
    expect(byCampaign.data.every((card) => card.campaignId === campaignId)).toBe(true)

    const [printed] = singles
    await app.db.update(letters).set({ status: 'printed' }).where(eq(letters.id, printed!))
    try {
      expect((await get(app, owner, '/cards?status=printed')).json<Page>().data.map((card) => card.id)).toEqual([printed])
      const received = (await get(app, owner, '/cards?status=received&limit=100')).json<Page>().data.map((card) => card.id)
      expect(received).toEqual(newestFirst(created).filter((id) => id !== printed))
      expect((await get(app, owner, '/cards?status=mailed')).json()).toEqual({ data: [], nextCursor: null })
    } finally {
      await app.db.update(letters).set({ status: 'received' }).where(eq(letters.id, printed!))
    }
  })

  it("never shows another account's letters", async ({ gateway: app, other, listed: { owner, campaignId, created, otherLetter } }) => {
    const mine = (await get(app, owner, '/cards?limit=100')).json<Page>().data.map((card) => card.id)
    expect(mine).toEqual(newestFirst(created))
    const theirs = (await get(app, other, '/cards?limit=100')).json<Page>().data.map((card) => card.id)
    expect(theirs).toContain(otherLetter)
    expect(theirs.filter((id) => mine.includes(id))).toEqual([])
    expect((await get(app, other, `/cards?campaignId=${campaignId}`)).json()).toEqual({ data: [], nextCursor: null })
  })

  it.for([
    ['limit=0', "El parámetro 'limit' debe ser mayor o igual que 1"],
    ['limit=101', "El parámetro 'limit' debe ser menor o igual que 100"],
    ['limit=abc', "El parámetro 'limit' debe ser un número entero"],
    ['status=lost', /^El parámetro 'status' /],
    ['campaignId=abc', "El parámetro 'campaignId' debe ser un UUID válido"],
    ['cursor=basura', /El parámetro 'cursor' no es válido/],
    [`cursor=${Buffer.from('9999-99-99T99:99:99.999999Z|00000000-0000-4000-8000-000000000000').toString('base64url')}`, /El parámetro 'cursor' no es válido/],
    ['page=2', "El parámetro 'page' no está permitido"],
  ] as const)('answers 400 naming the parameter for %s', async ([query, message], { gateway: app, listed: { owner } }) => {
    expectError(await get(app, owner, `/cards?${query}`), 400, 'Bad Request', message)
  })

  it.for([
    ['year 0', '0000-01-01T00:00:00.000000Z|00000000-0000-4000-8000-000000000000'],
    ['February 30', '2024-02-30T10:00:00.000000Z|00000000-0000-4000-8000-000000000000'],
    ['hour 24', '2024-01-01T24:00:00.000000Z|00000000-0000-4000-8000-000000000000'],
    ['milliseconds only', '2024-01-01T10:00:00.000Z|00000000-0000-4000-8000-000000000000'],
    ['an offset instead of Z', '2024-01-01T10:00:00.000000+01|00000000-0000-4000-8000-000000000000'],
    ['an id that is not a UUID', '2024-01-01T10:00:00.000000Z|00000000-0000-4000-8000-00000000000g'],
    ['a third part', '2024-01-01T10:00:00.000000Z|00000000-0000-4000-8000-000000000000|x'],
    ['no id', '2024-01-01T10:00:00.000000Z|'],
    ['bytes that are not UTF-8', '\xff\xfe|\x00'],
  ] as const)('answers 400, never 500, to a forged cursor with %s', async ([_name, content], { gateway: app, listed: { owner } }) => {
    const cursor = Buffer.from(content, 'latin1').toString('base64url')
    expectError(
      await get(app, owner, `/cards?cursor=${cursor}`),
      400,
      'Bad Request',
      "El parámetro 'cursor' no es válido: usa el 'nextCursor' de la página anterior",
    )
  })

  it('takes a well-formed cursor at the far ends of the calendar', async ({ gateway: app, listed: { owner } }) => {
    for (const position of ['0001-01-01T00:00:00.000000Z', '9999-12-31T23:59:59.999999Z']) {
      const cursor = Buffer.from(`${position}|00000000-0000-4000-8000-000000000000`).toString('base64url')
      const response = await get(app, owner, `/cards?cursor=${cursor}`)
      expect(response.statusCode, response.body).toBe(200)
    }
  })

  it('answers 401 without a key', async ({ gateway: app }) => {
    expectError(await get(app, undefined, '/cards'), 401, 'Unauthorized', /API key/)
  })
})

describe('GET /cards filtered by creation dates and by a search of the recipient', () => {
  it('keeps the letters created from `from` and before `to`, and those whose recipient’s name, surname or city contains `search`, whatever its case', async ({
    gateway: app,
    account,
  }) => {
    const madrid = await createSingle(app, account)
    const bilbao = await createSingle(app, account, { name: 'Iñaki', surname: 'Etxeberria', city: 'Bilbao', zip: '48001', province: 'Bizkaia' })
    const percent = await createSingle(app, account, { name: 'Ana 100%', surname: 'Ruiz' })
    // As created on three days.
    const days = { [madrid]: '2026-11-01T10:00:00Z', [bilbao]: '2026-11-02T10:00:00Z', [percent]: '2026-11-03T10:00:00Z' }
    for (const [id, at] of Object.entries(days))
      await app.db
        .update(letters)
        .set({ createdAt: new Date(at) })
        .where(eq(letters.id, id))
    const ids = async (query: string) => (await get(app, account, `/cards?${query}`)).json<Page>().data.map((card) => card.id)
    expect(await ids('from=2026-11-02T00:00:00Z')).toEqual([percent, bilbao])
    expect(await ids('to=2026-11-02T10:00:00Z')).toEqual([madrid])
    // A `+` left unencoded in the offset arrives as a space, and is read as the `+` it was.
    expect(await ids('from=2026-11-02T11:00:00+01:00&to=2026-11-03T00:00:00Z')).toEqual([bilbao])
    expect(await ids('search=BILB')).toEqual([bilbao])
    expect(await ids('search=etxe')).toEqual([bilbao])
    expect(await ids(`search=${encodeURIComponent('lucía')}`)).toEqual([madrid])
    // % and _ are the text's own, not patterns.
    expect(await ids(`search=${encodeURIComponent('100%')}`)).toEqual([percent])
    expect(await ids('search=_')).toEqual([])
    expect(await ids('search=madrid&from=2026-11-02T00:00:00Z')).toEqual([percent])
  })

  it('refuses a date that is not one, or a search of more than 100 characters, with a 400 in Spanish', async ({ gateway: app, account }) => {
    expectError(
      await get(app, account, '/cards?from=ayer'),
      400,
      'Bad Request',
      "El parámetro 'from' debe ser una fecha y hora ISO 8601 con zona horaria; 'ayer' no lo es",
    )
    expectError(await get(app, account, '/cards?to=2026-11-31T00:00:00Z'), 400, 'Bad Request', /El parámetro 'to' debe ser una fecha y hora ISO 8601/)
    expectError(await get(app, account, `/cards?search=${'x'.repeat(101)}`), 400, 'Bad Request', "El parámetro 'search' debe tener de 1 a 100 caracteres")
    expectError(await get(app, account, '/cards?search='), 400, 'Bad Request', "El parámetro 'search' debe tener de 1 a 100 caracteres")
  })
})
