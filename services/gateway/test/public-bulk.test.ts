import { describe, expect } from 'vitest'
import { inArray, sql } from 'drizzle-orm'
import { letters } from '@letters/db'
import type { App } from '../src/app.js'
import { UNKNOWN_ID, adminAccount, adminClient, expectError, publicClient } from './helpers.js'
import { bulkCampaign, bulkRecipient as recipient, type BulkAnswer } from './bulk-fixtures.js'
import { it as base } from '@letters/test/support/fixtures'
import { expectLedgerMatchesLetters, moneyState } from '@letters/test/support/ledger'

/** An account with `credits` and an active bulk campaign (nombre ≤ 10 characters with a default, cupon ≤ 8 without). */
async function accountWithCampaign(app: App, credits: number) {
  const account = await adminAccount(app, credits)
  return { account, client: publicClient(app, account.apiKey), campaignId: await bulkCampaign(app, account) }
}

/**
 * The account of the requests refused as a whole: 100 credits and an active campaign, an inactive
 * campaign of its own (`inactiveCampaignId`) and another account's (`foreignCampaignId`).
 */
async function customerWithCampaigns(app: App) {
  const customer = await accountWithCampaign(app, 100)
  return {
    ...customer,
    inactiveCampaignId: await bulkCampaign(app, customer.account, { active: false }),
    foreignCampaignId: await bulkCampaign(app, await adminAccount(app, 100)),
  }
}

type Customer = Awaited<ReturnType<typeof customerWithCampaigns>>

/** What the account's letters were made of, by id. */
async function lettersById(app: App, ids: string[]) {
  const rows = await app.db.select().from(letters).where(inArray(letters.id, ids))
  return new Map(rows.map((row) => [row.id, row]))
}

const it = base.extend('customer', ({ gateway }) => customerWithCampaigns(gateway))
it.override({ gatewayOptions: { env: { RATE_LIMIT_MAX: '1000' } } })

describe('POST /cards/bulk with a JSON body', () => {
  it('creates a letter per recipient in one order: ids in input order, one charge each, the variables filled in', async ({ gateway: app }) => {
    const { account, client, campaignId } = await accountWithCampaign(app, 100)
    const recipients = [
      recipient({ name: 'Ana' }),
      recipient({ name: 'Bea', variables: { cupon: 'B2' }, company: 'Ferretería Bea' }),
      recipient({ name: 'Carl', zip: '1010', city: 'Wien', province: '', country: 'at' }),
    ]
    const response = await client.post('/cards/bulk', { campaignId, recipients })
    expect(response.statusCode, response.body).toBe(200)
    const body = response.json<BulkAnswer>()
    expect(body).toEqual({ created: 3, cost: 11, cardIds: [expect.any(String), expect.any(String), expect.any(String)], errors: [] })
    const stored = await lettersById(app, body.cardIds as string[])
    expect(body.cardIds.map((id) => stored.get(id!)?.recipient.name)).toEqual(['Ana', 'Bea', 'Carl'])
    expect(body.cardIds.map((id) => stored.get(id!)?.message)).toEqual([
      '¡Feliz Navidad, Lucía! Usa NAV25 antes del 6 de enero.',
      '¡Feliz Navidad, amigo! Usa B2 antes del 6 de enero.',
      '¡Feliz Navidad, Lucía! Usa NAV25 antes del 6 de enero.',
    ])
    expect(stored.get(body.cardIds[1]!)).toMatchObject({
      type: 'campaign',
      campaignId,
      fontName: 'dancing-script',
      cost: 3,
      recipient: { company: 'Ferretería Bea' },
    })
    expect(stored.get(body.cardIds[2]!)).toMatchObject({ cost: 5, recipient: { country: 'AT' } })
    const state = await expectLedgerMatchesLetters(app.db, account.id)
    expect(state).toMatchObject({ balance: 100 - 3 - 3 - 5 })
    expect(state.charges).toHaveLength(3)
  })

  it('lists each invalid recipient with its index and the 400 a POST /card with it gets, and creates the valid ones', async ({ gateway: app }) => {
    const { account, client, campaignId } = await accountWithCampaign(app, 100)
    const invalid: Record<number, Record<string, unknown>> = {
      1: recipient({ zip: 'ABCDE' }),
      2: { ...recipient(), address: undefined },
      4: recipient({ variables: { nombre: 'Maximiliano Alejandro', cupon: 'X' } }),
      5: recipient({ variables: { cupon: 'X', ciudad: 'Soria' } }),
      6: recipient({ variables: { nombre: 'Ana' } }),
      7: recipient({ surname: '   ' }),
      8: recipient({ message: 'Otro texto' }),
      9: recipient({ name: 'Ana 🎄' }),
    }
    const recipients = Array.from({ length: 11 }, (_, index) => invalid[index] ?? recipient({ name: `Válido ${index}` }))
    const response = await client.post('/cards/bulk', { campaignId, recipients })
    expect(response.statusCode, response.body).toBe(200)
    const body = response.json<BulkAnswer>()
    expect(body.created).toBe(3)
    expect(body.cardIds.map((id) => id !== null)).toEqual([true, false, false, true, false, false, false, false, false, false, true])

    // The very answer POST /card gives for the same recipient (which charges nothing).
    const singleAnswers = await Promise.all(
      Object.values(invalid).map(async (fields) => {
        const single = await client.post('/card', { campaignId, ...fields })
        expect(single.statusCode).toBe(400)
        return { error: single.json<{ error: string }>().error, message: single.json<{ message: string }>().message }
      }),
    )
    expect(body.errors).toEqual(Object.keys(invalid).map((index, n) => ({ index: Number(index), ...singleAnswers[n] })))
    expect(body.errors.map((entry) => entry.message)).toEqual([
      "El campo 'zip' ('ABCDE') no es un código postal válido para ES",
      "El campo 'address' es obligatorio",
      "La variable 'nombre' no puede tener más de 10 caracteres",
      "La variable 'ciudad' no existe en la campaña; sus variables son: nombre, cupon",
      "Falta la variable 'cupon', que no tiene valor por defecto",
      "El campo 'surname' no puede estar vacío",
      "El campo 'message' no está permitido",
      expect.stringMatching(/^El campo 'name' contiene caracteres que la letra 'dancing-script' no puede escribir: 🎄$/),
    ])
    const state = await expectLedgerMatchesLetters(app.db, account.id)
    expect(state.letters.map((letter) => letter.id).sort()).toEqual(body.cardIds.filter((id) => id !== null).sort())
    expect(state.balance).toBe(91)
  })

  it('answers a recipient that is not an object in its own entry', async ({ gateway: app }) => {
    const { client, campaignId } = await accountWithCampaign(app, 100)
    const response = await client.post('/cards/bulk', { campaignId, recipients: [recipient(), 'Lucía', null] })
    expect(response.json<BulkAnswer>()).toMatchObject({
      created: 1,
      errors: [
        { index: 1, error: 'Bad Request', message: 'Cada destinatario debe ser un objeto JSON' },
        { index: 2, error: 'Bad Request', message: 'Cada destinatario debe ser un objeto JSON' },
      ],
    })
  })

  it('creates and charges nothing when every recipient is invalid, and says why for each', async ({ gateway: app }) => {
    const { account, client, campaignId } = await accountWithCampaign(app, 100)
    const response = await client.post('/cards/bulk', { campaignId, recipients: [recipient({ country: 'XX' }), recipient({ zip: '' })] })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({
      created: 0,
      cost: 0,
      cardIds: [null, null],
      errors: [
        { index: 0, error: 'Bad Request', message: "'country' debe ser un código ISO 3166-1 alfa-2 asignado, como ES o FR" },
        { index: 1, error: 'Bad Request', message: "El campo 'zip' debe ser un texto no vacío (el código postal, entre comillas)" },
      ],
    })
    expect(await moneyState(app.db, account.id)).toMatchObject({ balance: 100, letters: [], entries: [{ kind: 'top_up' }] })
  })

  it('answers 402, creating and charging nothing, when the balance cannot pay for every valid recipient', async ({ gateway: app }) => {
    const { account, client, campaignId } = await accountWithCampaign(app, 10)
    // 3 + 3 + 5 = 11 credits for the valid ones; the invalid one would cost nothing.
    const recipients = [recipient(), recipient(), recipient({ zip: 'nope' }), recipient({ zip: '1010', city: 'Wien', country: 'AT' })]
    const response = await client.post('/cards/bulk', { campaignId, recipients })
    expectError(response, 402, 'Payment Required', 'Créditos insuficientes: las 3 cartas cuestan 11 créditos y el saldo de la cuenta es 10')
    const state = await expectLedgerMatchesLetters(app.db, account.id)
    expect(state).toMatchObject({ balance: 10, letters: [], charges: [], jobs: [] })
  })

  it('creates 1,000 recipients in one request, each with its own charge', async ({ gateway: app }) => {
    const { account, client, campaignId } = await accountWithCampaign(app, 3000)
    const recipients = Array.from({ length: 1000 }, (_, index) => recipient({ name: `Cliente ${index}`, variables: { cupon: `C${index}` } }))
    const response = await client.post('/cards/bulk', { campaignId, recipients })
    expect(response.statusCode, response.body).toBe(200)
    const body = response.json<BulkAnswer>()
    expect(body.created).toBe(1000)
    const stored = await lettersById(app, body.cardIds as string[])
    expect(body.cardIds.map((id) => stored.get(id!)?.recipient.name)).toEqual(recipients.map((r) => r.name))
    const state = await expectLedgerMatchesLetters(app.db, account.id)
    expect(state).toMatchObject({ balance: 0 })
    expect(state.charges).toHaveLength(1000)
  })

  it('answers 413 in Spanish for more than 1,000 recipients, naming the limit and the count, and creates nothing', async ({ gateway: app }) => {
    const { account, client, campaignId } = await accountWithCampaign(app, 10_000)
    const response = await client.post('/cards/bulk', { campaignId, recipients: Array.from({ length: 1001 }, () => recipient()) })
    expectError(response, 413, 'Payload Too Large', 'Una petición admite como máximo 1000 destinatarios y esta trae 1001; repártelos en varias peticiones')
    expect(await moneyState(app.db, account.id)).toMatchObject({ balance: 10_000, letters: [] })
  })
})

describe('POST /cards/bulk refuses a bad request as a whole, charging nothing', () => {
  const cases: Array<[string, (customer: Customer) => unknown, string]> = [
    [
      'an unknown campaign',
      () => ({ campaignId: UNKNOWN_ID, recipients: [recipient()] }),
      "El campo 'campaignId' no corresponde a ninguna campaña de la cuenta",
    ],
    [
      "another account's campaign",
      ({ foreignCampaignId }) => ({ campaignId: foreignCampaignId, recipients: [recipient()] }),
      "El campo 'campaignId' no corresponde a ninguna campaña de la cuenta",
    ],
    ['an inactive campaign', ({ inactiveCampaignId }) => ({ campaignId: inactiveCampaignId, recipients: [recipient()] }), 'La campaña no está activa'],
    ['a missing campaignId', () => ({ recipients: [recipient()] }), "El campo 'campaignId' es obligatorio"],
    ['a campaignId that is not a UUID', () => ({ campaignId: 'navidad', recipients: [recipient()] }), "El campo 'campaignId' debe ser un UUID válido"],
    ['no recipients', ({ campaignId }) => ({ campaignId, recipients: [] }), "El campo 'recipients' debe ser una lista de 1 a 1000 destinatarios"],
    [
      'recipients that are not a list',
      ({ campaignId }) => ({ campaignId, recipients: recipient() }),
      "El campo 'recipients' debe ser una lista de 1 a 1000 destinatarios",
    ],
    ['a missing recipients list', ({ campaignId }) => ({ campaignId }), "El campo 'recipients' es obligatorio"],
    ['an unknown field', ({ campaignId }) => ({ campaignId, recipients: [recipient()], message: 'Hola' }), "El campo 'message' no está permitido"],
  ]

  it.for(cases)('%s', async ([_name, body, message], { gateway: app, customer }) => {
    expectError(await customer.client.post('/cards/bulk', body(customer)), 400, 'Bad Request', message)
    expect(await moneyState(app.db, customer.account.id)).toMatchObject({ balance: 100, letters: [] })
  })

  it('refuses a campaignId in the URL of a JSON request', async ({ customer }) => {
    const response = await customer.client.post(`/cards/bulk?campaignId=${customer.campaignId}`, { campaignId: customer.campaignId, recipients: [recipient()] })
    expectError(response, 400, 'Bad Request', "Con un cuerpo JSON, 'campaignId' va en el cuerpo, no en la URL")
  })

  it('refuses an unknown query parameter', async ({ customer }) => {
    expectError(
      await customer.client.post('/cards/bulk?simular=1', { campaignId: customer.campaignId, recipients: [recipient()] }),
      400,
      'Bad Request',
      "El parámetro 'simular' no está permitido",
    )
  })

  it('answers 401 without a key, and with an unknown one', async ({ gateway: app, customer }) => {
    const body = { campaignId: customer.campaignId, recipients: [recipient()] }
    expectError(await app.inject({ method: 'POST', url: '/cards/bulk', payload: body }), 401, 'Unauthorized')
    expectError(await publicClient(app, 'lk_live_unknown').post('/cards/bulk', body), 401, 'Unauthorized')
  })

  it.for(['text/plain', 'application/xml', 'application/x-www-form-urlencoded'])(
    'answers 415 to a %s body, naming JSON and CSV',
    async (type, { customer }) => {
      const response = await customer.client.post('/cards/bulk', 'campaignId=x', { 'content-type': type })
      expectError(response, 415, 'Unsupported Media Type', 'El tipo de contenido no está admitido: envía Content-Type: application/json o text/csv')
    },
  )

  it('answers 400 to a request without a body', async ({ gateway: app, customer }) => {
    const response = await app.inject({ method: 'POST', url: '/cards/bulk', headers: { 'x-api-key': customer.account.apiKey } })
    expectError(response, 400, 'Bad Request', /está vacío/)
  })

  it('takes a body far above the 64 KiB of other routes, and refuses one above its own limit with 413', async ({ customer }) => {
    const long = 'x'.repeat(9 * 1024 * 1024)
    const response = await customer.client.post(
      '/cards/bulk',
      JSON.stringify({ campaignId: customer.campaignId, recipients: [recipient({ address: long })] }),
      {
        'content-type': 'application/json',
      },
    )
    expectError(response, 413, 'Payload Too Large', 'El cuerpo de la petición es demasiado grande')
    // Still the 64 KiB limit elsewhere.
    expectError(
      await customer.client.post('/card', { campaignId: customer.campaignId, ...recipient({ address: 'x'.repeat(70 * 1024) }) }),
      413,
      'Payload Too Large',
    )
  })
})

describe('Idempotency-Key on POST /cards/bulk', () => {
  it('replays the stored 200 for a retry and charges once', async ({ gateway: app }) => {
    const { account, client, campaignId } = await accountWithCampaign(app, 100)
    const body = { campaignId, recipients: [recipient(), recipient({ zip: 'nope' }), recipient({ name: 'Otra' })] }
    const first = await client.post('/cards/bulk', body, { 'idempotency-key': 'lote-1' })
    const retry = await client.post('/cards/bulk', body, { 'idempotency-key': 'lote-1' })
    expect(first.statusCode).toBe(200)
    expect(first.headers['idempotent-replayed']).toBeUndefined()
    expect(retry.statusCode).toBe(200)
    expect(retry.headers['idempotent-replayed']).toBe('true')
    expect(retry.json()).toEqual(first.json())
    const state = await expectLedgerMatchesLetters(app.db, account.id)
    expect(state).toMatchObject({ balance: 94 })
    expect(state.letters).toHaveLength(2)
  })

  it('replays the answer even after the campaign was deactivated, instead of refusing the retry', async ({ gateway: app }) => {
    const { account, client, campaignId } = await accountWithCampaign(app, 100)
    const body = { campaignId, recipients: [recipient()] }
    const first = await client.post('/cards/bulk', body, { 'idempotency-key': 'lote-desactivado' })
    expect(first.statusCode).toBe(200)
    const deactivated = await adminClient(app).patch(`/admin/campaigns/${campaignId}`, { active: false })
    expect(deactivated.statusCode, deactivated.body).toBe(200)
    const retry = await client.post('/cards/bulk', body, { 'idempotency-key': 'lote-desactivado' })
    expect(retry.headers['idempotent-replayed']).toBe('true')
    expect(retry.json()).toEqual(first.json())
    expectError(await client.post('/cards/bulk', body), 400, 'Bad Request', 'La campaña no está activa')
    expect((await expectLedgerMatchesLetters(app.db, account.id)).letters).toHaveLength(1)
  })

  it('answers 422 for the same key with other recipients, and charges nothing more', async ({ gateway: app }) => {
    const { account, client, campaignId } = await accountWithCampaign(app, 100)
    await client.post('/cards/bulk', { campaignId, recipients: [recipient()] }, { 'idempotency-key': 'lote-422' })
    const response = await client.post('/cards/bulk', { campaignId, recipients: [recipient({ name: 'Marta' })] }, { 'idempotency-key': 'lote-422' })
    expectError(response, 422, 'Unprocessable Entity', /ya se usó con una petición distinta/)
    expect((await moneyState(app.db, account.id)).balance).toBe(97)
  })

  it('keeps nothing under the key of a request that created nothing (402, or every recipient invalid): the key stays free', async ({ gateway: app }) => {
    const { account, client, campaignId } = await accountWithCampaign(app, 2)
    const body = { campaignId, recipients: [recipient()] }
    expectError(
      await client.post('/cards/bulk', body, { 'idempotency-key': 'lote-libre' }),
      402,
      'Payment Required',
      'Créditos insuficientes: la carta cuesta 3 créditos y el saldo de la cuenta es 2',
    )
    const none = await client.post('/cards/bulk', { campaignId, recipients: [recipient({ zip: 'nope' })] }, { 'idempotency-key': 'lote-libre' })
    expect(none.json()).toMatchObject({ created: 0 })
    expect(none.headers['idempotent-replayed']).toBeUndefined()
    await adminClient(app).post(`/admin/accounts/${account.id}/credits`, { amount: 10 })
    const paid = await client.post('/cards/bulk', body, { 'idempotency-key': 'lote-libre' })
    expect(paid.statusCode).toBe(200)
    expect(paid.headers['idempotent-replayed']).toBeUndefined()
    expect((await expectLedgerMatchesLetters(app.db, account.id)).balance).toBe(9)
  })

  it('treats the same body with its keys in another order as the same request', async ({ gateway: app }) => {
    const { client, campaignId } = await accountWithCampaign(app, 100)
    const body = { campaignId, recipients: [recipient()] }
    await client.post('/cards/bulk', body, { 'idempotency-key': 'lote-orden' })
    const reversed = { recipients: [Object.fromEntries(Object.entries(recipient()).reverse())], campaignId }
    expect((await client.post('/cards/bulk', reversed, { 'idempotency-key': 'lote-orden' })).headers['idempotent-replayed']).toBe('true')
  })
})

describe('scheduled and test-mode bulk requests', () => {
  it('schedules every letter of a request with sendAt: charged now, each scheduled for that time, none queued yet', async ({ gateway: app }) => {
    const { account, client, campaignId } = await accountWithCampaign(app, 100)
    const sendAt = new Date(Date.now() + 2 * 86_400_000)
    const response = await client.post('/cards/bulk', {
      campaignId,
      sendAt: sendAt.toISOString(),
      recipients: [recipient(), recipient({ zip: 'nope' }), recipient({ name: 'Otra' })],
    })
    expect(response.statusCode, response.body).toBe(200)
    const body = response.json<BulkAnswer>()
    expect(body.created).toBe(2)
    const stored = [
      ...(
        await lettersById(
          app,
          body.cardIds.filter((id): id is string => id !== null),
        )
      ).values(),
    ]
    expect(stored.map((letter) => [letter.status, letter.sendAt?.toISOString()])).toEqual([
      ['scheduled', sendAt.toISOString()],
      ['scheduled', sendAt.toISOString()],
    ])
    const state = await expectLedgerMatchesLetters(app.db, account.id)
    expect(state).toMatchObject({ balance: 94, jobs: [] })
  })

  it.for([
    ['not a date', 'mañana', /no es una fecha y hora válida con zona horaria$/],
    ['without a time zone', '2030-01-01T10:00:00', /no es una fecha y hora válida con zona horaria$/],
    ['in the past', '2020-01-01T10:00:00Z', /'2020-01-01T10:00:00Z' ya ha pasado$/],
    // Only a query's space before the offset can be a + the URL turned into one; a JSON string keeps its +.
    [
      'with a space for the offset sign',
      `${new Date(Date.now() + 86_400_000).toISOString().slice(0, 19)} 01:00`,
      /no es una fecha y hora válida con zona horaria$/,
    ],
  ] as const)('refuses the whole request for a sendAt %s, creating nothing', async ([_name, sendAt, message], { gateway: app }) => {
    const { account, client, campaignId } = await accountWithCampaign(app, 100)
    expectError(await client.post('/cards/bulk', { campaignId, sendAt, recipients: [recipient()] }), 400, 'Bad Request', message)
    expect(await moneyState(app.db, account.id)).toMatchObject({ balance: 100, letters: [] })
  })

  it("creates a test key's letters as a live key's, charging nothing, and still refuses what the balance could not pay", async ({ gateway: app }) => {
    const { account, campaignId } = await accountWithCampaign(app, 6)
    const issued = await adminClient(app).post(`/admin/accounts/${account.id}/api-keys`, { mode: 'test' })
    expect(issued.statusCode, issued.body).toBe(201)
    const testClient = publicClient(app, issued.json<{ apiKey: string }>().apiKey)
    const response = await testClient.post('/cards/bulk', { campaignId, recipients: [recipient(), recipient({ zip: 'nope' }), recipient()] })
    expect(response.statusCode, response.body).toBe(200)
    const body = response.json<BulkAnswer>()
    expect(body).toMatchObject({ created: 2, errors: [{ index: 1 }] })
    const state = await expectLedgerMatchesLetters(app.db, account.id)
    expect(state).toMatchObject({ balance: 6, charges: [] })
    expect(state.letters.map((letter) => letter.livemode)).toEqual([false, false])
    expectError(
      await testClient.post('/cards/bulk', { campaignId, recipients: [recipient(), recipient(), recipient()] }),
      402,
      'Payment Required',
      'Créditos insuficientes: las 3 cartas cuestan 9 créditos y el saldo de la cuenta es 6',
    )
    expect((await moneyState(app.db, account.id)).letters).toHaveLength(2)
  })
})

describe('variable names that are JavaScript object properties', () => {
  it('__proto__ is refused when a campaign is made (no JSON body could fill it)', async ({ gateway: app }) => {
    const { account } = await accountWithCampaign(app, 100)
    for (const name of ['__proto__']) {
      const response = await adminClient(app).post(`/admin/accounts/${account.id}/campaigns`, {
        name: 'Reservada',
        cardDesignId: account.cardDesignId,
        envelopeDesignId: account.envelopeDesignId,
        senderId: account.senderId,
        message: `Hola {{${name}}}`,
        variables: [{ name, maxSize: 20, defaultValue: 'amigo', example: 'Lucía' }],
      })
      expectError(response, 400, 'Bad Request', /__proto__ está reservado/)
    }
    // A name that merely contains it is an ordinary name.
    expect(
      (
        await bulkCampaign(app, account, {
          message: 'Hola {{__proto___x}}, {{cupon}}',
          variables: [
            { name: '__proto___x', maxSize: 20, defaultValue: 'amigo', example: 'Ana' },
            { name: 'cupon', maxSize: 8, defaultValue: null, example: 'X' },
          ],
        })
      ).length,
    ).toBeGreaterThan(0)
  })

  it('a campaign made before the rule with a __proto__ variable still fills it from CSV and from its default, never "[object Object]"', async ({
    gateway: app,
  }) => {
    const { account, client, campaignId } = await accountWithCampaign(app, 100)
    // As an older version let it be made: the variable renamed in the database.
    await app.db.execute(sql`UPDATE campaign_variables SET name = '__proto__' WHERE campaign_id = ${campaignId}::uuid AND name = 'nombre'`)
    await app.db.execute(sql`UPDATE campaigns SET message = replace(message, '{{nombre}}', '{{__proto__}}') WHERE id = ${campaignId}::uuid`)
    const csv =
      'name,surname,address,zip,city,country,__proto__,cupon\r\nAna,Ruiz,Calle Mayor 1,28013,Madrid,ES,Ana,X1\r\nBea,Ruiz,Calle Mayor 1,28013,Madrid,ES,,X2\r\n'
    const response = await client.post(`/cards/bulk?campaignId=${campaignId}`, csv, { 'content-type': 'text/csv' })
    expect(response.statusCode, response.body).toBe(200)
    const { cardIds } = response.json<BulkAnswer>()
    const stored = await lettersById(app, cardIds as string[])
    const messages = cardIds.map((id) => stored.get(id!)?.message ?? '')
    expect(messages[0]).toContain('¡Feliz Navidad, Ana!')
    expect(messages[1]).toContain('¡Feliz Navidad, amigo!')
    for (const message of messages) expect(message).not.toContain('[object Object]')
    await expectLedgerMatchesLetters(app.db, account.id)
  })
})

describe('bulk requests in parallel', () => {
  it('lets exactly 40 of 100 parallel bulk requests through on credits for 40, each all or nothing, and the ledger agrees', async ({ gateway: app }) => {
    const { account, client, campaignId } = await accountWithCampaign(app, 40 * 5 * 3)
    const responses = await Promise.all(
      Array.from({ length: 100 }, (_, request) =>
        client.post('/cards/bulk', { campaignId, recipients: Array.from({ length: 5 }, (_, n) => recipient({ name: `Lote ${request} ${n}` })) }),
      ),
    )
    const created = responses.filter((response) => response.statusCode === 200)
    expect(created).toHaveLength(40)
    for (const response of responses.filter((response) => response.statusCode !== 200)) {
      expectError(response, 402, 'Payment Required', /^Créditos insuficientes: las 5 cartas cuestan 15 créditos y el saldo de la cuenta es [0-9]$/)
    }
    const state = await expectLedgerMatchesLetters(app.db, account.id)
    expect(state.balance).toBe(0)
    expect(state.letters).toHaveLength(200)
    // Each answered request has all its letters, named as it asked; no letter of a refused one exists.
    const names = new Map(state.letters.map((letter) => [letter.id, letter.recipient.name]))
    for (const response of created) {
      const request = responses.indexOf(response)
      const { created: count, cardIds } = response.json<BulkAnswer>()
      expect(count).toBe(5)
      expect(cardIds.map((id) => names.get(id!))).toEqual(Array.from({ length: 5 }, (_, n) => `Lote ${request} ${n}`))
    }
  })
})

describe('POST /cards/bulk with a signature', () => {
  it('signs every letter with the request’s signature, and refuses another account’s with nothing charged', async ({ gateway: app }) => {
    const { account, client, campaignId } = await accountWithCampaign(app, 100)
    const other = await adminAccount(app, 10)
    const signed = await client.post('/cards/bulk', {
      campaignId,
      signatureId: account.signatureId,
      recipients: [recipient({ name: 'Ana' }), recipient({ name: 'Bea' })],
    })
    expect(signed.statusCode, signed.body).toBe(200)
    const stored = await lettersById(app, signed.json<BulkAnswer>().cardIds as string[])
    expect([...stored.values()].map((letter) => letter.signatureId)).toEqual([account.signatureId, account.signatureId])
    const before = await moneyState(app.db, account.id)
    const refused = await client.post('/cards/bulk', { campaignId, signatureId: other.signatureId, recipients: [recipient()] })
    expectError(refused, 400, 'Bad Request', "El campo 'signatureId' no corresponde a ninguna firma de la cuenta")
    const after = await moneyState(app.db, account.id)
    expect(after.balance).toBe(before.balance)
    expect(after.letters).toHaveLength(before.letters.length)
  })

  it('takes it in the query with a CSV body', async ({ gateway: app }) => {
    const { account, client, campaignId } = await accountWithCampaign(app, 100)
    const csv = 'name,surname,address,zip,city,country,cupon\r\nAna,García,Calle Mayor 1,28013,Madrid,ES,NAV25\r\n'
    const response = await client.post(`/cards/bulk?campaignId=${campaignId}&signatureId=${account.signatureId}`, csv, { 'content-type': 'text/csv' })
    expect(response.statusCode, response.body).toBe(200)
    const stored = await lettersById(app, response.json<BulkAnswer>().cardIds as string[])
    expect([...stored.values()][0]?.signatureId).toBe(account.signatureId)
    const wrong = await client.post(`/cards/bulk?campaignId=${campaignId}&signatureId=firma`, csv, { 'content-type': 'text/csv' })
    expectError(wrong, 400, 'Bad Request', /'signatureId' debe ser el id \(UUID\)/)
  })
})

describe('POST /cards/bulk?dryRun=true', () => {
  it('answers what the request would create and cost, with every row’s error, as the real request answers it, charging, storing and keeping nothing', async ({
    gateway: app,
  }) => {
    const { account, client, campaignId } = await accountWithCampaign(app, 100)
    const before = await moneyState(app.db, account.id)
    const body = {
      campaignId,
      recipients: [
        recipient({ name: 'Ana' }),
        recipient({ country: 'XX' }),
        recipient({ name: 'Carl', zip: '1010', city: 'Wien', province: '', country: 'AT' }),
      ],
    }
    const dry = await client.post('/cards/bulk?dryRun=true', body, { 'idempotency-key': 'lote-de-prueba' })
    expect(dry.statusCode, dry.body).toBe(200)
    expect(dry.json()).toEqual({
      created: 2,
      cost: 8,
      cardIds: [null, null, null],
      errors: [{ index: 1, error: 'Bad Request', message: "'country' debe ser un código ISO 3166-1 alfa-2 asignado, como ES o FR" }],
    })
    const csv = 'name,surname,address,zip,city,country,cupon\r\nAna,García,Calle Mayor 1,28013,Madrid,ES,NAV25\r\nBea,Ruiz,Calle Mayor 2,,Madrid,ES,NAV25\r\n'
    const dryCsv = await client.post(`/cards/bulk?campaignId=${campaignId}&dryRun=true`, csv, { 'content-type': 'text/csv' })
    expect(dryCsv.json()).toMatchObject({ created: 1, cost: 3, cardIds: [null, null], errors: [{ index: 1 }] })
    // No ledger entry, letter or job: the account as it was.
    expect(await moneyState(app.db, account.id)).toEqual(before)

    // The real requests answer the same, but for the ids of the letters they made. The key was
    // not kept by the dry run: the real request under it creates the letters.
    type BulkAnswer = { created: number; cost: number; cardIds: Array<string | null>; errors: unknown[] }
    const asDryRun = (answer: BulkAnswer) => ({ ...answer, cardIds: answer.cardIds.map(() => null) })
    const real = await client.post('/cards/bulk', body, { 'idempotency-key': 'lote-de-prueba' })
    expect(real.statusCode, real.body).toBe(200)
    expect(asDryRun(real.json<BulkAnswer>())).toEqual(dry.json())
    expect(real.json<BulkAnswer>().cardIds.map((id) => id !== null)).toEqual([true, false, true])
    const realCsv = await client.post(`/cards/bulk?campaignId=${campaignId}`, csv, { 'content-type': 'text/csv' })
    expect(realCsv.statusCode, realCsv.body).toBe(200)
    expect(asDryRun(realCsv.json<BulkAnswer>())).toEqual(dryCsv.json())
    const after = await moneyState(app.db, account.id)
    expect(after.balance).toBe(100 - 8 - 3)
    expect(after.letters).toHaveLength(3)
  })

  it('refuses what the real request would refuse as a whole: another account’s signature, an inactive campaign, a bad dryRun', async ({
    gateway: app,
    customer,
  }) => {
    const { client, campaignId, inactiveCampaignId } = customer
    const other = await adminAccount(app, 10)
    const before = await moneyState(app.db, customer.account.id)
    expectError(
      await client.post('/cards/bulk?dryRun=true', { campaignId, signatureId: other.signatureId, recipients: [recipient()] }),
      400,
      'Bad Request',
      "El campo 'signatureId' no corresponde a ninguna firma de la cuenta",
    )
    expectError(
      await client.post('/cards/bulk?dryRun=true', { campaignId: inactiveCampaignId, recipients: [recipient()] }),
      400,
      'Bad Request',
      'La campaña no está activa',
    )
    expectError(
      await client.post('/cards/bulk?dryRun=si', { campaignId, recipients: [recipient()] }),
      400,
      'Bad Request',
      "El parámetro 'dryRun' debe ser true o false",
    )
    expect(await moneyState(app.db, customer.account.id)).toEqual(before)
  })
})
