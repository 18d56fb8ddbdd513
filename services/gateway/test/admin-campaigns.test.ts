import { describe, expect } from 'vitest'
import { eq } from 'drizzle-orm'
import { campaigns } from '@letters/db'
import { it } from '@letters/test/support/fixtures'
import type { Account } from '@letters/test/support/gateway'
import { UNKNOWN_ID, adminAccount, expectError } from './helpers.js'

const variables = [
  { name: 'nombre', maxSize: 40, defaultValue: 'amigo', example: 'Lucía' },
  { name: 'cupon', maxSize: 10, defaultValue: null, example: 'OTONO10' },
]

function campaignBody(account: Account, overrides: Record<string, unknown> = {}) {
  return {
    name: 'Otoño',
    cardDesignId: account.cardDesignId,
    envelopeDesignId: account.envelopeDesignId,
    senderId: account.senderId,
    message: 'Hola {{nombre}}, tu cupón es {{ cupon }}.',
    variables,
    ...overrides,
  }
}

describe('POST /admin/accounts/{id}/campaigns', () => {
  it('creates an active campaign with its variables in order', async ({ gateway: app, admin, account }) => {
    const response = await admin.post(`/admin/accounts/${account.id}/campaigns`, campaignBody(account, { fontName: 'caveat' }))
    expect(response.statusCode).toBe(201)
    expect(response.json()).toEqual({ id: expect.any(String), name: 'Otoño', active: true, variables, trackingUrl: null })
    const [stored] = await app.db.select().from(campaigns).where(eq(campaigns.id, response.json<{ id: string }>().id))
    expect(stored).toMatchObject({ accountId: account.id, fontName: 'caveat', message: 'Hola {{nombre}}, tu cupón es {{ cupon }}.' })
  })

  it('creates an inactive campaign when asked, and one without variables', async ({ admin, account }) => {
    const response = await admin.post(`/admin/accounts/${account.id}/campaigns`, campaignBody(account, { active: false, message: 'Gracias', variables: [] }))
    expect(response.statusCode).toBe(201)
    expect(response.json()).toMatchObject({ active: false, variables: [] })
  })

  it('rejects a placeholder that is not a declared variable', async ({ admin, account }) => {
    const response = await admin.post(`/admin/accounts/${account.id}/campaigns`, campaignBody(account, { message: 'Hola {{nombre}} de {{ciudad}}' }))
    expectError(response, 400, 'Bad Request', "El mensaje usa la variable '{{ciudad}}', que no está declarada en 'variables'")
  })

  it('rejects a variable declared twice', async ({ admin, account }) => {
    const response = await admin.post(`/admin/accounts/${account.id}/campaigns`, campaignBody(account, { variables: [variables[0], variables[0]] }))
    expectError(response, 400, 'Bad Request', "La variable 'nombre' está declarada dos veces")
  })

  it('rejects a default value longer than the variable allows', async ({ admin, account }) => {
    const response = await admin.post(
      `/admin/accounts/${account.id}/campaigns`,
      campaignBody(account, { variables: [{ ...variables[0], maxSize: 3 }, variables[1]] }),
    )
    expectError(response, 400, 'Bad Request', "El campo 'variables[0].defaultValue' supera el máximo de 3 caracteres de la variable")
  })

  it('rejects a template or a default its font cannot write, and stores nothing', async ({ gateway: app, admin, account }) => {
    const before = await app.db.select().from(campaigns).where(eq(campaigns.accountId, account.id))
    expectError(
      await admin.post(`/admin/accounts/${account.id}/campaigns`, campaignBody(account, { message: 'Feliz año 🎆 {{nombre}}' })),
      400,
      'Bad Request',
      "El campo 'message' contiene caracteres que la letra 'caveat' no puede escribir: 🎆",
    )
    const withDefault = campaignBody(account, { fontName: 'kalam', variables: [{ ...variables[0], defaultValue: 'Łucja' }, variables[1]] })
    expectError(
      await admin.post(`/admin/accounts/${account.id}/campaigns`, withDefault),
      400,
      'Bad Request',
      "El campo 'variables[0].defaultValue' contiene caracteres que la letra 'kalam' no puede escribir: Ł",
    )
    expect(await app.db.select().from(campaigns).where(eq(campaigns.accountId, account.id))).toHaveLength(before.length)
  })

  it('rejects an unknown font, listing the available ones, and stores nothing', async ({ gateway: app, admin, account }) => {
    const before = await app.db.select().from(campaigns).where(eq(campaigns.accountId, account.id))
    const response = await admin.post(`/admin/accounts/${account.id}/campaigns`, campaignBody(account, { fontName: 'comic-sans' }))
    expectError(
      response,
      400,
      'Bad Request',
      "La fuente 'comic-sans' no existe; las disponibles son: caveat, dancing-script, homemade-apple, indie-flower, kalam",
    )
    expect(await app.db.select().from(campaigns).where(eq(campaigns.accountId, account.id))).toHaveLength(before.length)
  })

  it('rejects an example longer than the variable allows', async ({ admin, account }) => {
    const response = await admin.post(
      `/admin/accounts/${account.id}/campaigns`,
      campaignBody(account, { variables: [variables[0], { ...variables[1], example: 'DEMASIADO-LARGO' }] }),
    )
    expectError(response, 400, 'Bad Request', "El campo 'variables[1].example' supera el máximo de 10 caracteres de la variable")
  })

  it('rejects a campaign name of only spaces', async ({ admin, account }) => {
    expectError(
      await admin.post(`/admin/accounts/${account.id}/campaigns`, campaignBody(account, { name: '   ' })),
      400,
      'Bad Request',
      "El campo 'name' no puede estar vacío",
    )
  })

  it('rejects a malformed variable, naming where it is', async ({ admin, account }) => {
    const response = await admin.post(
      `/admin/accounts/${account.id}/campaigns`,
      campaignBody(account, { variables: [{ name: 'nombre', maxSize: 0, defaultValue: null, example: 'x' }] }),
    )
    expectError(response, 400, 'Bad Request', "El campo 'variables[0].maxSize' debe ser mayor o igual que 1")
    const badName = await admin.post(
      `/admin/accounts/${account.id}/campaigns`,
      campaignBody(account, { message: 'x', variables: [{ name: 'mi nombre', maxSize: 5, defaultValue: null, example: 'x' }] }),
    )
    expectError(badName, 400, 'Bad Request', /El nombre de una variable/)
  })

  it('rejects a design or sender of another account as if it did not exist', async ({ gateway: app, admin, account }) => {
    const other = await adminAccount(app)
    for (const [field, message] of [
      ['cardDesignId', "El campo 'cardDesignId' no corresponde a ningún diseño de tarjeta de la cuenta"],
      ['envelopeDesignId', "El campo 'envelopeDesignId' no corresponde a ningún diseño de sobre de la cuenta"],
      ['senderId', "El campo 'senderId' no corresponde a ningún remitente de la cuenta"],
    ] as const) {
      const foreign = await admin.post(`/admin/accounts/${account.id}/campaigns`, campaignBody(account, { [field]: other[field] }))
      expectError(foreign, 400, 'Bad Request', message)
      const unknown = await admin.post(`/admin/accounts/${account.id}/campaigns`, campaignBody(account, { [field]: UNKNOWN_ID }))
      expect(expectError(unknown, 400, 'Bad Request').message).toBe(message)
    }
  })

  it('requires the message and the designs', async ({ admin, account }) => {
    const { message: _, ...withoutMessage } = campaignBody(account)
    expectError(await admin.post(`/admin/accounts/${account.id}/campaigns`, withoutMessage), 400, 'Bad Request', "El campo 'message' es obligatorio")
    expectError(
      await admin.post(`/admin/accounts/${account.id}/campaigns`, campaignBody(account, { senderId: 'abc' })),
      400,
      'Bad Request',
      "El campo 'senderId' debe ser un UUID válido",
    )
    expectError(
      await admin.post(`/admin/accounts/${account.id}/campaigns`, campaignBody(account, { message: 'x'.repeat(1001) })),
      400,
      'Bad Request',
      "El campo 'message' no puede tener más de 1000 caracteres",
    )
  })

  it('answers 404 for an unknown account', async ({ admin, account }) => {
    expectError(await admin.post(`/admin/accounts/${UNKNOWN_ID}/campaigns`, campaignBody(account)), 404, 'Not Found')
  })
})

describe('PATCH /admin/campaigns/{id}', () => {
  it('renames and deactivates a campaign, returning it whole', async ({ admin, account }) => {
    const created = (await admin.post(`/admin/accounts/${account.id}/campaigns`, campaignBody(account))).json<{ id: string }>()
    const response = await admin.patch(`/admin/campaigns/${created.id}`, { active: false, name: 'Otoño (cerrada)' })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ id: created.id, name: 'Otoño (cerrada)', active: false, variables, trackingUrl: null })
    expect((await admin.patch(`/admin/campaigns/${created.id}`, { active: true })).json()).toMatchObject({ active: true, name: 'Otoño (cerrada)' })
  })

  it('rejects an empty change and unknown fields', async ({ admin, account }) => {
    const created = (await admin.post(`/admin/accounts/${account.id}/campaigns`, campaignBody(account))).json<{ id: string }>()
    expectError(await admin.patch(`/admin/campaigns/${created.id}`, {}), 400, 'Bad Request', "Indica al menos uno de los campos 'active' o 'name'")
    expectError(await admin.patch(`/admin/campaigns/${created.id}`, { message: 'x' }), 400, 'Bad Request', "El campo 'message' no está permitido")
    expectError(await admin.patch(`/admin/campaigns/${created.id}`, { active: 'yes' }), 400, 'Bad Request', "El campo 'active' debe ser true o false")
    expectError(await admin.patch(`/admin/campaigns/${created.id}`, { name: '  ' }), 400, 'Bad Request', "El campo 'name' no puede estar vacío")
    expect((await admin.patch(`/admin/campaigns/${created.id}`, { active: true })).json()).toMatchObject({ name: 'Otoño' })
  })

  it('answers 404 for an unknown campaign', async ({ admin }) => {
    expectError(await admin.patch(`/admin/campaigns/${UNKNOWN_ID}`, { active: false }), 404, 'Not Found', 'La campaña no existe')
  })
})
