import { describe, expect } from 'vitest'
import { eq } from 'drizzle-orm'
import { senders } from '@letters/db'
import { it } from '@letters/test/support/fixtures'
import { UNKNOWN_ID, expectError } from './helpers.js'

describe.each(['card-designs', 'envelope-designs', 'senders', 'signatures'])('POST /admin/accounts/{id}/%s', (kind) => {
  it('creates a named entry', async ({ admin, account }) => {
    const response = await admin.post(`/admin/accounts/${account.id}/${kind}`, { name: 'Otoño 2026' })
    expect(response.statusCode).toBe(201)
    // Each kind answers its whole entry (a design's format and artwork, a sender's return address): the name as given.
    expect(response.json()).toMatchObject({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'Otoño 2026' })
  })

  it('requires a name', async ({ admin, account }) => {
    expectError(await admin.post(`/admin/accounts/${account.id}/${kind}`, {}), 400, 'Bad Request', "El campo 'name' es obligatorio")
    expectError(await admin.post(`/admin/accounts/${account.id}/${kind}`, { name: 7 }), 400, 'Bad Request', "El campo 'name' debe ser un texto")
    expectError(await admin.post(`/admin/accounts/${account.id}/${kind}`, { name: ' \t ' }), 400, 'Bad Request', "El campo 'name' no puede estar vacío")
  })

  it('answers 404 for an unknown account', async ({ admin }) => {
    expectError(await admin.post(`/admin/accounts/${UNKNOWN_ID}/${kind}`, { name: 'X' }), 404, 'Not Found', 'La cuenta no existe')
  })
})

describe('POST /admin/accounts/{id}/senders', () => {
  it('refuses a name some handwriting font cannot write, since it signs letters in any of them, and stores nothing', async ({
    gateway: app,
    admin,
    account,
  }) => {
    const response = await admin.post(`/admin/accounts/${account.id}/senders`, { name: 'Tienda 王 ✨' })
    expectError(response, 400, 'Bad Request', "El campo 'name' contiene caracteres que la letra 'caveat' no puede escribir: 王 ✨")
    expect(await app.db.select().from(senders).where(eq(senders.name, 'Tienda 王 ✨'))).toEqual([])
  })
})
