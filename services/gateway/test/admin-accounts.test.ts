import { describe, expect } from 'vitest'
import { eq, sql } from 'drizzle-orm'
import { apiKeys, ledgerEntries } from '@letters/db'
import { hashApiKey } from '../src/common/api-keys.js'
import { it } from '@letters/test/support/fixtures'
import type { AdminClient } from '@letters/test/support/gateway'
import { UNKNOWN_ID, expectError } from './helpers.js'

async function newAccount(admin: AdminClient, credits?: number) {
  const response = await admin.post('/admin/accounts', { name: 'Papelería Luna', ...(credits === undefined ? {} : { credits }) })
  expect(response.statusCode).toBe(201)
  return response.json<{ id: string; name: string; balance: number; apiKey: string }>()
}

describe('POST /admin/accounts', () => {
  it('creates an account with its opening credits and a first API key', async ({ gateway: app, admin }) => {
    const account = await newAccount(admin, 250)
    expect(account).toEqual({ id: expect.any(String), name: 'Papelería Luna', balance: 250, apiKey: expect.stringMatching(/^lk_live_[A-Za-z0-9_-]{49}$/) })
    const entries = await app.db.select().from(ledgerEntries).where(eq(ledgerEntries.accountId, account.id))
    expect(entries.map((entry) => [entry.kind, entry.amount, entry.balanceAfter])).toEqual([['top_up', 250, 250]])
  })

  it('starts at zero credits without a ledger entry when none are given', async ({ gateway: app, admin }) => {
    const account = await newAccount(admin)
    expect(account.balance).toBe(0)
    expect(await app.db.select().from(ledgerEntries).where(eq(ledgerEntries.accountId, account.id))).toEqual([])
  })

  it('stores only a hash and a short display prefix of the key', async ({ gateway: app, admin }) => {
    const account = await newAccount(admin, 1)
    const [stored] = await app.db.select().from(apiKeys).where(eq(apiKeys.accountId, account.id))
    expect(stored?.keyHash).toBe(hashApiKey(account.apiKey))
    expect(stored?.keyHash).not.toContain(account.apiKey.slice(8))
    expect(account.apiKey.startsWith(stored!.displayPrefix)).toBe(true)
    expect(stored!.displayPrefix.length).toBeLessThan(16)
  })

  it('gives every account a different key', async ({ admin }) => {
    const keys = await Promise.all(Array.from({ length: 5 }, () => newAccount(admin).then((account) => account.apiKey)))
    expect(new Set(keys).size).toBe(5)
  })

  it.for([
    [{}, "El campo 'name' es obligatorio"],
    [{ name: '' }, "El campo 'name' no puede estar vacío"],
    [{ name: '   ' }, "El campo 'name' no puede estar vacío"],
    [{ name: 'A', credits: -5 }, "El campo 'credits' debe ser mayor o igual que 0"],
    [{ name: 'A', credits: 2.5 }, "El campo 'credits' debe ser un número entero"],
    [{ name: 'A', credits: '10' }, "El campo 'credits' debe ser un número entero"],
    [{ name: 'A', plan: 'gold' }, "El campo 'plan' no está permitido"],
    [[], 'El cuerpo de la petición debe ser un objeto JSON'],
  ] as const)('rejects %j with 400', async ([body, message], { admin }) => {
    expectError(await admin.post('/admin/accounts', body), 400, 'Bad Request', message)
  })

  it('rejects a body that is not JSON with 400 and another media type with 415', async ({ admin }) => {
    expectError(
      await admin.raw('POST', '/admin/accounts', '{"name":', { 'content-type': 'application/json' }),
      400,
      'Bad Request',
      'El cuerpo de la petición no es un JSON válido',
    )
    expectError(await admin.raw('POST', '/admin/accounts', 'name=x', { 'content-type': 'text/plain' }), 415, 'Unsupported Media Type')
  })

  it('rejects a body over 64 KiB with 413', async ({ admin }) => {
    expectError(await admin.post('/admin/accounts', { name: 'x'.repeat(70 * 1024) }), 413, 'Payload Too Large')
  })
})

describe('GET /admin/accounts/{id}', () => {
  it('returns the account and its balance', async ({ admin }) => {
    const account = await newAccount(admin, 12)
    const response = await admin.get(`/admin/accounts/${account.id}`)
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ id: account.id, name: 'Papelería Luna', balance: 12 })
  })

  it('answers 404 for an unknown account', async ({ admin }) => {
    expectError(await admin.get(`/admin/accounts/${UNKNOWN_ID}`), 404, 'Not Found', 'La cuenta no existe')
  })

  it('answers 400 for an id that is not a UUID', async ({ admin }) => {
    expectError(await admin.get('/admin/accounts/42'), 400, 'Bad Request', "El parámetro de ruta 'id' debe ser un UUID válido")
  })
})

describe('API keys', () => {
  it('issues another key for an account', async ({ gateway: app, admin }) => {
    const account = await newAccount(admin)
    const response = await admin.post(`/admin/accounts/${account.id}/api-keys`)
    expect(response.statusCode).toBe(201)
    const issued = response.json<{ id: string; apiKey: string }>()
    expect(issued).toEqual({ id: expect.any(String), apiKey: expect.stringMatching(/^lk_live_/), mode: 'live' })
    expect(issued.apiKey).not.toBe(account.apiKey)
    expect(await app.apiKeyAuth.identify(issued.apiKey)).toEqual({ accountId: account.id, keyId: issued.id, livemode: true })
  })

  it('issues a test key (lk_test_) with { "mode": "test" } and a live one with { "mode": "live" }', async ({ gateway: app, admin }) => {
    const account = await newAccount(admin)
    const test = await admin.post(`/admin/accounts/${account.id}/api-keys`, { mode: 'test' })
    expect(test.statusCode, test.body).toBe(201)
    const issued = test.json<{ id: string; apiKey: string; mode: string }>()
    expect(issued).toEqual({ id: expect.any(String), apiKey: expect.stringMatching(/^lk_test_[A-Za-z0-9_-]{49}$/), mode: 'test' })
    expect(await app.apiKeyAuth.identify(issued.apiKey)).toEqual({ accountId: account.id, keyId: issued.id, livemode: false })
    const live = (await admin.post(`/admin/accounts/${account.id}/api-keys`, { mode: 'live' })).json<{ id: string; apiKey: string }>()
    expect(await app.apiKeyAuth.identify(live.apiKey)).toEqual({ accountId: account.id, keyId: live.id, livemode: true })
  })

  it('refuses a mode other than live or test, issuing nothing', async ({ gateway: app, admin }) => {
    const account = await newAccount(admin)
    for (const mode of ['sandbox', 'TEST', 1, null]) {
      expectError(await admin.post(`/admin/accounts/${account.id}/api-keys`, { mode }), 400, 'Bad Request', /'mode'/)
    }
    expect(await app.db.select().from(apiKeys).where(eq(apiKeys.accountId, account.id))).toHaveLength(1)
  })

  it('answers 404 when issuing a key for an unknown account', async ({ admin }) => {
    expectError(await admin.post(`/admin/accounts/${UNKNOWN_ID}/api-keys`), 404, 'Not Found')
  })

  it('refuses a body with fields when issuing or revoking a key, issuing and revoking nothing', async ({ gateway: app, admin }) => {
    const account = await newAccount(admin)
    expectError(
      await admin.post(`/admin/accounts/${account.id}/api-keys`, { nombre: 'CRM' }),
      400,
      'Bad Request',
      "El cuerpo admite solo el campo 'mode', con valor 'live' o 'test'",
    )
    expect(await app.db.select().from(apiKeys).where(eq(apiKeys.accountId, account.id))).toHaveLength(1)
    const [key] = await app.db.select().from(apiKeys).where(eq(apiKeys.accountId, account.id))
    expectError(await admin.raw('DELETE', `/admin/api-keys/${key!.id}`, { motivo: 'fuga' }), 400, 'Bad Request')
    expect((await app.db.select().from(apiKeys).where(eq(apiKeys.id, key!.id)))[0]?.revokedAt).toBeNull()
  })

  it('revokes a key with 204, and revoking it again changes nothing', async ({ gateway: app, admin }) => {
    const account = await newAccount(admin)
    const issued = (await admin.post(`/admin/accounts/${account.id}/api-keys`)).json<{ id: string; apiKey: string }>()
    const response = await admin.delete(`/admin/api-keys/${issued.id}`)
    expect(response.statusCode).toBe(204)
    expect(response.body).toBe('')
    expect(await app.apiKeyAuth.identify(issued.apiKey)).toBeNull()
    expect(await app.apiKeyAuth.identify(account.apiKey)).not.toBeNull()
    expect((await admin.delete(`/admin/api-keys/${issued.id}`)).statusCode).toBe(204)
  })

  it('answers 404 when revoking an unknown key', async ({ admin }) => {
    expectError(await admin.delete(`/admin/api-keys/${UNKNOWN_ID}`), 404, 'Not Found', 'La API key no existe')
  })
})

describe('GET /admin/api-keys?prefix= (a leaked key found by what is visible of it)', () => {
  it('finds a key by its visible start or the first characters of it, with its account, mode and revocation', async ({ gateway: app, admin }) => {
    const account = await newAccount(admin)
    const test = (await admin.post(`/admin/accounts/${account.id}/api-keys`, { mode: 'test' })).json<{ id: string; apiKey: string }>()
    const [live] = await app.db
      .select({ id: apiKeys.id })
      .from(apiKeys)
      .where(eq(apiKeys.keyHash, hashApiKey(account.apiKey)))
    const expected = {
      id: live!.id,
      accountId: account.id,
      accountName: 'Papelería Luna',
      mode: 'live',
      displayPrefix: account.apiKey.slice(0, 14),
      createdAt: expect.any(String),
      revokedAt: null,
    }
    for (const prefix of [account.apiKey.slice(0, 14), account.apiKey.slice(0, 11)]) {
      const found = await admin.get(`/admin/api-keys?prefix=${encodeURIComponent(prefix)}`)
      expect(found.statusCode, prefix).toBe(200)
      expect(found.json<{ data: unknown[] }>().data, prefix).toContainEqual(expected)
      expect(found.json<{ data: Array<{ id: string }> }>().data.map((key) => key.id)).not.toContain(test.id)
    }
    expect((await admin.delete(`/admin/api-keys/${test.id}`)).statusCode).toBe(204)
    const revoked = (await admin.get(`/admin/api-keys?prefix=${encodeURIComponent(test.apiKey.slice(0, 14))}`)).json<{
      data: Array<{ id: string; mode: string; revokedAt: string | null }>
    }>()
    expect(revoked.data).toEqual([expect.objectContaining({ id: test.id, mode: 'test', revokedAt: expect.any(String) })])
  })

  it('reads `_` as itself, not as a wildcard: a start of underscores finds no key', async ({ admin }) => {
    await newAccount(admin)
    // Were it compared with LIKE, every key would match: `_` stands for any character there.
    expect((await admin.get('/admin/api-keys?prefix=lk_live_______')).json()).toEqual({ data: [] })
  })

  it.for(['', 'lk_live_', 'lk_live_a', 'sk_live_abcdef', 'lk_prod_abcdef', 'lk_live_abcdefg', `lk_live_${'a'.repeat(49)}`])(
    'refuses the prefix %j with 400 and a message in Spanish (a whole key among them: a URL is logged)',
    async (prefix, { admin }) => {
      expectError(
        await admin.get(`/admin/api-keys?prefix=${encodeURIComponent(prefix)}`),
        400,
        'Bad Request',
        "El parámetro 'prefix' debe ser el principio visible de una API key: lk_live_ o lk_test_ y de 2 a 6 caracteres más (nunca la key entera)",
      )
    },
  )

  it('answers 400 without a prefix, and 401 without the admin token', async ({ gateway: app, admin }) => {
    expect((await admin.get('/admin/api-keys')).statusCode).toBe(400)
    expectError(await app.inject({ method: 'GET', url: '/admin/api-keys?prefix=lk_live_abcdef' }), 401, 'Unauthorized')
  })
})

describe('POST /admin/accounts/{id}/credits', () => {
  it('tops up with a positive amount and adjusts with a negative one', async ({ gateway: app, admin }) => {
    const account = await newAccount(admin, 10)
    const topUp = await admin.post(`/admin/accounts/${account.id}/credits`, { amount: 15, reason: 'pedido 881' })
    expect(topUp.statusCode).toBe(200)
    expect(topUp.json()).toEqual({ balance: 25 })
    const adjustment = await admin.post(`/admin/accounts/${account.id}/credits`, { amount: -20, reason: 'corrección' })
    expect(adjustment.json()).toEqual({ balance: 5 })
    const entries = await app.db.select().from(ledgerEntries).where(eq(ledgerEntries.accountId, account.id)).orderBy(ledgerEntries.id)
    expect(entries.map((entry) => [entry.kind, entry.amount, entry.balanceAfter, entry.reason])).toEqual([
      ['top_up', 10, 10, 'créditos iniciales'],
      ['top_up', 15, 25, 'pedido 881'],
      ['adjustment', -20, 5, 'corrección'],
    ])
  })

  it('answers 409 for a negative amount larger than the balance, and moves nothing', async ({ admin }) => {
    const account = await newAccount(admin, 4)
    expectError(
      await admin.post(`/admin/accounts/${account.id}/credits`, { amount: -5 }),
      409,
      'Conflict',
      'No se pueden restar 5 créditos: el saldo de la cuenta es 4',
    )
    expect((await admin.get(`/admin/accounts/${account.id}`)).json()).toMatchObject({ balance: 4 })
  })

  it.for([
    [{ amount: 0 }, "El campo 'amount' debe ser un número entero distinto de 0 (negativo para un ajuste)"],
    [{ amount: 1.5 }, "El campo 'amount' debe ser un número entero distinto de 0 (negativo para un ajuste)"],
    [{}, "El campo 'amount' es obligatorio"],
    [{ amount: 5, note: 'x' }, "El campo 'note' no está permitido"],
  ] as const)('rejects %j with 400 and moves nothing', async ([body, message], { admin }) => {
    const account = await newAccount(admin, 7)
    expectError(await admin.post(`/admin/accounts/${account.id}/credits`, body), 400, 'Bad Request', message)
    expect((await admin.get(`/admin/accounts/${account.id}`)).json()).toMatchObject({ balance: 7 })
  })

  it('answers 404 for an unknown account', async ({ admin }) => {
    expectError(await admin.post(`/admin/accounts/${UNKNOWN_ID}/credits`, { amount: 5 }), 404, 'Not Found')
  })

  it('answers 409 for a top-up past the largest balance, and moves nothing', async ({ gateway: app, admin }) => {
    const account = await newAccount(admin, 10_000_000)
    // Reaching the limit through top-ups would take hundreds of calls; set the balance directly.
    await app.db.execute(sql`UPDATE accounts SET balance = 2147483000 WHERE id = ${account.id}::uuid`)
    expectError(await admin.post(`/admin/accounts/${account.id}/credits`, { amount: 1000 }), 409, 'Conflict', 'El saldo no puede superar 2147483647 créditos')
    expect((await admin.get(`/admin/accounts/${account.id}`)).json()).toMatchObject({ balance: 2147483000 })
  })
})
