import { describe, expect } from 'vitest'
import { eq } from 'drizzle-orm'
import { letters } from '@letters/db'
import type { App } from '../src/app.js'
import { UNKNOWN_ID, adminAccount, adminCampaign, expectError, publicClient, spanishRecipient } from './helpers.js'
import { it } from '@letters/test/support/fixtures'
import { christmasCampaign } from '@letters/test/support/factories'
import { expectLedgerMatchesLetters, moneyState } from '@letters/test/support/ledger'

let app: App
let account: Awaited<ReturnType<typeof adminAccount>>
let client: ReturnType<typeof publicClient>
let campaignId: string
let inactiveCampaignId: string
let foreignCampaignId: string

/** "¡Feliz Navidad, {{nombre}}! Usa {{cupon}} antes del 6 de enero.", nombre at most 10 characters. */
const newCampaign = (owner: typeof account, overrides: Record<string, unknown> = {}) => adminCampaign(app, owner, { ...christmasCampaign, ...overrides })

it.beforeAll(async ({ gateway }) => {
  app = gateway
  account = await adminAccount(app, 1000)
  client = publicClient(app, account.apiKey)
  campaignId = await newCampaign(account)
  inactiveCampaignId = await newCampaign(account, { active: false })
  const other = await adminAccount(app, 10)
  foreignCampaignId = await newCampaign(other)
})

const cardBody = (overrides: Record<string, unknown> = {}) => ({
  campaignId,
  ...spanishRecipient,
  variables: { nombre: 'Lucía', cupon: 'NAV25' },
  ...overrides,
})

describe('POST /card', () => {
  it("fills the campaign's template and takes its designs, sender and font", async () => {
    const response = await client.post('/card', cardBody())
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ success: true, cardId: expect.any(String) })
    const [letter] = await app.db.select().from(letters).where(eq(letters.id, response.json<{ cardId: string }>().cardId))
    expect(letter).toMatchObject({
      type: 'campaign',
      campaignId,
      cardDesignId: account.cardDesignId,
      envelopeDesignId: account.envelopeDesignId,
      senderId: account.senderId,
      fontName: 'dancing-script',
      message: '¡Feliz Navidad, Lucía! Usa NAV25 antes del 6 de enero.',
      status: 'received',
      cost: 3,
    })
    await expectLedgerMatchesLetters(app.db, account.id)
  })

  it('uses the default of a variable left out, and charges 5 abroad', async () => {
    const before = (await moneyState(app.db, account.id)).balance
    const response = await client.post('/card', cardBody({ variables: { cupon: 'NAV25' }, zip: '1010', city: 'Wien', province: '', country: 'AT' }))
    expect(response.statusCode).toBe(200)
    const [letter] = await app.db.select().from(letters).where(eq(letters.id, response.json<{ cardId: string }>().cardId))
    expect(letter?.message).toBe('¡Feliz Navidad, amigo! Usa NAV25 antes del 6 de enero.')
    expect((await moneyState(app.db, account.id)).balance).toBe(before - 5)
  })

  it('fills variables whose names are also names of object properties', async () => {
    const campaign = await newCampaign(account, {
      message: '{{constructor}} y {{toString}}',
      variables: [
        { name: 'constructor', maxSize: 10, defaultValue: 'amigo', example: 'Ana' },
        { name: 'toString', maxSize: 10, defaultValue: null, example: 'x' },
      ],
    })
    expectError(
      await client.post('/card', cardBody({ campaignId: campaign, variables: {} })),
      400,
      'Bad Request',
      "Falta la variable 'toString', que no tiene valor por defecto",
    )
    const response = await client.post('/card', cardBody({ campaignId: campaign, variables: { toString: 'hola' } }))
    expect(response.statusCode).toBe(200)
    const [letter] = await app.db.select().from(letters).where(eq(letters.id, response.json<{ cardId: string }>().cardId))
    expect(letter?.message).toBe('amigo y hola')
  })

  it('counts a variable’s size in characters, not bytes', async () => {
    expect((await client.post('/card', cardBody({ variables: { nombre: 'Ñoño Óscar', cupon: 'X' } }))).statusCode).toBe(200)
  })
})

describe('POST /card rejects bad input with 400 and charges nothing', () => {
  const cases: Array<[string, () => unknown, string | RegExp]> = [
    ['a missing address', () => ({ ...cardBody(), address: undefined }), "El campo 'address' es obligatorio"],
    ['a missing campaignId', () => ({ ...cardBody(), campaignId: undefined }), "El campo 'campaignId' es obligatorio"],
    ['an unknown campaign', () => cardBody({ campaignId: UNKNOWN_ID }), "El campo 'campaignId' no corresponde a ninguna campaña de la cuenta"],
    ["another account's campaign", () => cardBody({ campaignId: foreignCampaignId }), "El campo 'campaignId' no corresponde a ninguna campaña de la cuenta"],
    ['an inactive campaign', () => cardBody({ campaignId: inactiveCampaignId }), 'La campaña no está activa'],
    [
      'an unknown variable',
      () => cardBody({ variables: { nombre: 'Ana', cupon: 'X', ciudad: 'Soria' } }),
      "La variable 'ciudad' no existe en la campaña; sus variables son: nombre, cupon",
    ],
    [
      'a variable over its maxSize',
      () => cardBody({ variables: { nombre: 'Maximiliano Alejandro', cupon: 'X' } }),
      "La variable 'nombre' no puede tener más de 10 caracteres",
    ],
    ['a missing variable without default', () => cardBody({ variables: { nombre: 'Ana' } }), "Falta la variable 'cupon', que no tiene valor por defecto"],
    ['no variables when one has no default', () => ({ ...cardBody(), variables: undefined }), "Falta la variable 'cupon', que no tiene valor por defecto"],
    ['a variable that is not text', () => cardBody({ variables: { nombre: 7, cupon: 'X' } }), "El campo 'variables.nombre' debe ser un texto"],
    ['variables that are not an object', () => cardBody({ variables: ['Ana'] }), "El campo 'variables' debe ser un objeto cuyos valores sean textos"],
    ['a bad zip', () => cardBody({ zip: 'ABCDE' }), "El campo 'zip' ('ABCDE') no es un código postal válido para ES"],
    ['an unknown field', () => cardBody({ message: 'otro texto' }), "El campo 'message' no está permitido"],
    [
      'a variable the campaign’s font cannot write',
      () => cardBody({ variables: { nombre: 'Ana 🎄', cupon: 'X' } }),
      /^El mensaje de la campaña, con sus variables, contiene caracteres que la letra '[a-z-]+' no puede escribir: 🎄$/,
    ],
  ]

  it.each(cases)('%s', async (_name, body, message) => {
    const before = await moneyState(app.db, account.id)
    expectError(await client.post('/card', body()), 400, 'Bad Request', message)
    const after = await moneyState(app.db, account.id)
    expect(after.balance).toBe(before.balance)
    expect(after.letters).toHaveLength(before.letters.length)
  })

  it('answers 401 without a key', async () => {
    expectError(await app.inject({ method: 'POST', url: '/card', payload: cardBody() }), 401, 'Unauthorized')
  })

  it('answers 402 when the credits do not cover the letter, and stores nothing', async () => {
    const poor = await adminAccount(app, 2)
    const poorCampaign = await newCampaign(poor)
    const response = await publicClient(app, poor.apiKey).post('/card', cardBody({ campaignId: poorCampaign }))
    expectError(response, 402, 'Payment Required', /Créditos insuficientes/)
    const state = await moneyState(app.db, poor.id)
    expect(state).toMatchObject({ balance: 2, letters: [], charges: [], jobs: [] })
  })
})
