import { describe, expect } from 'vitest'
import { DRAWING_REVISION } from '@letters/contracts'
import { eq } from 'drizzle-orm'
import { letterEvents, letters, outbox } from '@letters/db'
import { UNKNOWN_ID, adminAccount, adminClient, expectError, publicClient, singleLetter } from './helpers.js'
import { it as base } from '@letters/test/support/fixtures'
import type { Account } from '@letters/test/support/gateway'
import { expectLedgerMatchesLetters, moneyState } from '@letters/test/support/ledger'

const FONT_RULE =
  "El campo 'fontName' debe ser una de las letras incluidas (caveat, dancing-script, homemade-apple, indie-flower, kalam) o una de las de la cuenta: GET /fonts las lista"

/** Another account, whose designs, sender and signature a letter of `account` may not use. */
const it = base.extend('other', ({ gateway }) => adminAccount(gateway, 10))
it.override({ accountCredits: 1000 })

describe('POST /single', () => {
  it('writes in blue unless the request names another ink, and keeps the ink on the letter', async ({ gateway: app, account, client }) => {
    const inkOf = async (body: object) => {
      const response = await client.post('/single', body)
      expect(response.statusCode).toBe(200)
      const cardId = response.json<{ cardId: string }>().cardId
      const [row] = await app.db.select({ inkColor: letters.inkColor, drawing: letters.drawing }).from(letters).where(eq(letters.id, cardId))
      const shown = (await client.get(`/cards/${cardId}`)).json<{ inkColor: string }>().inkColor
      return { ...row, shown }
    }
    expect(await inkOf(singleLetter(account))).toEqual({ inkColor: 'blue', drawing: DRAWING_REVISION, shown: 'blue' })
    expect(await inkOf(singleLetter(account, { inkColor: null }))).toEqual({ inkColor: 'blue', drawing: DRAWING_REVISION, shown: 'blue' })
    for (const ink of ['black', 'green', 'purple', 'red'] as const)
      expect(await inkOf(singleLetter(account, { inkColor: ink }))).toMatchObject({ inkColor: ink, shown: ink })
  })

  it('charges 3 credits for Spain and stores the letter, its ledger entry, its first event and its address job', async ({ gateway: app, account, client }) => {
    const before = (await moneyState(app.db, account.id)).balance
    const response = await client.post('/single', singleLetter(account, { fontName: 'kalam', company: 'Luna S.L.', country: 'es' }))
    expect(response.statusCode).toBe(200)
    const body = response.json<{ success: boolean; cardId: string }>()
    expect(body).toEqual({ success: true, cardId: expect.stringMatching(/^[0-9a-f-]{36}$/) })

    const [letter] = await app.db.select().from(letters).where(eq(letters.id, body.cardId))
    expect(letter).toMatchObject({
      accountId: account.id,
      type: 'single',
      status: 'received',
      cost: 3,
      fontName: 'kalam',
      message: 'Querida Lucía, gracias por tu compra.',
      recipient: {
        name: 'Lucía',
        surname: 'García',
        company: 'Luna S.L.',
        address: 'Calle Mayor 1',
        zip: '28013',
        city: 'Madrid',
        province: 'Madrid',
        country: 'ES',
      },
      address: null,
    })
    expect(await app.db.select({ status: letterEvents.status }).from(letterEvents).where(eq(letterEvents.letterId, body.cardId))).toEqual([
      { status: 'received' },
    ])
    const jobs = await app.db.select().from(outbox).where(eq(outbox.jobName, 'normalize-address'))
    expect(jobs.filter((job) => job.payload.letterId === body.cardId)).toMatchObject([{ queue: 'address', payload: { letterId: body.cardId }, sentAt: null }])
    const after = await expectLedgerMatchesLetters(app.db, account.id)
    expect(after.balance).toBe(before - 3)
  })

  it('charges 5 credits for any other country', async ({ gateway: app, account, client }) => {
    const before = (await moneyState(app.db, account.id)).balance
    const response = await client.post('/single', singleLetter(account, { zip: '75001', city: 'Paris', province: null, country: 'FR' }))
    expect(response.statusCode).toBe(200)
    expect((await moneyState(app.db, account.id)).balance).toBe(before - 5)
  })

  it.for([
    ['ES', '8001', 'Barcelona'],
    ['DE', '1067', 'Dresden'],
  ] as const)('accepts a postal code of %s whose leading zero a spreadsheet ate (%s)', async ([country, zip, city], { account, client }) => {
    const response = await client.post('/single', singleLetter(account, { zip, city, province: null, country }))
    expect(response.statusCode).toBe(200)
  })

  it('accepts a letter without message, font, company or province', async ({ gateway: app, account, client }) => {
    const { message: _m, province: _p, ...minimal } = singleLetter(account)
    const response = await client.post('/single', { ...minimal, message: null, fontName: null })
    expect(response.statusCode).toBe(200)
    const [letter] = await app.db.select().from(letters).where(eq(letters.id, response.json<{ cardId: string }>().cardId))
    expect(letter).toMatchObject({ message: '', fontName: 'caveat', recipient: { province: null, company: null } })
  })

  it('takes a message of 1,000 characters, counting characters rather than bytes', async ({ account, client }) => {
    expect((await client.post('/single', singleLetter(account, { message: 'ñ'.repeat(1000) }))).statusCode).toBe(200)
    expect((await client.post('/single', singleLetter(account, { message: '€'.repeat(1000) }))).statusCode).toBe(200)
    // 1,000 emoji are 2,000 UTF-16 units but 1,000 characters: refused for what the pen cannot write, not for their length.
    const emoji = await client.post('/single', singleLetter(account, { message: '😀'.repeat(1000) }))
    expectError(emoji, 400, 'Bad Request', "El campo 'message' contiene caracteres que la letra 'caveat' no puede escribir: 😀")
  })
})

describe('POST /single rejects bad input with 400 and charges nothing', () => {
  const cases: Array<[string, (a: Account, other: Account) => unknown, string | RegExp]> = [
    ['a missing zip', (a) => ({ ...singleLetter(a), zip: undefined }), "El campo 'zip' es obligatorio"],
    ['a missing address', (a) => ({ ...singleLetter(a), address: undefined }), "El campo 'address' es obligatorio"],
    ['a missing cardDesignId', (a) => ({ ...singleLetter(a), cardDesignId: undefined }), "El campo 'cardDesignId' es obligatorio"],
    ['an empty name', (a) => singleLetter(a, { name: '' }), "El campo 'name' no puede estar vacío"],
    ['a zip sent as a number', (a) => singleLetter(a, { zip: 28013 }), /El campo 'zip' debe ser un texto/],
    ['a three-letter country', (a) => singleLetter(a, { country: 'ESP' }), "'country' debe ser un código ISO 3166-1 alfa-2 asignado, como ES o FR"],
    ['an unassigned country code', (a) => singleLetter(a, { country: 'XX' }), "'country' debe ser un código ISO 3166-1 alfa-2 asignado, como ES o FR"],
    [
      'a Spanish zip too short even with its leading zeros',
      (a) => singleLetter(a, { zip: '801' }),
      "El campo 'zip' ('801') no es un código postal válido para ES; si empieza por 0, escríbelo entre comillas con sus 5 cifras",
    ],
    ['a Spanish zip with a letter', (a) => singleLetter(a, { zip: '2801A' }), "El campo 'zip' ('2801A') no es un código postal válido para ES"],
    ['a Spanish zip outside provinces 01-52', (a) => singleLetter(a, { zip: '53001' }), "El campo 'zip' ('53001') no es un código postal válido para ES"],
    ['a German zip of six digits', (a) => singleLetter(a, { zip: '101170', country: 'DE' }), "El campo 'zip' ('101170') no es un código postal válido para DE"],
    ['a cardDesignId that is not a UUID', (a) => singleLetter(a, { cardDesignId: 'tarjeta-1' }), "El campo 'cardDesignId' debe ser un UUID válido"],
    [
      'an unknown card design',
      (a) => singleLetter(a, { cardDesignId: UNKNOWN_ID }),
      "El campo 'cardDesignId' no corresponde a ningún diseño de tarjeta de la cuenta",
    ],
    [
      'an envelope design of another account',
      (a, other) => singleLetter(a, { envelopeDesignId: other.envelopeDesignId }),
      "El campo 'envelopeDesignId' no corresponde a ningún diseño de sobre de la cuenta",
    ],
    [
      'a sender of another account',
      (a, other) => singleLetter(a, { senderId: other.senderId }),
      "El campo 'senderId' no corresponde a ningún remitente de la cuenta",
    ],
    [
      'an unknown font',
      (a) => singleLetter(a, { fontName: 'comic-sans' }),
      "La fuente 'comic-sans' no existe; las disponibles son: caveat, dancing-script, homemade-apple, indie-flower, kalam",
    ],
    ['a message over 1,000 characters', (a) => singleLetter(a, { message: 'a'.repeat(1001) }), /no puede tener más de 1000 caracteres/],
    ['an unknown field', (a) => singleLetter(a, { stampId: a.signatureId }), "El campo 'stampId' no está permitido"],
    [
      "another account's signature",
      (a, other) => singleLetter(a, { signatureId: other.signatureId }),
      "El campo 'signatureId' no corresponde a ninguna firma de la cuenta",
    ],
    ['a signature that is not a UUID', (a) => singleLetter(a, { signatureId: 'firma-1' }), /'signatureId' debe ser el id \(UUID\)/],
    [
      'a misspelt field',
      (a) => ({ ...singleLetter(a), zip: undefined, zipcode: '28013' }),
      "El campo 'zipcode' no está permitido; El campo 'zip' es obligatorio",
    ],
    ['a body that is an array', () => [], 'El cuerpo de la petición debe ser un objeto JSON'],
    ['a name of only spaces', (a) => singleLetter(a, { name: '   ' }), "El campo 'name' no puede estar vacío"],
    ['a zip of only spaces', (a) => singleLetter(a, { zip: '  ' }), /El campo 'zip'/],
    ['a name of only a zero-width space', (a) => singleLetter(a, { name: '\u200b' }), "El campo 'name' no puede estar vacío"],
    [
      'a surname of only joiners, a word joiner and a BOM',
      (a) => singleLetter(a, { surname: '\u200d\u200c\u2060\ufeff' }),
      "El campo 'surname' no puede estar vacío",
    ],
    ['a city of a Hangul filler between spaces', (a) => singleLetter(a, { city: ' \u3164 ' }), "El campo 'city' no puede estar vacío"],
    ['an address of a soft hyphen and a lone combining accent', (a) => singleLetter(a, { address: '\u00ad\u0301' }), "El campo 'address' no puede estar vacío"],
    ['a fontName longer than 50 characters', (a) => singleLetter(a, { fontName: 'c'.repeat(51) }), FONT_RULE],
    ['an ink we do not have', (a) => singleLetter(a, { inkColor: 'gold' }), "El campo 'inkColor' debe ser uno de: blue, black, green, purple, red"],
    ['an ink given as a colour code', (a) => singleLetter(a, { inkColor: '#0040ac' }), "El campo 'inkColor' debe ser uno de: blue, black, green, purple, red"],
    ['an ink that is not a text', (a) => singleLetter(a, { inkColor: 3 }), "El campo 'inkColor' debe ser uno de: blue, black, green, purple, red"],
    ['an ink in capitals', (a) => singleLetter(a, { inkColor: 'Blue' }), "El campo 'inkColor' debe ser uno de: blue, black, green, purple, red"],
    ['a NUL character in the message', (a) => singleLetter(a, { message: 'a\u0000b' }), "El campo 'message' contiene caracteres no válidos"],
    ['a NUL character in the surname', (a) => singleLetter(a, { surname: 'a\u0000b' }), "El campo 'surname' contiene caracteres no válidos"],
    ['half a surrogate pair in the city', (a) => singleLetter(a, { city: '\ud800x' }), "El campo 'city' contiene caracteres no válidos"],
    [
      'a Chinese name the handwriting font cannot write',
      (a) => singleLetter(a, { name: '王伟' }),
      "El campo 'name' contiene caracteres que la letra 'caveat' no puede escribir: 王 伟",
    ],
    [
      'emoji in the message',
      (a) => singleLetter(a, { message: 'Gracias 👍🏽 por todo 👍🏽' }),
      "El campo 'message' contiene caracteres que la letra 'caveat' no puede escribir: 👍 🏽",
    ],
    [
      'a name of private-use characters',
      (a) => singleLetter(a, { name: '\ue000\ue001' }),
      "El campo 'name' contiene caracteres que la letra 'caveat' no puede escribir: \ue000 \ue001",
    ],
    [
      'a Polish city in a latin-only font',
      (a) => singleLetter(a, { city: 'Łódź', fontName: 'kalam' }),
      "El campo 'city' contiene caracteres que la letra 'kalam' no puede escribir: Ł ź",
    ],
  ]

  it.for(cases)('%s', async ([_name, body, message], { gateway: app, account, client, other }) => {
    const before = await moneyState(app.db, account.id)
    expectError(await client.post('/single', body(account, other)), 400, 'Bad Request', message)
    const after = await moneyState(app.db, account.id)
    expect(after.balance).toBe(before.balance)
    expect(after.letters).toHaveLength(before.letters.length)
    expect(after.entries).toHaveLength(before.entries.length)
  })

  it('does not echo a 60 KB fontName back', async ({ account, client }) => {
    const response = await client.post('/single', singleLetter(account, { fontName: 'x'.repeat(60 * 1024) }))
    expectError(response, 400, 'Bad Request', FONT_RULE)
    expect(response.body).not.toContain('xxxxxxxx')
    // The rule twice, in `message` and in `details`, and nothing of the value.
    expect(response.body.length).toBeLessThan(2 * FONT_RULE.length + 300)
  })

  it('takes Spanish, French and German text with its punctuation in every font', async ({ account, client }) => {
    for (const fontName of ['caveat', 'dancing-script', 'homemade-apple', 'indie-flower', 'kalam']) {
      const response = await client.post(
        '/single',
        singleLetter(account, { fontName, name: 'Begoña Müller', surname: 'Çelik-Œuvre', message: '¡Hola! ¿Qué tal? «Gracias» — 20 € … “adiós”' }),
      )
      expect(response.statusCode, `${fontName}: ${response.body}`).toBe(200)
    }
  })

  it('refuses names and addresses with a direction control (U+202A-U+202E, U+2066-U+2069), and charges nothing', async ({ gateway: app, account, client }) => {
    const before = await moneyState(app.db, account.id)
    for (const [field, value, code] of [
      ['name', 'Lucía \u202Ezeréz', 'U+202E'],
      ['surname', '\u202AGarcía', 'U+202A'],
      ['address', 'Calle Mayor 1\u2066', 'U+2066'],
      ['city', 'Mad\u2069rid', 'U+2069'],
      ['company', 'Luna\u202D S.L.', 'U+202D'],
    ] as const) {
      expectError(
        await client.post('/single', singleLetter(account, { [field]: value })),
        400,
        'Bad Request',
        `El campo '${field}' contiene un carácter de control de dirección del texto (${code})`,
      )
    }
    expect(await moneyState(app.db, account.id)).toEqual(before)
  })

  it('refuses an Idempotency-Key that is empty or only blanks, and charges nothing', async ({ gateway: app, account, client }) => {
    const before = await moneyState(app.db, account.id)
    for (const key of ['', '   ', '\t', '\u00a0\u200b'])
      expectError(
        await client.post('/single', singleLetter(account), { 'idempotency-key': key }),
        400,
        'Bad Request',
        "La cabecera 'Idempotency-Key' debe tener entre 1 y 255 caracteres y no puede estar en blanco",
      )
    expect(await moneyState(app.db, account.id)).toEqual(before)
  })

  it('takes a name with joiners and accents among visible letters', async ({ account, client }) => {
    const response = await client.post('/single', singleLetter(account, { name: 'Zoe\u0308 \u200dMari\u0301a' }))
    expect(response.statusCode, response.body).toBe(200)
  })

  it('rejects a body that is not JSON, another media type and an oversized body', async ({ gateway: app, account, client }) => {
    const before = await moneyState(app.db, account.id)
    const raw = (payload: string, type: string) =>
      app.inject({ method: 'POST', url: '/single', headers: { 'x-api-key': account.apiKey, 'content-type': type }, payload })
    expectError(await raw('{"name":', 'application/json'), 400, 'Bad Request', 'El cuerpo de la petición no es un JSON válido')
    expectError(await raw('', 'application/json'), 400, 'Bad Request')
    expectError(await raw('name=Lucía', 'application/x-www-form-urlencoded'), 415, 'Unsupported Media Type')
    expectError(
      await client.post('/single', singleLetter(account, { message: 'x'.repeat(65 * 1024) })),
      413,
      'Payload Too Large',
      'El cuerpo de la petición es demasiado grande',
    )
    expect((await moneyState(app.db, account.id)).balance).toBe(before.balance)
  })
})

describe('POST /single without a valid key', () => {
  it.for([
    ['no key', {}],
    ['an unknown key', { 'x-api-key': 'lk_live_this-key-does-not-exist-at-all-0000000000' }],
  ] as const)('answers 401 with %s and charges nothing', async ([_name, headers], { gateway: app, account }) => {
    const before = await moneyState(app.db, account.id)
    const response = await app.inject({ method: 'POST', url: '/single', headers, payload: singleLetter(account) })
    expectError(response, 401, 'Unauthorized', 'La API key no es válida o no se ha enviado en la cabecera X-API-KEY')
    expect((await moneyState(app.db, account.id)).balance).toBe(before.balance)
  })

  it('answers 401 to a revoked key within one second', async ({ gateway: app, account }) => {
    const admin = adminClient(app)
    const issued = (await admin.post(`/admin/accounts/${account.id}/api-keys`)).json<{ id: string; apiKey: string }>()
    expect((await publicClient(app, issued.apiKey).get('/card-designs')).statusCode).toBe(200)
    await admin.delete(`/admin/api-keys/${issued.id}`)
    const revokedAt = Date.now()
    await expect.poll(async () => (await publicClient(app, issued.apiKey).get('/card-designs')).statusCode, { timeout: 1000, interval: 20 }).toBe(401)
    expect(Date.now() - revokedAt).toBeLessThan(1000)
    expectError(await publicClient(app, issued.apiKey).post('/single', singleLetter(account)), 401, 'Unauthorized')
  })
})

describe('POST /single without enough credits', () => {
  it('answers 402 and leaves nothing behind', async ({ gateway: app }) => {
    const poor = await adminAccount(app, 4)
    const poorClient = publicClient(app, poor.apiKey)
    expect((await poorClient.post('/single', singleLetter(poor))).statusCode).toBe(200)
    const before = await moneyState(app.db, poor.id)
    expect(before.balance).toBe(1)
    expectError(
      await poorClient.post('/single', singleLetter(poor)),
      402,
      'Payment Required',
      'Créditos insuficientes: la carta cuesta 3 créditos y el saldo de la cuenta es 1',
    )
    const after = await expectLedgerMatchesLetters(app.db, poor.id)
    expect(after.balance).toBe(1)
    expect(after.letters).toHaveLength(1)
    expect(after.entries).toHaveLength(before.entries.length)
    expect(after.jobs).toHaveLength(1)
  })
})
