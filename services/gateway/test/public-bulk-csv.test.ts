import { describe, expect } from 'vitest'
import { inArray } from 'drizzle-orm'
import { letters } from '@letters/db'
import type { App } from '../src/app.js'
import { UNKNOWN_ID, adminAccount, expectError, publicClient } from './helpers.js'
import { bulkCampaign, type BulkAnswer } from './bulk-fixtures.js'
import { it as base } from '@letters/test/support/fixtures'
import { expectLedgerMatchesLetters, moneyState } from '@letters/test/support/ledger'

/** An account with credits and an active campaign: nombre ≤ 10 characters defaulting to "amigo", cupon ≤ 8 without default. */
async function accountWithCampaign(app: App, credits = 100) {
  const account = await adminAccount(app, credits)
  const campaignId = await bulkCampaign(app, account)
  const client = publicClient(app, account.apiKey)
  return {
    account,
    campaignId,
    /** POST /cards/bulk with a CSV body for this campaign. */
    postCsv: (csv: string | Buffer, headers: Record<string, string> = {}, query = `campaignId=${campaignId}`) =>
      client.post(`/cards/bulk?${query}`, csv, { 'content-type': 'text/csv', ...headers }),
  }
}

/** A fresh account with 100 credits and that campaign, for each test. */
const it = base.extend('csvAccount', ({ gateway }) => accountWithCampaign(gateway))

const DAY = 86_400_000
const lines = (...rows: string[]) => rows.map((row) => `${row}\r\n`).join('')
const BOM = '\uFEFF'

async function lettersOf(app: App, answer: BulkAnswer) {
  const ids = answer.cardIds.filter((id): id is string => id !== null)
  const rows = ids.length === 0 ? [] : await app.db.select().from(letters).where(inArray(letters.id, ids))
  const byId = new Map(rows.map((row) => [row.id, row]))
  return answer.cardIds.map((id) => (id === null ? null : byId.get(id)!))
}

describe('POST /cards/bulk with a CSV body', () => {
  it('reads a comma-separated file with a BOM, as Excel writes "CSV UTF-8": one letter per row, in order', async ({
    gateway: app,
    csvAccount: { account, postCsv },
  }) => {
    const csv =
      BOM +
      lines(
        'name,surname,company,address,zip,city,province,country,nombre,cupon',
        'Ana,Ruiz,,Calle Mayor 1,28013,Madrid,Madrid,ES,Anita,A1',
        'Íñigo,Zubiri,Txoko S.L.,Kale Nagusia 3,20003,Donostia,,es,,B2',
      )
    const response = await postCsv(csv)
    expect(response.statusCode, response.body).toBe(200)
    const answer = response.json<BulkAnswer>()
    expect(answer).toMatchObject({ created: 2, errors: [] })
    const [ana, inigo] = await lettersOf(app, answer)
    expect(ana).toMatchObject({
      message: '¡Feliz Navidad, Anita! Usa A1 antes del 6 de enero.',
      recipient: { name: 'Ana', company: null, province: 'Madrid', country: 'ES' },
    })
    // An empty variable cell leaves the default; an empty company or province is none.
    expect(inigo).toMatchObject({
      message: '¡Feliz Navidad, amigo! Usa B2 antes del 6 de enero.',
      recipient: { name: 'Íñigo', company: 'Txoko S.L.', province: null, country: 'ES' },
    })
    expect(await expectLedgerMatchesLetters(app.db, account.id)).toMatchObject({ balance: 94 })
  })

  it('reads semicolons (Spanish Excel), quoted fields holding separators, quotes and line breaks, and a header in any column order', async ({
    gateway: app,
    csvAccount: { postCsv },
  }) => {
    const csv = [
      'cupon;country;zip;city;address;surname;name',
      'X1;ES;08001;Barcelona;"Carrer Nou 5; 2º 1ª\nEscalera B";"García; de la ""Torre""";Pau',
      '"Y;2";ES;28013;Madrid;Calle Mayor 1;López;"Eva, ""la jefa"""',
      '',
    ].join('\n')
    const response = await postCsv(csv, { 'content-type': 'text/csv; charset=utf-8' })
    expect(response.statusCode, response.body).toBe(200)
    const answer = response.json<BulkAnswer>()
    expect(answer).toMatchObject({ created: 2, errors: [] })
    const [pau, eva] = await lettersOf(app, answer)
    expect(pau?.recipient).toMatchObject({ name: 'Pau', surname: 'García; de la "Torre"', address: 'Carrer Nou 5; 2º 1ª\nEscalera B' })
    expect(pau?.message).toBe('¡Feliz Navidad, amigo! Usa X1 antes del 6 de enero.')
    expect(eva?.recipient.name).toBe('Eva, "la jefa"')
    expect(eva?.message).toBe('¡Feliz Navidad, amigo! Usa Y;2 antes del 6 de enero.')
  })

  it('lists the rows that fail, by their index after the header, with the message POST /card gives, a wrong column count included', async ({
    gateway: app,
    csvAccount: { account, postCsv },
  }) => {
    const csv = lines(
      'name;surname;address;zip;city;country;nombre;cupon',
      'Ana;Ruiz;Calle Mayor 1;28013;Madrid;ES;;C0',
      'Bea;Ruiz;Calle Mayor 1;ABCDE;Madrid;ES;;C1',
      'Carla;Ruiz;Calle Mayor 1;28013;Madrid;ES',
      'Dani;Ruiz;Calle Mayor 1;28013;Madrid;ES;Maximiliano Alejandro;C3',
      'Eva;Ruiz;Calle Mayor 1;28013;Madrid;ES;;',
      ';Ruiz;Calle Mayor 1;28013;Madrid;ES;;C5',
      'Fer;Ruiz;Calle Mayor 1;28013;Madrid;ES;;C6;sobra',
      'Gil;Ruiz;Calle Mayor 1;28013;Madrid;ES;;C7',
      ';;;;;;;',
      ';;;;;;;',
    )
    const response = await postCsv(csv)
    expect(response.statusCode, response.body).toBe(200)
    const answer = response.json<BulkAnswer>()
    expect(answer.errors).toEqual([
      { index: 1, error: 'Bad Request', message: "El campo 'zip' ('ABCDE') no es un código postal válido para ES" },
      { index: 2, error: 'Bad Request', message: 'La fila tiene 6 columnas y la cabecera 8' },
      { index: 3, error: 'Bad Request', message: "La variable 'nombre' no puede tener más de 10 caracteres" },
      { index: 4, error: 'Bad Request', message: "Falta la variable 'cupon', que no tiene valor por defecto" },
      { index: 5, error: 'Bad Request', message: "El campo 'name' no puede estar vacío" },
      { index: 6, error: 'Bad Request', message: 'La fila tiene 9 columnas y la cabecera 8' },
    ])
    // The empty rows at the end (a spreadsheet's blank lines) are no recipients.
    expect(answer.cardIds).toHaveLength(8)
    expect((await lettersOf(app, answer)).map((letter) => letter?.recipient.name ?? null)).toEqual(['Ana', null, null, null, null, null, null, 'Gil'])
    expect(answer.created).toBe(2)
    expect(await expectLedgerMatchesLetters(app.db, account.id)).toMatchObject({ balance: 94 })
  })

  it('answers 413 for more than 1,000 rows, naming the limit, and creates nothing', async ({ gateway: app }) => {
    const { account, postCsv } = await accountWithCampaign(app, 10_000)
    const csv = lines('name,surname,address,zip,city,country,cupon', ...Array.from({ length: 1001 }, (_, n) => `C${n},Ruiz,Calle Mayor 1,28013,Madrid,ES,X`))
    expectError(
      await postCsv(csv),
      413,
      'Payload Too Large',
      'Una petición admite como máximo 1000 destinatarios y esta trae más de 1000; repártelos en varias peticiones',
    )
    expect(await moneyState(app.db, account.id)).toMatchObject({ balance: 10_000, letters: [] })
  })

  it('answers 402 when the credits cannot pay every valid row, and creates nothing', async ({ gateway: app }) => {
    const { account, postCsv } = await accountWithCampaign(app, 5)
    const csv = lines('name,surname,address,zip,city,country,cupon', 'Ana,Ruiz,Calle Mayor 1,28013,Madrid,ES,X', 'Bea,Ruiz,Calle Mayor 1,28013,Madrid,ES,X')
    expectError(await postCsv(csv), 402, 'Payment Required', 'Créditos insuficientes: las 2 cartas cuestan 6 créditos y el saldo de la cuenta es 5')
    expect(await moneyState(app.db, account.id)).toMatchObject({ balance: 5, letters: [] })
  })

  it('schedules every row for the sendAt of the query', async ({ gateway: app, csvAccount: { account, postCsv, campaignId } }) => {
    const csv = lines('name,surname,address,zip,city,country,cupon', 'Ana,Ruiz,Calle Mayor 1,28013,Madrid,ES,X', 'Bea,Ruiz,Calle Mayor 1,28013,Madrid,ES,X')
    // Past the 180 days a letter may wait, then within them.
    const tooLate = new Date(Date.now() + 181 * DAY).toISOString()
    expectError(await postCsv(csv, {}, `campaignId=${campaignId}&sendAt=${encodeURIComponent(tooLate)}`), 400, 'Bad Request', /está a más de 180 días$/)
    const soon = new Date(Date.now() + 3_600_000).toISOString()
    const response = await postCsv(csv, {}, `campaignId=${campaignId}&sendAt=${encodeURIComponent(soon)}`)
    expect(response.statusCode, response.body).toBe(200)
    const stored = await lettersOf(app, response.json<BulkAnswer>())
    expect(stored.map((letter) => [letter?.status, letter?.sendAt?.toISOString()])).toEqual([
      ['scheduled', soon],
      ['scheduled', soon],
    ])
    expect(await expectLedgerMatchesLetters(app.db, account.id)).toMatchObject({ balance: 94, jobs: [] })
  })

  it("reads a sendAt whose offset's + was sent unencoded (a URL makes it a space) as that +, as %2B and Z are read", async ({
    gateway: app,
    csvAccount: { postCsv, campaignId },
  }) => {
    const csv = lines('name,surname,address,zip,city,country,cupon', 'Ana,Ruiz,Calle Mayor 1,28013,Madrid,ES,X')
    // Two hours ahead, to the second, and its wall-clock time at +01:00.
    const instant = new Date(Math.floor((Date.now() + 2 * 3_600_000) / 1000) * 1000)
    const madrid = new Date(instant.getTime() + 3_600_000).toISOString().slice(0, 19)
    for (const sendAt of [`${madrid}+01:00`, `${madrid}%2B01:00`, instant.toISOString()]) {
      const response = await postCsv(csv, {}, `campaignId=${campaignId}&sendAt=${sendAt}`)
      expect(response.statusCode, `${sendAt}: ${response.body}`).toBe(200)
      const [letter] = await lettersOf(app, response.json<BulkAnswer>())
      expect(letter?.sendAt?.toISOString(), sendAt).toBe(instant.toISOString())
    }
    // A space elsewhere is not a lost +: still refused.
    expectError(
      await postCsv(csv, {}, `campaignId=${campaignId}&sendAt=${madrid.replace('T', '+')}`),
      400,
      'Bad Request',
      /no es una fecha y hora válida con zona horaria$/,
    )
  })

  it('replays a CSV request under its Idempotency-Key, and refuses another CSV under it with 422', async ({
    gateway: app,
    csvAccount: { account, postCsv },
  }) => {
    const csv = lines('name,surname,address,zip,city,country,cupon', 'Ana,Ruiz,Calle Mayor 1,28013,Madrid,ES,X')
    const first = await postCsv(csv, { 'idempotency-key': 'csv-1' })
    const retry = await postCsv(csv, { 'idempotency-key': 'csv-1' })
    expect(first.statusCode).toBe(200)
    expect(retry.headers['idempotent-replayed']).toBe('true')
    expect(retry.json()).toEqual(first.json())
    const other = lines('name,surname,address,zip,city,country,cupon', 'Bea,Ruiz,Calle Mayor 1,28013,Madrid,ES,X')
    expectError(await postCsv(other, { 'idempotency-key': 'csv-1' }), 422, 'Unprocessable Entity')
    expect((await expectLedgerMatchesLetters(app.db, account.id)).letters).toHaveLength(1)
  })
})

describe('POST /cards/bulk refuses a bad CSV as a whole, charging nothing', () => {
  const header = 'name,surname,address,zip,city,country,nombre,cupon'
  const row = 'Ana,Ruiz,Calle Mayor 1,28013,Madrid,ES,Ana,X'

  const cases: Array<[string, () => string, string | RegExp]> = [
    [
      'an unknown column',
      () => lines(`${header},ciudad`, `${row},Soria`),
      "La columna 'ciudad' del CSV no es un campo del destinatario ni una variable de la campaña; las columnas admitidas son: name, surname, address, zip, city, province, country, company, inkColor, trackingUrl, nombre, cupon",
    ],
    [
      'a missing required column',
      () => lines('name,surname,address,city,country,cupon', 'Ana,Ruiz,Calle Mayor 1,Madrid,ES,X'),
      "Falta la columna 'zip' en la cabecera del CSV",
    ],
    [
      'no column for a variable without default',
      () => lines('name,surname,address,zip,city,country', 'Ana,Ruiz,Calle Mayor 1,28013,Madrid,ES'),
      "Falta la columna 'cupon' en la cabecera del CSV: es una variable de la campaña sin valor por defecto",
    ],
    ['a column named twice', () => lines(`${header},name`, `${row},Eva`), "La columna 'name' aparece dos veces en la cabecera del CSV"],
    ['a column without a name', () => lines(`${header},`, `${row},`), 'La columna 9 de la cabecera del CSV no tiene nombre'],
    [
      'a quote never closed',
      () => lines(header, 'Ana,"Ruiz,Calle Mayor 1,28013,Madrid,ES,Ana,X'),
      /^El CSV no es válido \(línea \d+\): unas comillas abiertas no se cierran$/,
    ],
    [
      'text after a closing quote',
      () => lines(header, 'Ana,"Ruiz"ez,Calle Mayor 1,28013,Madrid,ES,Ana,X'),
      'El CSV no es válido (línea 2): tras unas comillas de cierre sigue texto en lugar del separador o el fin de la fila',
    ],
    ['an empty file', () => '', 'El CSV está vacío: envía una fila de cabecera y una fila por destinatario'],
    ['a header without rows', () => lines(header, ',,,,,,,'), 'El CSV no tiene destinatarios: tras la cabecera debe haber de 1 a 1000 filas'],
  ]

  it.for(cases)('%s', async ([_name, csv, message], { gateway: app, csvAccount: owner }) => {
    expectError(await owner.postCsv(csv()), 400, 'Bad Request', message)
    expect(await moneyState(app.db, owner.account.id)).toMatchObject({ balance: 100, letters: [] })
  })

  it('refuses a CSV without campaignId in the query, or with an unknown one', async ({ csvAccount: owner }) => {
    const csv = lines(header, row)
    expectError(await owner.postCsv(csv, {}, ''), 400, 'Bad Request', "El parámetro 'campaignId' es obligatorio al enviar un CSV")
    expectError(await owner.postCsv(csv, {}, 'campaignId=navidad'), 400, 'Bad Request', "El parámetro 'campaignId' debe ser un UUID válido")
    expectError(
      await owner.postCsv(csv, {}, `campaignId=${UNKNOWN_ID}`),
      400,
      'Bad Request',
      "El campo 'campaignId' no corresponde a ninguna campaña de la cuenta",
    )
  })

  it('refuses a file that is not UTF-8 with 400, and a charset other than UTF-8 with 415', async ({ gateway: app, csvAccount: owner }) => {
    const latin1 = Buffer.from(lines(header, 'Íñigo,Ruiz,Calle Mayor 1,28013,Madrid,ES,Ana,X'), 'latin1')
    expectError(await owner.postCsv(latin1), 400, 'Bad Request', /^El CSV no está en UTF-8/)
    expectError(
      await owner.postCsv(lines(header, row), { 'content-type': 'text/csv; charset=windows-1252' }),
      415,
      'Unsupported Media Type',
      'El CSV debe estar en UTF-8; se ha enviado con charset=windows-1252',
    )
    expect(await moneyState(app.db, owner.account.id)).toMatchObject({ balance: 100, letters: [] })
  })

  it('refuses a malformed Content-Type with 400', async ({ csvAccount: owner }) => {
    expectError(
      await owner.postCsv(lines(header, row), { 'content-type': 'text/csv; charset' }),
      400,
      'Bad Request',
      "La cabecera Content-Type ('text/csv; charset') no es válida",
    )
  })

  it('answers 401 to a CSV without a key', async ({ gateway: app, csvAccount: owner }) => {
    const response = await app.inject({
      method: 'POST',
      url: `/cards/bulk?campaignId=${owner.campaignId}`,
      headers: { 'content-type': 'text/csv' },
      payload: lines(header, row),
    })
    expectError(response, 401, 'Unauthorized')
  })

  it('takes text/csv on this route only', async ({ gateway: app, csvAccount: owner }) => {
    const response = await app.inject({
      method: 'POST',
      url: '/card',
      headers: { 'x-api-key': owner.account.apiKey, 'content-type': 'text/csv' },
      payload: lines(header, row),
    })
    expectError(response, 415, 'Unsupported Media Type', 'El tipo de contenido no está admitido: envía Content-Type: application/json')
  })
})
