import { beforeAll, describe, expect } from 'vitest'
import { eq } from 'drizzle-orm'
import { letters } from '@letters/db'
import type { App } from '../src/app.js'
import { it } from '@letters/test/support/fixtures'
import { UNKNOWN_ID, adminAccount, adminCampaign, expectError } from './helpers.js'

type Account = Awaited<ReturnType<typeof adminAccount>>
type Summary = { id: string; status: string; campaignId: string | null }
type Page = { data: Summary[]; nextCursor: string | null }

let app: App
let account: Account
let other: Account
it.beforeAll(async ({ gateway }) => {
  app = gateway
  account = await adminAccount(app, 500)
  other = await adminAccount(app, 500)
})

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const recipient = { name: 'Lucía', surname: 'García', address: 'Calle Mayor 1', zip: '28013', city: 'Madrid', province: 'Madrid', country: 'ES' }

const get = (owner: Account | undefined, url: string) => app.inject({ method: 'GET', url, headers: owner ? { 'x-api-key': owner.apiKey } : {} })
const post = (owner: Account, url: string, payload: Record<string, unknown>) =>
  app.inject({ method: 'POST', url, headers: { 'x-api-key': owner.apiKey }, payload })

async function createSingle(owner: Account, overrides: Record<string, unknown> = {}) {
  const response = await post(owner, '/single', {
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

const createCampaign = (owner: Account) => adminCampaign(app, owner, { fontName: 'kalam' })

async function createCampaignLetter(owner: Account, campaignId: string) {
  const response = await post(owner, '/card', { campaignId, ...recipient, variables: { cupon: 'OTONO10' } })
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ cardId: string }>().cardId
}

describe('GET /cards/{cardId}', () => {
  it('returns a single letter whole, as received, with its first event', async () => {
    const cardId = await createSingle(account, { country: 'es', fontName: null })
    const response = await get(account, `/cards/${cardId}`)
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
      message: 'Querida Lucía, gracias.',
      recipient: { ...recipient, company: null, country: 'ES' },
      address: null,
      addressLines: null,
      cost: 3,
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
      personalDataErasedAt: null,
      events: [{ status: 'received', at: expect.stringMatching(ISO), detail: null }],
    })
    expect(Math.abs(Date.parse(body.createdAt) - Date.now())).toBeLessThan(60_000)
  })

  it('charges 5 for a letter abroad', async () => {
    const cardId = await createSingle(account, { zip: '75001', city: 'Paris', province: null, country: 'FR' })
    const body = (await get(account, `/cards/${cardId}`)).json()
    expect(body).toMatchObject({ cost: 5, recipient: { zip: '75001', city: 'Paris', province: null, country: 'FR' } })
  })

  it("returns a campaign letter with the campaign's designs and font and the message filled with defaults", async () => {
    const campaignId = await createCampaign(account)
    const cardId = await createCampaignLetter(account, campaignId)
    const response = await get(account, `/cards/${cardId}`)
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
      message: 'Hola amigo, tu cupón es OTONO10.',
      recipient: { ...recipient, company: null },
      address: null,
      addressLines: null,
      cost: 3,
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
      personalDataErasedAt: null,
      events: [{ status: 'received', at: expect.stringMatching(ISO), detail: null }],
    })
  })

  it("answers 404 for an unknown id, a malformed id and another account's letter", async () => {
    const foreign = await createSingle(other)
    for (const id of [UNKNOWN_ID, 'abc', foreign]) {
      expectError(await get(account, `/cards/${id}`), 404, 'Not Found', 'La carta no existe')
    }
    expect((await get(other, `/cards/${foreign}`)).statusCode).toBe(200)
  })

  it('answers 401 without a key', async () => {
    const cardId = await createSingle(account)
    expectError(await get(undefined, `/cards/${cardId}`), 401, 'Unauthorized', /API key/)
  })
})

describe('GET /cards', () => {
  let owner: Account
  let campaignId: string
  /** Every letter of `owner`, in creation order; `singles` and `campaignLetters` split them by type. */
  const created: string[] = []
  const singles: string[] = []
  const campaignLetters: string[] = []
  let otherLetter: string
  beforeAll(async () => {
    owner = await adminAccount(app, 500)
    campaignId = await createCampaign(owner)
    for (let i = 0; i < 5; i++) {
      singles.push(await createSingle(owner))
      created.push(singles.at(-1)!)
      if (i % 2 === 0) {
        campaignLetters.push(await createCampaignLetter(owner, campaignId))
        created.push(campaignLetters.at(-1)!)
      }
    }
    otherLetter = await createSingle(other)
  })

  const newestFirst = (ids: string[]) => [...ids].reverse()

  /** Follows `nextCursor` from the first page; fails on any page that is not a 200. */
  async function collect(who: Account, query: string) {
    const ids: string[] = []
    const cursors: Array<string | null> = []
    let cursor: string | null = null
    do {
      const response = await get(who, `/cards?${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
      expect(response.statusCode, `page ${cursors.length + 1}: ${response.body}`).toBe(200)
      const page = response.json<Page>()
      expect(page.data.length).toBeLessThanOrEqual(2)
      ids.push(...page.data.map((card) => card.id))
      cursors.push(page.nextCursor)
      cursor = page.nextCursor
    } while (cursor && cursors.length < 20)
    return { ids, cursors }
  }

  it('lists the account letters newest first, each in its summary shape (the card without events)', async () => {
    const page = (await get(owner, '/cards')).json<Page & { data: Array<Record<string, unknown>> }>()
    expect(page.data.map((card) => card.id)).toEqual(newestFirst(created))
    expect(page.nextCursor).toBeNull()
    const { events: _, ...summary } = (await get(owner, `/cards/${singles[0]}`)).json<Record<string, unknown>>()
    expect(page.data.at(-1)).toEqual(summary)
  })

  it('pages with limit and cursor without duplicates or gaps, the last page having a null nextCursor', async () => {
    const { ids, cursors } = await collect(owner, 'limit=2')
    expect(ids).toEqual(newestFirst(created))
    expect(cursors).toEqual([expect.any(String), expect.any(String), expect.any(String), null])
  })

  it('keeps the filter across pages', async () => {
    const { ids, cursors } = await collect(owner, `campaignId=${campaignId}&status=received&limit=2`)
    expect(ids).toEqual(newestFirst(campaignLetters))
    expect(cursors).toEqual([expect.any(String), null])
  })

  it('filters by campaignId and by status', async () => {
    const byCampaign = (await get(owner, `/cards?campaignId=${campaignId}`)).json<Page>()
    expect(byCampaign.data.map((card) => card.id)).toEqual(newestFirst(campaignLetters))
    expect(byCampaign.data.every((card) => card.campaignId === campaignId)).toBe(true)

    const [printed] = singles
    await app.db.update(letters).set({ status: 'printed' }).where(eq(letters.id, printed!))
    try {
      expect((await get(owner, '/cards?status=printed')).json<Page>().data.map((card) => card.id)).toEqual([printed])
      const received = (await get(owner, '/cards?status=received&limit=100')).json<Page>().data.map((card) => card.id)
      expect(received).toEqual(newestFirst(created).filter((id) => id !== printed))
      expect((await get(owner, '/cards?status=mailed')).json()).toEqual({ data: [], nextCursor: null })
    } finally {
      await app.db.update(letters).set({ status: 'received' }).where(eq(letters.id, printed!))
    }
  })

  it("never shows another account's letters", async () => {
    const mine = (await get(owner, '/cards?limit=100')).json<Page>().data.map((card) => card.id)
    expect(mine).toEqual(newestFirst(created))
    const theirs = (await get(other, '/cards?limit=100')).json<Page>().data.map((card) => card.id)
    expect(theirs).toContain(otherLetter)
    expect(theirs.filter((id) => mine.includes(id))).toEqual([])
    expect((await get(other, `/cards?campaignId=${campaignId}`)).json()).toEqual({ data: [], nextCursor: null })
  })

  it.each([
    ['limit=0', "El parámetro 'limit' debe ser mayor o igual que 1"],
    ['limit=101', "El parámetro 'limit' debe ser menor o igual que 100"],
    ['limit=abc', "El parámetro 'limit' debe ser un número entero"],
    ['status=lost', /^El parámetro 'status' /],
    ['campaignId=abc', "El parámetro 'campaignId' debe ser un UUID válido"],
    ['cursor=basura', /El parámetro 'cursor' no es válido/],
    [`cursor=${Buffer.from('9999-99-99T99:99:99.999999Z|00000000-0000-4000-8000-000000000000').toString('base64url')}`, /El parámetro 'cursor' no es válido/],
    ['page=2', "El parámetro 'page' no está permitido"],
  ])('answers 400 naming the parameter for %s', async (query, message) => {
    expectError(await get(owner, `/cards?${query}`), 400, 'Bad Request', message)
  })

  it.each([
    ['year 0', '0000-01-01T00:00:00.000000Z|00000000-0000-4000-8000-000000000000'],
    ['February 30', '2024-02-30T10:00:00.000000Z|00000000-0000-4000-8000-000000000000'],
    ['hour 24', '2024-01-01T24:00:00.000000Z|00000000-0000-4000-8000-000000000000'],
    ['milliseconds only', '2024-01-01T10:00:00.000Z|00000000-0000-4000-8000-000000000000'],
    ['an offset instead of Z', '2024-01-01T10:00:00.000000+01|00000000-0000-4000-8000-000000000000'],
    ['an id that is not a UUID', '2024-01-01T10:00:00.000000Z|00000000-0000-4000-8000-00000000000g'],
    ['a third part', '2024-01-01T10:00:00.000000Z|00000000-0000-4000-8000-000000000000|x'],
    ['no id', '2024-01-01T10:00:00.000000Z|'],
    ['bytes that are not UTF-8', '\xff\xfe|\x00'],
  ])('answers 400, never 500, to a forged cursor with %s', async (_name, content) => {
    const cursor = Buffer.from(content, 'latin1').toString('base64url')
    expectError(
      await get(owner, `/cards?cursor=${cursor}`),
      400,
      'Bad Request',
      "El parámetro 'cursor' no es válido: usa el 'nextCursor' de la página anterior",
    )
  })

  it('takes a well-formed cursor at the far ends of the calendar', async () => {
    for (const position of ['0001-01-01T00:00:00.000000Z', '9999-12-31T23:59:59.999999Z']) {
      const cursor = Buffer.from(`${position}|00000000-0000-4000-8000-000000000000`).toString('base64url')
      const response = await get(owner, `/cards?cursor=${cursor}`)
      expect(response.statusCode, response.body).toBe(200)
    }
  })

  it('answers 401 without a key', async () => {
    expectError(await get(undefined, '/cards'), 401, 'Unauthorized', /API key/)
  })
})
