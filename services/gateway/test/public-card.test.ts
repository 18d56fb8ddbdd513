import { describe, expect } from 'vitest'
import { eq } from 'drizzle-orm'
import { letters } from '@letters/db'
import type { App } from '../src/app.js'
import { UNKNOWN_ID, adminAccount, adminCampaign, expectError, publicClient, spanishRecipient } from './helpers.js'
import { it as base } from '@letters/test/support/fixtures'
import type { Account } from '@letters/test/support/gateway'
import { christmasCampaign } from '@letters/test/support/factories'
import { expectLedgerMatchesLetters, moneyState } from '@letters/test/support/ledger'

/** "¡Feliz Navidad, {{nombre}}! Usa {{cupon}} antes del 6 de enero.", nombre at most 10 characters. */
const newCampaign = (app: App, owner: Account, overrides: Record<string, unknown> = {}) => adminCampaign(app, owner, { ...christmasCampaign, ...overrides })

const it = base
  /** An inactive campaign of the test's account. */
  .extend('inactiveCampaignId', ({ gateway, account }) => newCampaign(gateway, account, { active: false }))
  /** A campaign of another account. */
  .extend('foreignCampaignId', { scope: 'file' }, async ({ gateway }) => newCampaign(gateway, await adminAccount(gateway, 10)))

// Each test's account (the fixture's) has 1000 credits and that campaign (`campaign`).
it.override({ accountCredits: 1000, campaignOverrides: christmasCampaign })

const cardBody = (campaignId: string, overrides: Record<string, unknown> = {}) => ({
  campaignId,
  ...spanishRecipient,
  variables: { nombre: 'Lucía', cupon: 'NAV25' },
  ...overrides,
})

describe('POST /card', () => {
  it("fills the campaign's template and takes its designs, sender and font", async ({ gateway: app, account, client, campaign: campaignId }) => {
    const response = await client.post('/card', cardBody(campaignId))
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

  it('uses the default of a variable left out, and charges 5 abroad', async ({ gateway: app, account, client, campaign }) => {
    const before = (await moneyState(app.db, account.id)).balance
    const response = await client.post('/card', cardBody(campaign, { variables: { cupon: 'NAV25' }, zip: '1010', city: 'Wien', province: '', country: 'AT' }))
    expect(response.statusCode).toBe(200)
    const [letter] = await app.db.select().from(letters).where(eq(letters.id, response.json<{ cardId: string }>().cardId))
    expect(letter?.message).toBe('¡Feliz Navidad, amigo! Usa NAV25 antes del 6 de enero.')
    expect((await moneyState(app.db, account.id)).balance).toBe(before - 5)
  })

  it('fills variables whose names are also names of object properties', async ({ gateway: app, account, client }) => {
    const campaign = await newCampaign(app, account, {
      message: '{{constructor}} y {{toString}}',
      variables: [
        { name: 'constructor', maxSize: 10, defaultValue: 'amigo', example: 'Ana' },
        { name: 'toString', maxSize: 10, defaultValue: null, example: 'x' },
      ],
    })
    expectError(
      await client.post('/card', cardBody(campaign, { variables: {} })),
      400,
      'Bad Request',
      "Falta la variable 'toString', que no tiene valor por defecto",
    )
    const response = await client.post('/card', cardBody(campaign, { variables: { toString: 'hola' } }))
    expect(response.statusCode).toBe(200)
    const [letter] = await app.db.select().from(letters).where(eq(letters.id, response.json<{ cardId: string }>().cardId))
    expect(letter?.message).toBe('amigo y hola')
  })

  it('counts a variable’s size in characters, not bytes', async ({ client, campaign }) => {
    expect((await client.post('/card', cardBody(campaign, { variables: { nombre: 'Ñoño Óscar', cupon: 'X' } }))).statusCode).toBe(200)
  })
})

describe('POST /card rejects bad input with 400 and charges nothing', () => {
  type Campaigns = { campaign: string; inactiveCampaignId: string; foreignCampaignId: string }
  const cases: Array<[string, (ids: Campaigns) => unknown, string | RegExp]> = [
    ['a missing address', ({ campaign }) => ({ ...cardBody(campaign), address: undefined }), "El campo 'address' es obligatorio"],
    ['a missing campaignId', ({ campaign }) => ({ ...cardBody(campaign), campaignId: undefined }), "El campo 'campaignId' es obligatorio"],
    ['an unknown campaign', () => cardBody(UNKNOWN_ID), "El campo 'campaignId' no corresponde a ninguna campaña de la cuenta"],
    [
      "another account's campaign",
      ({ foreignCampaignId }) => cardBody(foreignCampaignId),
      "El campo 'campaignId' no corresponde a ninguna campaña de la cuenta",
    ],
    ['an inactive campaign', ({ inactiveCampaignId }) => cardBody(inactiveCampaignId), 'La campaña no está activa'],
    [
      'an unknown variable',
      ({ campaign }) => cardBody(campaign, { variables: { nombre: 'Ana', cupon: 'X', ciudad: 'Soria' } }),
      "La variable 'ciudad' no existe en la campaña; sus variables son: nombre, cupon",
    ],
    [
      'a variable over its maxSize',
      ({ campaign }) => cardBody(campaign, { variables: { nombre: 'Maximiliano Alejandro', cupon: 'X' } }),
      "La variable 'nombre' no puede tener más de 10 caracteres",
    ],
    [
      'a missing variable without default',
      ({ campaign }) => cardBody(campaign, { variables: { nombre: 'Ana' } }),
      "Falta la variable 'cupon', que no tiene valor por defecto",
    ],
    [
      'no variables when one has no default',
      ({ campaign }) => ({ ...cardBody(campaign), variables: undefined }),
      "Falta la variable 'cupon', que no tiene valor por defecto",
    ],
    [
      'a variable that is not text',
      ({ campaign }) => cardBody(campaign, { variables: { nombre: 7, cupon: 'X' } }),
      "El campo 'variables.nombre' debe ser un texto",
    ],
    [
      'variables that are not an object',
      ({ campaign }) => cardBody(campaign, { variables: ['Ana'] }),
      "El campo 'variables' debe ser un objeto cuyos valores sean textos",
    ],
    ['a bad zip', ({ campaign }) => cardBody(campaign, { zip: 'ABCDE' }), "El campo 'zip' ('ABCDE') no es un código postal válido para ES"],
    ['an unknown field', ({ campaign }) => cardBody(campaign, { message: 'otro texto' }), "El campo 'message' no está permitido"],
    [
      'a variable the campaign’s font cannot write',
      ({ campaign }) => cardBody(campaign, { variables: { nombre: 'Ana 🎄', cupon: 'X' } }),
      /^El mensaje de la campaña, con sus variables, contiene caracteres que la letra '[a-z-]+' no puede escribir: 🎄$/,
    ],
  ]

  it.for(cases)('%s', async ([_name, body, message], { gateway: app, account, client, campaign, inactiveCampaignId, foreignCampaignId }) => {
    const before = await moneyState(app.db, account.id)
    expectError(await client.post('/card', body({ campaign, inactiveCampaignId, foreignCampaignId })), 400, 'Bad Request', message)
    const after = await moneyState(app.db, account.id)
    expect(after.balance).toBe(before.balance)
    expect(after.letters).toHaveLength(before.letters.length)
  })

  it('answers 401 without a key', async ({ gateway: app, campaign }) => {
    expectError(await app.inject({ method: 'POST', url: '/card', payload: cardBody(campaign) }), 401, 'Unauthorized')
  })

  it('answers 402 when the credits do not cover the letter, and stores nothing', async ({ gateway: app }) => {
    const poor = await adminAccount(app, 2)
    const poorCampaign = await newCampaign(app, poor)
    const response = await publicClient(app, poor.apiKey).post('/card', cardBody(poorCampaign))
    expectError(response, 402, 'Payment Required', /Créditos insuficientes/)
    const state = await moneyState(app.db, poor.id)
    expect(state).toMatchObject({ balance: 2, letters: [], charges: [], jobs: [] })
  })
})
