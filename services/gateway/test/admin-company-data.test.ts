import { describe, expect } from 'vitest'
import { eq } from 'drizzle-orm'
import { senders } from '@letters/db'
import type { App } from '../src/app.js'
import { it } from '@letters/test/support/fixtures'
import type { AdminClient } from '@letters/test/support/gateway'
import { UNKNOWN_ID, expectError } from './helpers.js'

let app: App
let admin: AdminClient
let accountId: string
it.beforeAll(async ({ gateway, admin: adminApi }) => {
  app = gateway
  admin = adminApi
  accountId = (await admin.post('/admin/accounts', { name: 'Floristería Sol' })).json<{ id: string }>().id
})

describe.each(['card-designs', 'envelope-designs', 'senders', 'signatures'])('POST /admin/accounts/{id}/%s', (kind) => {
  it('creates a named entry', async () => {
    const response = await admin.post(`/admin/accounts/${accountId}/${kind}`, { name: 'Otoño 2026' })
    expect(response.statusCode).toBe(201)
    // Each kind answers its whole entry (a design's format and artwork, a sender's return address): the name as given.
    expect(response.json()).toMatchObject({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'Otoño 2026' })
  })

  it('requires a name', async () => {
    expectError(await admin.post(`/admin/accounts/${accountId}/${kind}`, {}), 400, 'Bad Request', "El campo 'name' es obligatorio")
    expectError(await admin.post(`/admin/accounts/${accountId}/${kind}`, { name: 7 }), 400, 'Bad Request', "El campo 'name' debe ser un texto")
    expectError(await admin.post(`/admin/accounts/${accountId}/${kind}`, { name: ' \t ' }), 400, 'Bad Request', "El campo 'name' no puede estar vacío")
  })

  it('answers 404 for an unknown account', async () => {
    expectError(await admin.post(`/admin/accounts/${UNKNOWN_ID}/${kind}`, { name: 'X' }), 404, 'Not Found', 'La cuenta no existe')
  })
})

describe('POST /admin/accounts/{id}/senders', () => {
  it('refuses a name some handwriting font cannot write, since it signs letters in any of them, and stores nothing', async () => {
    const response = await admin.post(`/admin/accounts/${accountId}/senders`, { name: 'Tienda 王 ✨' })
    expectError(response, 400, 'Bad Request', "El campo 'name' contiene caracteres que la letra 'caveat' no puede escribir: 王 ✨")
    expect(await app.db.select().from(senders).where(eq(senders.name, 'Tienda 王 ✨'))).toEqual([])
  })
})
