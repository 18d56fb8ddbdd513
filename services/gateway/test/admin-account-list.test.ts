import { describe, expect } from 'vitest'
import { sql } from 'drizzle-orm'
import { it as base } from '@letters/test/support/fixtures'
import type { AdminClient } from '@letters/test/support/gateway'
import { expectError } from './helpers.js'

type AccountList = { data: Array<{ id: string; name: string; balance: number; createdAt: string }>; nextCursor: string | null }

// A database of its own: the list shows every account, and other files make theirs side by side.
// It starts with none, and no test here asks for the `account` fixture: the only accounts listed
// are the five the second test makes, after the first found the list empty.
const it = base.extend({ gatewayOptions: { isolate: 'accountlist' } })

async function listAll(admin: AdminClient, limit: number) {
  const pages: AccountList[] = []
  for (let cursor: string | null | undefined; cursor !== null;) {
    const response = await admin.get(`/admin/accounts?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`)
    expect(response.statusCode, response.body).toBe(200)
    const page = response.json<AccountList>()
    pages.push(page)
    cursor = page.nextCursor
  }
  return pages
}

describe('GET /admin/accounts', () => {
  it('answers an empty page when there are no accounts', async ({ admin }) => {
    const response = await admin.get('/admin/accounts')
    expect(response.statusCode, response.body).toBe(200)
    expect(response.json()).toEqual({ data: [], nextCursor: null })
  })

  it('lists every account newest first with its balance, a page at a time, each once', async ({ gateway: app, admin }) => {
    const made: string[] = []
    for (const [index, credits] of [0, 5, 10, 15, 20].entries()) {
      const response = await admin.post('/admin/accounts', { name: `Cuenta ${index}`, credits })
      made.push(response.json<{ id: string }>().id)
    }
    // Two accounts opened in the same microsecond, across the first page's end: the id orders
    // them, and neither is skipped nor shown twice.
    await app.db.execute(sql`UPDATE accounts SET created_at = (SELECT created_at FROM accounts WHERE id = ${made[2]}::uuid) WHERE id = ${made[3]}::uuid`)

    const first = (await admin.get('/admin/accounts')).json<AccountList>()
    expect(first.nextCursor).toBeNull()
    expect(first.data[0]).toEqual({
      id: made[4],
      name: 'Cuenta 4',
      balance: 20,
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    })
    expect(first.data.map((account) => account.balance).sort((a, b) => a - b)).toEqual([0, 5, 10, 15, 20])
    const instants = first.data.map((account) => Date.parse(account.createdAt))
    expect(instants).toEqual([...instants].sort((a, b) => b - a))

    const pages = await listAll(admin, 2)
    expect(pages.map((page) => page.data.length)).toEqual([2, 2, 1])
    expect(pages.flatMap((page) => page.data)).toEqual(first.data)
  })

  it.for([
    ['limit=0', "El parámetro 'limit' debe ser mayor o igual que 1"],
    ['limit=101', "El parámetro 'limit' debe ser menor o igual que 100"],
    ['limit=diez', "El parámetro 'limit' debe ser un número entero"],
    ['cursor=no-es-un-cursor', "El parámetro 'cursor' no es válido: usa el 'nextCursor' de la página anterior"],
    ['orden=nombre', "El parámetro 'orden' no está permitido"],
  ])('rejects ?%s with 400', async ([query, message], { admin }) => {
    expectError(await admin.get(`/admin/accounts?${query}`), 400, 'Bad Request', message)
  })

  it('answers 401 without the admin token', async ({ gateway: app }) => {
    expectError(await app.inject({ method: 'GET', url: '/admin/accounts' }), 401, 'Unauthorized')
  })
})
