import { describe, expect } from 'vitest'
import { eq, sql } from 'drizzle-orm'
import { letters } from '@letters/db'
import { it } from '@letters/test/support/fixtures'
import { expectError, sendSingle } from './helpers.js'

describe('GET /balance', () => {
  it('gives the balance, low below what ten letters abroad cost', async ({ gateway, account, client, admin }) => {
    expect((await client.get('/balance')).json()).toEqual({ balance: 100, lowBalance: false })
    expect((await admin.post(`/admin/accounts/${account.id}/credits`, { amount: -51, reason: 'ajuste' })).statusCode).toBe(200)
    expect((await client.get('/balance')).json()).toEqual({ balance: 49, lowBalance: true })
    expect(gateway.config.letterCosts.otherwise).toBe(5)
  })

  it('answers 401 without a key', async ({ gateway }) => {
    expectError(await gateway.inject({ method: 'GET', url: '/balance' }), 401, 'Unauthorized')
  })

  it('is not shown to a test key, which sees only test letters, nor are the movements', async ({ testClient }) => {
    for (const url of ['/balance', '/balance/movements', '/balance/movements.csv']) {
      expectError(await testClient.get(url), 403, 'Forbidden', 'Una API key de prueba no ve el saldo ni sus movimientos; usa una clave live')
    }
  })
})

describe('GET /balance/movements', () => {
  it('lists the movements newest first, a page at a time, with the letter each one charged', async ({ gateway, account, client, admin }) => {
    const cardId = await sendSingle(gateway, account)
    expect((await admin.post(`/admin/accounts/${account.id}/credits`, { amount: 20, reason: 'recarga de noviembre' })).statusCode).toBe(200)
    const first = (await client.get('/balance/movements?limit=2')).json<{ data: Array<Record<string, unknown>>; nextCursor: string | null }>()
    expect(first.data).toEqual([
      { id: expect.any(String), createdAt: expect.any(String), kind: 'top_up', amount: 20, balanceAfter: 117, cardId: null, reason: 'recarga de noviembre' },
      { id: expect.any(String), createdAt: expect.any(String), kind: 'charge', amount: -3, balanceAfter: 97, cardId, reason: null },
    ])
    expect(first.nextCursor).toEqual(expect.any(String))
    const second = (await client.get(`/balance/movements?limit=2&cursor=${first.nextCursor}`)).json<{
      data: Array<Record<string, unknown>>
      nextCursor: string | null
    }>()
    expect(second.data).toEqual([expect.objectContaining({ kind: 'top_up', amount: 100, balanceAfter: 100 })])
    expect(second.nextCursor).toBeNull()
  })

  it("never shows another account's movements", async ({ client, admin }) => {
    const other = (await admin.post('/admin/accounts', { name: 'Otra', credits: 7 })).json<{ id: string }>()
    const rows = (await client.get('/balance/movements?limit=100')).json<{ data: Array<{ amount: number }> }>().data
    expect(rows.map((row) => row.amount)).toEqual([100])
    expect(other.id).toBeDefined()
  })

  it.for([
    ['cursor=abc', "El parámetro 'cursor' no es válido; usa el 'nextCursor' de la página anterior"],
    ['cursor=0', "El parámetro 'cursor' no es válido"],
    ['limit=0', "El parámetro 'limit' debe ser mayor o igual que 1"],
    ['color=rojo', "El parámetro 'color' no está permitido"],
  ] as const)('refuses ?%s with 400', async ([query, message], { client }) => {
    expectError(await client.get(`/balance/movements?${query}`), 400, 'Bad Request', message)
  })
})

describe('GET /balance/movements.csv', () => {
  it('downloads the movements for a spreadsheet, UTF-8 with BOM, with text Excel would run as a formula neutralised', async ({ account, client, admin }) => {
    expect((await admin.post(`/admin/accounts/${account.id}/credits`, { amount: 5, reason: '=HYPERLINK("https://evil.example","pulsa")' })).statusCode).toBe(
      200,
    )
    expect((await admin.post(`/admin/accounts/${account.id}/credits`, { amount: 1, reason: 'regalo;@SUM(1+1)' })).statusCode).toBe(200)
    const response = await client.get('/balance/movements.csv')
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8')
    expect(response.headers['content-disposition']).toBe('attachment; filename="movimientos.csv"')
    const bytes = response.rawPayload
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf])
    const lines = bytes.subarray(3).toString('utf8').split('\r\n')
    expect(lines[0]).toBe('fecha,tipo,créditos,saldo después,carta,motivo')
    expect(lines[1]).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z,recarga,1,106,,regalo;'@SUM\(1\+1\)$/)
    expect(lines[2]).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z,recarga,5,105,,"'=HYPERLINK\(""https:\/\/evil\.example"",""pulsa""\)"$/)
    expect(lines[3]).toMatch(/,recarga,100,100,,créditos iniciales$/)
  })
})

describe('GET /cards/stats', () => {
  it('counts the letters of the last 30 days by status, every status listed, and only the key mode and account', async ({
    gateway,
    account,
    client,
    testClient,
  }) => {
    const recent = await sendSingle(gateway, account)
    const old = await sendSingle(gateway, account)
    await gateway.db
      .update(letters)
      .set({ createdAt: sql`now() - interval '40 days'` })
      .where(eq(letters.id, old))
    await gateway.db.update(letters).set({ status: 'address_rejected' }).where(eq(letters.id, recent))
    const stats = (await client.get('/cards/stats')).json<{ from: string; to: string; total: number; byStatus: Record<string, number> }>()
    expect(stats.total).toBe(1)
    expect(stats.byStatus).toEqual({
      scheduled: 0,
      received: 0,
      ready_for_print: 0,
      printing: 0,
      printed: 0,
      mailed: 0,
      returned: 0,
      address_rejected: 1,
      cancelled: 0,
      failed: 0,
    })
    expect(Date.parse(stats.to) - Date.parse(stats.from)).toBe(30 * 86_400_000)
    const wide = (await client.get(`/cards/stats?from=${encodeURIComponent(new Date(Date.now() - 50 * 86_400_000).toISOString())}`)).json<{ total: number }>()
    expect(wide.total).toBe(2)
    expect((await testClient.get('/cards/stats')).json<{ total: number }>().total).toBe(0)
  })

  it('refuses a date it cannot read, and a span that ends before it starts, with 400', async ({ client }) => {
    expectError(await client.get('/cards/stats?from=ayer'), 400, 'Bad Request', /^El parámetro 'from' debe ser una fecha y hora ISO 8601 con zona horaria/)
    expectError(
      await client.get('/cards/stats?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z'),
      400,
      'Bad Request',
      "El parámetro 'from' (2026-02-01T00:00:00.000Z) debe ser anterior a 'to' (2026-01-01T00:00:00.000Z)",
    )
  })

  it('reads a year under 100 as written, not as the 1900s', async ({ client }) => {
    const stats = (await client.get('/cards/stats?from=0001-01-01T00:00:00Z&to=0099-06-01T00:00:00Z')).json<{ from: string; to: string }>()
    expect(stats).toMatchObject({ from: '0001-01-01T00:00:00.000Z', to: '0099-06-01T00:00:00.000Z' })
  })
})
