import { describe, expect } from 'vitest'
import { COUNTRY_CODES, publicApi } from '@letters/contracts'
import { it } from '@letters/test/support/fixtures'
import { moneyState } from '@letters/test/support/ledger'
import { UNKNOWN_ID, adminCampaign, expectError, publicClient, singleLetter, spanishRecipient } from './helpers.js'

type Problems = { error: string; message: string; requestId: string; details?: Array<{ field: string; message: string }> }

describe('a 400 for a body that breaks its schema names every problem', () => {
  it('lists two missing fields in the message and one by one in details', async ({ gateway: app, account, client }) => {
    const response = await client.post('/single', { ...singleLetter(account), name: undefined, city: undefined })
    const body = expectError(response, 400, 'Bad Request') as Problems
    expect(body.message).toBe("El campo 'name' es obligatorio; El campo 'city' es obligatorio")
    expect(body.details).toEqual([
      { field: 'name', message: "El campo 'name' es obligatorio" },
      { field: 'city', message: "El campo 'city' es obligatorio" },
    ])
    expect(await moneyState(app.db, account.id)).toMatchObject({ balance: 100, letters: [] })
  })

  it('lists a missing field and a field of the wrong type', async ({ account, client }) => {
    const body = (await client.post('/single', { ...singleLetter(account), address: undefined, zip: 28013 })).json<Problems>()
    expect(body.details).toEqual([
      { field: 'address', message: "El campo 'address' es obligatorio" },
      { field: 'zip', message: "El campo 'zip' debe ser un texto no vacío (el código postal, entre comillas)" },
    ])
    expect(body.message).toBe(body.details!.map((problem) => problem.message).join('; '))
  })

  it('keeps the one sentence of a single problem, with it alone in details', async ({ account, client }) => {
    const body = expectError(await client.post('/single', { ...singleLetter(account), zip: undefined }), 400, 'Bad Request') as Problems
    expect(body).toEqual({
      error: 'Bad Request',
      message: "El campo 'zip' es obligatorio",
      requestId: expect.any(String),
      details: [{ field: 'zip', message: "El campo 'zip' es obligatorio" }],
    })
  })

  it('names a misspelt field as not allowed, with the field it resembles, before the field it left missing', async ({ account, client }) => {
    const { address, ...rest } = singleLetter(account) as Record<string, unknown>
    const body = (await client.post('/single', { ...rest, adress: address })).json<Problems>()
    expect(body.details).toEqual([
      { field: 'adress', message: "El campo 'adress' no está permitido (¿quisiste decir 'address'?)" },
      { field: 'address', message: "El campo 'address' es obligatorio" },
    ])
    expect(body.message).toBe("El campo 'adress' no está permitido (¿quisiste decir 'address'?); El campo 'address' es obligatorio")
  })

  it('suggests nothing for an unknown field like no allowed one', async ({ account, client }) => {
    const body = (await client.post('/single', singleLetter(account, { colorDeTinta: 'azul' }))).json<Problems>()
    expect(body.message).toBe("El campo 'colorDeTinta' no está permitido")
  })

  it('lists ten problems of a large body and counts the rest', async ({ client }) => {
    const extra = Object.fromEntries(Array.from({ length: 30 }, (_, n) => [`campoDesconocido${n}`, n]))
    const body = (await client.post('/single', extra)).json<Problems>()
    // 30 unknown fields, listed first, and 9 required ones missing.
    expect(body.details!.map((problem) => problem.field)).toEqual(Array.from({ length: 10 }, (_, n) => `campoDesconocido${n}`))
    expect(body.message.split('; ')).toHaveLength(11)
    expect(body.message).toMatch(/^El campo 'campoDesconocido0' no está permitido; .*; y 29 más$/)
  })
})

/** The 400 a past `sendAt` gets, alone or among others. */
const pastSendAt = (value: string) => `El campo ${publicApi.SEND_AT_RULE}; '${value}' ya ha pasado`

describe('a 400 for a body that passes its schema but not the checks past it names every problem', () => {
  const past = '2020-01-01T10:00:00Z'

  it('lists a zip of another country, a past sendAt, a bad trackingUrl and an unknown font at once, and charges nothing', async ({
    gateway: app,
    account,
    client,
  }) => {
    const body = singleLetter(account, { zip: '99999', sendAt: past, trackingUrl: 'ftp://ejemplo.es/a', fontName: 'no-existe' })
    const refused = expectError(await client.post('/single', body), 400, 'Bad Request') as Problems
    expect(refused.details!.map((problem) => problem.field)).toEqual(['fontName', 'zip', 'sendAt', 'trackingUrl'])
    expect(refused.details![0]!.message).toMatch(/^La fuente 'no-existe' no existe; las disponibles son: /)
    expect(refused.details![1]!.message).toBe("El campo 'zip' ('99999') no es un código postal válido para ES")
    expect(refused.details![2]!.message).toBe(pastSendAt(past))
    expect(refused.details![3]!.message).toMatch(/^El campo 'trackingUrl' /)
    expect(refused.message).toBe(refused.details!.map((problem) => problem.message).join('; '))
    // The preview runs the same checks and answers the same problems.
    expect((await client.post('/single/preview', body)).json<Problems>().details).toEqual(refused.details)
    expect(await moneyState(app.db, account.id)).toMatchObject({ balance: 100, letters: [] })
  })

  it("lists a bad zip, a past sendAt, a message its campaign's variables make too long and each variable's problem at once", async ({
    gateway: app,
    account,
    client,
  }) => {
    // 995 characters and a short placeholder for a long value: filled, the message passes 1,000.
    const campaign = await adminCampaign(app, account, {
      message: `${'x'.repeat(995)}{{a}}`,
      variables: [
        { name: 'a', maxSize: 100, defaultValue: null, example: 'y' },
        { name: 'b', maxSize: 3, defaultValue: null, example: 'y' },
        { name: 'c', maxSize: 3, defaultValue: null, example: 'y' },
      ],
    })
    const body = { campaignId: campaign, ...spanishRecipient, zip: '999', sendAt: past, variables: { a: 'y'.repeat(50), b: 'largo', d: 'z' } }
    const refused = expectError(await client.post('/card', body), 400, 'Bad Request') as Problems
    expect(refused.details).toEqual([
      { field: 'sendAt', message: pastSendAt(past) },
      { field: 'zip', message: "El campo 'zip' ('999') no es un código postal válido para ES; si empieza por 0, escríbelo entre comillas con sus 5 cifras" },
      { field: 'variables.d', message: "La variable 'd' no existe en la campaña; sus variables son: a, b, c" },
      { field: 'variables.b', message: "La variable 'b' no puede tener más de 3 caracteres" },
      { field: 'variables.c', message: "Falta la variable 'c', que no tiene valor por defecto" },
    ])
    const withMessage = { ...body, variables: { a: 'y'.repeat(50), b: 'uno', c: 'dos' } }
    expect((await client.post('/card', withMessage)).json<Problems>().details).toEqual([
      { field: 'sendAt', message: pastSendAt(past) },
      { field: 'zip', message: "El campo 'zip' ('999') no es un código postal válido para ES; si empieza por 0, escríbelo entre comillas con sus 5 cifras" },
      { field: 'variables', message: `El mensaje no puede tener más de ${publicApi.MESSAGE_MAX_CHARACTERS} caracteres` },
    ])
    expect(await moneyState(app.db, account.id)).toMatchObject({ balance: 100, letters: [] })
  })

  it("lists every problem of one bulk recipient in that recipient's entry, and the request's own sendAt and trackingUrl together", async ({
    gateway: app,
    account,
    campaign,
    client,
  }) => {
    const good = { ...spanishRecipient, variables: { nombre: 'Ana', cupon: 'X' } }
    const bad = { ...spanishRecipient, zip: '99999', variables: { nombre: 'Ana', cupon: 'X', ciudad: 'Soria' } }
    const listed = (await client.post('/cards/bulk?dryRun=true', { campaignId: campaign, recipients: [good, bad] })).json<publicApi.BulkLettersCreated>()
    expect(listed.errors).toEqual([
      {
        index: 1,
        error: 'Bad Request',
        message:
          "El campo 'zip' ('99999') no es un código postal válido para ES; La variable 'ciudad' no existe en la campaña; sus variables son: nombre, cupon",
      },
    ])
    const whole = await client.post('/cards/bulk', { campaignId: campaign, sendAt: past, trackingUrl: 'ftp://ejemplo.es/a', recipients: [good] })
    expect((expectError(whole, 400, 'Bad Request') as Problems).details!.map((problem) => problem.field)).toEqual(['trackingUrl', 'sendAt'])
    expect(await moneyState(app.db, account.id)).toMatchObject({ balance: 100, letters: [] })
  })
})

describe('the name of a field in a 400', () => {
  it('keeps a slash or a tilde of an unknown field as sent', async ({ account, client }) => {
    const body = (await client.post('/single', singleLetter(account, { 'a/b': 1, 'c~d': 2 }))).json<Problems>()
    expect(body.details).toEqual([
      { field: 'a/b', message: "El campo 'a/b' no está permitido" },
      { field: 'c~d', message: "El campo 'c~d' no está permitido" },
    ])
  })

  it('names an unknown field of megabytes by its first 100 characters, in the message and in details alike', async ({
    gateway: app,
    account,
    campaign,
    client,
  }) => {
    const huge = 'q'.repeat(2_000_000)
    const response = await client.post('/cards/bulk', { campaignId: campaign, recipients: [spanishRecipient], [huge]: 1 })
    expect(response.statusCode, response.body.slice(0, 500)).toBe(400)
    const shown = `${'q'.repeat(100)}…`
    expect(response.json<Problems>()).toMatchObject({
      message: `El campo '${shown}' no está permitido`,
      details: [{ field: shown, message: `El campo '${shown}' no está permitido` }],
    })
    expect(response.body.length).toBeLessThan(1000)
    expect(await moneyState(app.db, account.id)).toMatchObject({ balance: 100, letters: [] })
  })

  it('suggests only a field the object does not have yet', async ({ account, campaign, client }) => {
    const body = (await client.post('/single', singleLetter(account, { nam: 'Ana' }))).json<Problems>()
    expect(body.message).toBe("El campo 'nam' no está permitido")
    const recipient = { ...spanishRecipient, nam: 'Ana', variables: { cupon: 'X' } }
    const listed = (await client.post('/cards/bulk?dryRun=true', { campaignId: campaign, recipients: [recipient] })).json<publicApi.BulkLettersCreated>()
    expect(listed.errors.map((error) => error.message)).toEqual(["El campo 'nam' no está permitido"])
    const { name, ...nameless } = spanishRecipient
    const misspelt = (await client.post('/single', { ...singleLetter(account), ...nameless, name: undefined, nam: name })).json<Problems>()
    expect(misspelt.details![0]).toEqual({ field: 'nam', message: "El campo 'nam' no está permitido (¿quisiste decir 'name'?)" })
  })
})

describe('a known path asked with another method', () => {
  it('answers 405 with Allow listing the methods the path has', async ({ gateway: app, account }) => {
    const response = await app.inject({ method: 'PUT', url: '/cards', headers: { 'x-api-key': account.apiKey } })
    expectError(response, 405, 'Method Not Allowed', 'La ruta /cards no admite PUT; admite GET, HEAD')
    expect(response.headers.allow).toBe('GET, HEAD')
    const card = await app.inject({ method: 'PATCH', url: `/cards/${UNKNOWN_ID}` })
    expect(card.statusCode).toBe(405)
    expect(card.headers.allow).toBe('GET, HEAD, DELETE')
  })

  it('still answers 404 to a path the gateway does not have, whatever the method', async ({ gateway: app }) => {
    for (const method of ['GET', 'PUT'] as const) {
      const response = await app.inject({ method, url: '/cartas' })
      expectError(response, 404, 'Not Found', `La ruta ${method} /cartas no existe`)
      expect(response.headers.allow).toBeUndefined()
    }
  })

  it('is documented as a shared response with Allow', async ({ gateway: app }) => {
    const document = (await app.inject({ method: 'GET', url: '/openapi.json' })).json<{
      components: { responses: Record<string, { headers: Record<string, unknown>; content: Record<string, { schema: unknown }> }> }
    }>()
    const shared = document.components.responses.MethodNotAllowed!
    expect(Object.keys(shared.headers)).toEqual(['Allow'])
    expect(shared.content['application/json']!.schema).toEqual({ $ref: '#/components/schemas/Error' })
  })
})

describe('a path parameter longer than 100 characters', () => {
  it('is answered as an unknown id: 404 with a key, 401 without one', async ({ gateway: app, client }) => {
    const long = 'a'.repeat(101)
    expectError(await client.get(`/cards/${long}`), 404, 'Not Found')
    expectError(await client.get(`/cards/${'a'.repeat(5000)}`), 404, 'Not Found')
    expectError(await client.delete(`/webhooks/${long}`), 404, 'Not Found')
    // Without a key the route's authentication answers first, as for any id: nothing is told about ids.
    expectError(await app.inject({ method: 'GET', url: `/cards/${long}` }), 401, 'Unauthorized')
    expectError(await publicClient(app, 'lk_live_unknown').get(`/cards/${long}`), 401, 'Unauthorized')
  })
})

describe('limit, like every integer of a query, takes decimal digits only', () => {
  it.for(['true', '0x5', '1e1', '%201', '0', '101', '1.5', '5&limit=6'])('refuses limit=%s with a Spanish 400', async (value, { client }) => {
    const response = await client.get(`/cards?limit=${value}`)
    expectError(response, 400, 'Bad Request', /^El parámetro 'limit' debe ser /)
  })

  it('accepts limit=5 on every paged list of the public API', async ({ client }) => {
    for (const path of ['/cards', '/events', '/balance/movements', '/suppressions']) {
      const response = await client.get(`${path}?limit=5`)
      expect(response.statusCode, `${path}: ${response.body}`).toBe(200)
    }
    expectError(await client.get('/events?limit=1e1'), 400, 'Bad Request', "El parámetro 'limit' debe ser un número entero")
  })

  it('refuses a proof page written as anything but digits', async ({ client }) => {
    expectError(
      await client.get(`/cards/${UNKNOWN_ID}/proof.png?page=0x1`),
      400,
      'Bad Request',
      "El parámetro 'page' debe ser un número de página entre 1 y 10",
    )
  })
})

describe('country', () => {
  it('is an enum of the assigned codes in /openapi.json, and AA is refused', async ({ gateway: app, account, client }) => {
    const document = (await app.inject({ method: 'GET', url: '/openapi.json' })).json<{
      paths: Record<string, Record<string, { requestBody: { content: Record<string, { schema: { properties: Record<string, { enum?: string[] }> } }> } }>>
    }>()
    const country = document.paths['/single']!.post!.requestBody.content['application/json']!.schema.properties.country!
    expect(country.enum).toContain('ES')
    expect(country.enum).toContain('es')
    expect(country.enum).not.toContain('AA')
    expect(country.enum).toHaveLength(2 * COUNTRY_CODES.length)
    expectError(
      await client.post('/single', singleLetter(account, { country: 'AA' })),
      400,
      'Bad Request',
      "'country' debe ser un código ISO 3166-1 alfa-2 asignado, como ES o FR",
    )
    expect((await client.post('/single', singleLetter(account, { country: 'es' }))).statusCode).toBe(200)
  })
})

describe('the documented Error object', () => {
  it('has the optional details of a validation 400', async ({ gateway: app }) => {
    const document = (await app.inject({ method: 'GET', url: '/openapi.json' })).json<{
      components: { schemas: { Error: { required: string[]; properties: Record<string, { type: string; items?: { required: string[] } }> } } }
    }>()
    const error = document.components.schemas.Error
    expect(error.required).toEqual(['error', 'message'])
    expect(error.properties.details).toMatchObject({ type: 'array', items: { required: ['field', 'message'] } })
  })
})

describe('the query parameters of POST /cards/bulk', () => {
  it('are documented for a CSV body only, but dryRun, and a JSON request that sends one is told why it is refused', async ({
    gateway: app,
    account,
    campaign,
    client,
  }) => {
    const document = (await app.inject({ method: 'GET', url: '/openapi.json' })).json<{
      paths: Record<string, Record<string, { parameters: Array<{ in: string; name: string; description?: string }> }>>
    }>()
    const query = document.paths['/cards/bulk']!.post!.parameters.filter((parameter) => parameter.in === 'query')
    expect(query.map((parameter) => parameter.name).sort()).toEqual(['campaignId', 'dryRun', 'ignoreSuppression', 'inkColor', 'sendAt', 'signatureId'])
    for (const parameter of query.filter(({ name }) => name !== 'dryRun')) {
      expect(parameter.description, parameter.name).toMatch(/^With a text\/csv body, and only then: .*refused with 400/)
    }
    const body = { campaignId: campaign, recipients: [{ name: 'Ana', surname: 'Ruiz', address: 'Calle Mayor 1', zip: '28013', city: 'Madrid', country: 'ES' }] }
    for (const [url, named] of [
      [`/cards/bulk?signatureId=${account.signatureId}`, "'signatureId' va"],
      ['/cards/bulk?inkColor=red&ignoreSuppression=true', "'inkColor' y 'ignoreSuppression' van"],
      ['/cards/bulk?sendAt=2030-01-01T10:00:00%2B01:00', "'sendAt' va"],
    ] as const) {
      expectError(await client.post(url, body), 400, 'Bad Request', `Con un cuerpo JSON, ${named} en el cuerpo, no en la URL`)
    }
    expect(await moneyState(app.db, account.id)).toMatchObject({ balance: 100, letters: [] })
  })
})
