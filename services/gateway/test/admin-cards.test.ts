import { describe, expect } from 'vitest'
import { eq } from 'drizzle-orm'
import { letters, type LetterStatus } from '@letters/db'
import { ADMIN_TOKEN } from '@letters/test/support/context'
import type { App } from '../src/app.js'
import { it } from '@letters/test/support/fixtures'
import type { Account } from '@letters/test/support/gateway'
import { adminAccount } from '@letters/test/support/accounts'
import { listPageQuery } from '../src/features/letters/cards.js'
import { singleLetter } from '@letters/test/support/factories'
import { UNKNOWN_ID, adminClient, expectError, publicClient, sendSingle } from './helpers.js'

/** A list's answer: its letters, each with its account, and the cursor to the next page. */
const page = (response: { json: <T>() => T }) => response.json<{ data: Array<{ id: string; accountId: string }>; nextCursor: string | null }>()

async function letterIn(app: App, account: Account, status: LetterStatus) {
  const id = await sendSingle(app, account)
  await app.db.update(letters).set({ status }).where(eq(letters.id, id))
  return id
}

describe('POST /admin/cards/{id}/mailed', () => {
  it('marks a printed letter mailed, with its event, and the client sees it', async ({ gateway: app, account }) => {
    const id = await letterIn(app, account, 'printed')
    const response = await adminClient(app).post(`/admin/cards/${id}/mailed`)
    expect(response.statusCode, response.body).toBe(200)
    expect(response.json()).toMatchObject({ id, status: 'mailed' })
    const card = (await publicClient(app, account.apiKey).get(`/cards/${id}`)).json<{
      status: string
      events: Array<{ status: string; detail: string | null }>
    }>()
    expect(card.status).toBe('mailed')
    expect(card.events.at(-1)).toMatchObject({ status: 'mailed', detail: 'Entregada a correos' })
  })

  it('refuses a letter marked mailed already, without a second event', async ({ gateway: app, account }) => {
    const id = await letterIn(app, account, 'printed')
    expect((await adminClient(app).post(`/admin/cards/${id}/mailed`)).statusCode).toBe(200)
    expectError(await adminClient(app).post(`/admin/cards/${id}/mailed`), 409, 'Conflict', /^La carta ya se marcó como enviada el .+ UTC$/)
    const card = (await publicClient(app, account.apiKey).get(`/cards/${id}`)).json<{ events: Array<{ status: string }> }>()
    expect(card.events.filter((event) => event.status === 'mailed')).toHaveLength(1)
  })

  it.for(['received', 'ready_for_print', 'printing', 'failed', 'cancelled'] as const)(
    'refuses a %s letter with 409',
    async (status, { gateway: app, account }) => {
      const id = await letterIn(app, account, status)
      expectError(
        await adminClient(app).post(`/admin/cards/${id}/mailed`),
        409,
        'Conflict',
        new RegExp(`^Solo una carta impresa puede marcarse como enviada; esta está en estado «[^»]+» \\(${status}\\)$`),
      )
      const [letter] = await app.db.select({ status: letters.status }).from(letters).where(eq(letters.id, id))
      expect(letter?.status).toBe(status)
    },
  )

  it('refuses a test letter with 409: it never reached the floor, and the letter clock marks it mailed', async ({ gateway: app, account }) => {
    const id = await letterIn(app, account, 'printed')
    await app.db.update(letters).set({ livemode: false }).where(eq(letters.id, id))
    expectError(
      await adminClient(app).post(`/admin/cards/${id}/mailed`),
      409,
      'Conflict',
      'Es una carta de prueba: no se imprime ni se entrega a correos, y se marca enviada sola',
    )
    const [letter] = await app.db.select({ status: letters.status }).from(letters).where(eq(letters.id, id))
    expect(letter?.status).toBe('printed')
  })

  it('takes the request without a body too', async ({ gateway: app, account }) => {
    const id = await letterIn(app, account, 'printed')
    const response = await app.inject({ method: 'POST', url: `/admin/cards/${id}/mailed`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
    expect(response.statusCode, response.body).toBe(200)
  })

  it('refuses a body with fields with 400, leaving the letter printed', async ({ gateway: app, account }) => {
    const id = await letterIn(app, account, 'printed')
    expectError(
      await adminClient(app).post(`/admin/cards/${id}/mailed`, { fecha: '2026-11-21' }),
      400,
      'Bad Request',
      'Esta ruta no admite campos en el cuerpo: envíala sin cuerpo o con {}',
    )
    const [letter] = await app.db.select({ status: letters.status }).from(letters).where(eq(letters.id, id))
    expect(letter?.status).toBe('printed')
  })

  it('answers 404 for an unknown letter, 400 for a malformed id and 401 for a bad token', async ({ gateway: app, account }) => {
    expectError(await adminClient(app).post(`/admin/cards/${UNKNOWN_ID}/mailed`), 404, 'Not Found', 'La carta no existe')
    expectError(await adminClient(app).post('/admin/cards/nada/mailed'), 400, 'Bad Request')
    const id = await letterIn(app, account, 'printed')
    expectError(await adminClient(app).raw('POST', `/admin/cards/${id}/mailed`, {}, { authorization: 'Bearer otro-token-cualquiera-123' }), 401, 'Unauthorized')
  })
})

describe('GET /admin/cards', () => {
  it('lists the letters of every account newest first, each with its account, filtered by account, status and mode, a page at a time', async ({
    gateway: app,
    account,
  }) => {
    const other = await adminAccount(app, 10)
    const first = await letterIn(app, account, 'printed')
    const second = await sendSingle(app, other)
    const third = await letterIn(app, account, 'mailed')
    const admin = adminClient(app)

    const all = await admin.get('/admin/cards?limit=100')
    expect(all.statusCode, all.body).toBe(200)
    const ids = page(all).data.map((card) => card.id)
    // Newest first; other tests' letters may sit between ours in a shared database.
    expect(ids.filter((id) => [first, second, third].includes(id))).toEqual([third, second, first])
    expect(page(all).data.find((card) => card.id === second)?.accountId).toBe(other.id)

    const mine = await admin.get(`/admin/cards?accountId=${account.id}&mode=live`)
    expect(page(mine).data.map((card) => card.id)).toEqual([third, first])
    const mailed = await admin.get(`/admin/cards?accountId=${account.id}&status=mailed`)
    expect(page(mailed).data.map((card) => card.id)).toEqual([third])
    expect((await admin.get(`/admin/cards?accountId=${account.id}&mode=test`)).json()).toEqual({ data: [], nextCursor: null })

    const firstPage = page(await admin.get(`/admin/cards?accountId=${account.id}&limit=1`))
    expect(firstPage.data.map((card) => card.id)).toEqual([third])
    const next = page(await admin.get(`/admin/cards?accountId=${account.id}&limit=1&cursor=${encodeURIComponent(firstPage.nextCursor!)}`))
    expect(next.data.map((card) => card.id)).toEqual([first])
  })

  it('lists one account’s letters of both modes merged newest first, page after page, when no mode is asked', async ({ gateway: app, account, testKey }) => {
    const live = await sendSingle(app, account)
    const test = await publicClient(app, testKey).post('/single', singleLetter(account))
    expect(test.statusCode, test.body).toBe(200)
    const testId = test.json<{ cardId: string }>().cardId
    const later = await sendSingle(app, account)
    const admin = adminClient(app)

    expect(page(await admin.get(`/admin/cards?accountId=${account.id}`)).data.map((card) => card.id)).toEqual([later, testId, live])
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const answer = page(await admin.get(`/admin/cards?accountId=${account.id}&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`))
      seen.push(...answer.data.map((card) => card.id))
      cursor = answer.nextCursor
    } while (cursor !== null && seen.length < 10)
    expect(seen).toEqual([later, testId, live])
  })

  it('answers 400 in Spanish for a bad status, date, limit or mode, and 401 without the admin token', async ({ gateway: app }) => {
    const admin = adminClient(app)
    expectError(await admin.get('/admin/cards?status=perdida'), 400, 'Bad Request', /'status'/)
    expectError(await admin.get('/admin/cards?from=ayer'), 400, 'Bad Request', /'from'/)
    expectError(await admin.get('/admin/cards?limit=0'), 400, 'Bad Request', /'limit'/)
    expectError(await admin.get('/admin/cards?limit=1e1'), 400, 'Bad Request', /'limit'/)
    expectError(await admin.get('/admin/cards?mode=prueba'), 400, 'Bad Request', /'mode'/)
    expectError(await admin.raw('GET', '/admin/cards', undefined, { authorization: 'Bearer otro-token-cualquiera-123' }), 401, 'Unauthorized')
  })

  it('reads every account’s letters through letters_created_idx, not by sorting them all', async ({ gateway: app }) => {
    const { sql: text, params } = listPageQuery(app.db, {}, { limit: 20 }).toSQL()
    // A near-empty table has no statistics worth a plan: with sequential and bitmap scans ruled
    // out, the page must be read in order from an index, and it is the one on created_at.
    const plan = await app.db.$client.begin(async (tx) => {
      await tx.unsafe('SET LOCAL enable_seqscan = off')
      await tx.unsafe('SET LOCAL enable_bitmapscan = off')
      return tx.unsafe<Array<{ 'QUERY PLAN': string }>>(`EXPLAIN ${text}`, params as never[])
    })
    const lines = plan.map((line) => line['QUERY PLAN']).join('\n')
    expect(lines).toMatch(/Index Scan using letters_created_idx on letters/)
    expect(lines).not.toMatch(/Sort/)
  })
})
