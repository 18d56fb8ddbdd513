import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { describe, expect } from 'vitest'
import { eq, inArray } from 'drizzle-orm'
import * as fontkit from 'fontkit'
import sharp from 'sharp'
import { FONT_MAX_BYTES } from '@letters/contracts'
import { accountFontFiles, accountFonts, letters } from '@letters/db'
import { sfntFromWoff } from '@letters/artwork/font-tables'
import { it } from '@letters/test/support/fixtures'
import { brotliOfZeros, withHundredThousandPointA, withoutCharacters, withRecursiveLayout, woff2Of } from '@letters/test/support/hostile-fonts'
import { moneyState } from '@letters/test/support/ledger'
import type { App } from '../src/app.js'
import { adminAccount, expectError, fontFileCount, publicClient, singleLetter } from './helpers.js'

const require = createRequire(import.meta.url)
const fontsource = (file: string) => readFileSync(require.resolve(`@fontsource/${file}`))
/** Patrick Hand (SIL OFL 1.1): a handwriting font with the Spanish letters, as WOFF, WOFF2 and plain TrueType. */
const woff = fontsource('patrick-hand/files/patrick-hand-latin-400-normal.woff')
const woff2 = fontsource('patrick-hand/files/patrick-hand-latin-400-normal.woff2')
const ttf = sfntFromWoff(woff)

const fontsOf = (app: App, accountId: string) => `/admin/accounts/${accountId}/fonts`

describe('POST /admin/accounts/{id}/fonts', () => {
  it('creates a font with no file, which no letter can use yet and GET /fonts does not list', async ({ admin, account, client, gateway }) => {
    const created = await admin.post(fontsOf(gateway, account.id), { name: 'mi-letra', family: 'Mi Letra' })
    expect(created.statusCode, created.body).toBe(201)
    expect(created.json()).toEqual({ name: 'mi-letra', family: 'Mi Letra', plotterFont: 'caveat', file: null })
    const before = await moneyState(gateway.db, account.id)
    expectError(await client.post('/single', singleLetter(account, { fontName: 'mi-letra' })), 400, 'Bad Request', /'mi-letra' aún no tiene archivo/)
    expect(await moneyState(gateway.db, account.id)).toEqual(before)
    expect((await client.get('/fonts')).json<{ data: Array<{ name: string }> }>().data.map((font) => font.name)).not.toContain('mi-letra')
    expectError(await client.get('/fonts/mi-letra/preview'), 404, 'Not Found')
    const listed = await admin.get(fontsOf(gateway, account.id))
    expect(listed.json()).toEqual({ data: [{ name: 'mi-letra', family: 'Mi Letra', plotterFont: 'caveat', file: null }] })
  })

  it('refuses a built-in hand’s name, a name out of the pattern, a taken name, an unknown plotter hand and an unknown account', async ({
    admin,
    account,
    gateway,
  }) => {
    const url = fontsOf(gateway, account.id)
    expectError(await admin.post(url, { name: 'kalam', family: 'Mi Kalam' }), 400, 'Bad Request', /'kalam' es el de una letra incluida/)
    for (const name of ['Mayúsculas', 'a', '-guion', 'con espacio', 'x'.repeat(41)])
      expectError(await admin.post(url, { name, family: 'Mi Letra' }), 400, 'Bad Request', /El campo 'name' debe tener de 2 a 40 letras minúsculas/)
    expectError(await admin.post(url, { name: 'mi-letra', family: 'Mi Letra', plotterFont: 'arial' }), 400, 'Bad Request', /'plotterFont'/)
    expect((await admin.post(url, { name: 'mi-letra', family: 'Mi Letra', plotterFont: 'kalam' })).json()).toMatchObject({ plotterFont: 'kalam' })
    expectError(await admin.post(url, { name: 'mi-letra', family: 'Otra' }), 409, 'Conflict', /ya tiene una fuente llamada 'mi-letra'/)
    expectError(await admin.post(fontsOf(gateway, '00000000-0000-4000-8000-000000000000'), { name: 'mi-letra', family: 'Mi Letra' }), 404, 'Not Found')
    expectError(await admin.get(fontsOf(gateway, '00000000-0000-4000-8000-000000000000')), 404, 'Not Found', 'La cuenta no existe')
    expectError(await admin.get(fontsOf(gateway, 'no-es-un-uuid')), 400, 'Bad Request')
    expectError(await admin.post(url, { name: 'otra-letra', family: '   ' }), 400, 'Bad Request', /'family'/)
    expectError(await admin.post(url, { name: 'otra-letra', family: 'Otra', file: 'x' }), 400, 'Bad Request', /'file'/)
  })
})

describe('PUT /admin/accounts/{id}/fonts/{name}/file', () => {
  it('stores each upload as a new version, lists the font after the built-in hands, and previews it', async ({ admin, account, client, gateway }) => {
    await admin.post(fontsOf(gateway, account.id), { name: 'mi-letra', family: 'Mi Letra' })
    const url = `${fontsOf(gateway, account.id)}/mi-letra/file`
    const uploads: Array<[Buffer, string]> = [
      [woff2, 'font/woff2'],
      [woff, 'font/woff'],
      [ttf, 'font/ttf'],
    ]
    for (const [index, [data, contentType]] of uploads.entries()) {
      const response = await admin.put(url, data, contentType)
      expect(response.statusCode, response.body).toBe(200)
      expect(response.json()).toEqual({
        name: 'mi-letra',
        family: 'Mi Letra',
        plotterFont: 'caveat',
        file: { contentType, bytes: data.length, sha256: expect.stringMatching(/^[0-9a-f]{64}$/), version: index + 1 },
      })
    }
    const fonts = (await client.get('/fonts')).json<{ data: Array<{ name: string; own: boolean; default: boolean }> }>().data
    expect(fonts.map(({ name, own }) => [name, own])).toEqual([
      ['caveat', false],
      ['dancing-script', false],
      ['homemade-apple', false],
      ['indie-flower', false],
      ['kalam', false],
      ['mi-letra', true],
    ])
    expect(fonts.at(-1)).toEqual({ name: 'mi-letra', family: 'Mi Letra', default: false, own: true })
    for (const name of ['mi-letra', 'caveat']) {
      const preview = await client.get(`/fonts/${name}/preview`)
      expect(preview.statusCode).toBe(200)
      expect(preview.headers['content-type']).toBe('image/png')
      const { width, height } = await sharp(preview.rawPayload).metadata()
      expect(width).toBeLessThanOrEqual(1000)
      expect(width).toBeGreaterThan(300)
      expect(height).toBeGreaterThan(40)
    }
  })

  it('numbers concurrent uploads one after the other', async ({ admin, account, gateway }) => {
    await admin.post(fontsOf(gateway, account.id), { name: 'mi-letra', family: 'Mi Letra' })
    const url = `${fontsOf(gateway, account.id)}/mi-letra/file`
    const answers = await Promise.all([admin.put(url, woff2, 'font/woff2'), admin.put(url, woff, 'font/woff'), admin.put(url, ttf, 'font/ttf')])
    expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200, 200])
    expect(answers.map((answer) => answer.json<{ file: { version: number } }>().file.version).sort()).toEqual([1, 2, 3])
    expect(await fontFileCount(gateway, account.id)).toBe(3)
  })

  it('refuses hostile fonts with 400 in Spanish, storing nothing and leaving the gateway answering: a glyph of 100,000 points, a WOFF2 bomb, a font without ñ', async ({
    admin,
    account,
    client,
    gateway,
  }) => {
    await admin.post(fontsOf(gateway, account.id), { name: 'mi-letra', family: 'Mi Letra' })
    const url = `${fontsOf(gateway, account.id)}/mi-letra/file`
    const zeros = await brotliOfZeros(400)
    const hostile: Array<[string, Buffer, string, RegExp]> = [
      ['a glyph of 100,000 points', withHundredThousandPointA(ttf), 'font/ttf', /«a».*puntos/],
      ['a WOFF2 that inflates to 400 MB', woff2Of(zeros, zeros.length * 50), 'font/woff2', /se descomprimen a más de los/],
      ['a WOFF2 that declares 400 MB', woff2Of(zeros, 400 * 1024 * 1024), 'font/woff2', /400 MB una vez descomprimida/],
      ['a font without ñ Ñ', withoutCharacters(ttf, 'ñÑ'), 'font/ttf', /: ñ Ñ\./],
    ]
    for (const [what, data, contentType, message] of hostile) {
      const started = performance.now()
      // The public API answers meanwhile: the font is read in a child process.
      const [upload, fonts] = await Promise.all([admin.put(url, data, contentType), client.get('/fonts')])
      console.log(`${what} (${data.length} bytes): ${upload.statusCode} in ${Math.round(performance.now() - started)} ms`)
      expectError(upload, 400, 'Bad Request', message)
      expect(fonts.statusCode).toBe(200)
    }
    expect(await fontFileCount(gateway, account.id)).toBe(0)
  })

  it('refuses a file over 5 MB (413), of another type (415), or that is not a font (400), storing nothing', async ({ admin, account, gateway }) => {
    await admin.post(fontsOf(gateway, account.id), { name: 'mi-letra', family: 'Mi Letra' })
    const url = `${fontsOf(gateway, account.id)}/mi-letra/file`
    const oversize = Buffer.concat([woff, Buffer.alloc(FONT_MAX_BYTES + 1 - woff.length)])
    expectError(await admin.put(url, oversize, 'font/woff'), 413, 'Payload Too Large')
    expectError(await admin.put(url, woff, 'application/octet-stream'), 415, 'Unsupported Media Type', /font\/ttf, font\/otf, font\/woff, font\/woff2/)
    expectError(await admin.put(url, woff.subarray(0, Math.floor(woff.length / 2)), 'font/woff'), 400, 'Bad Request')
    expectError(await admin.put(url, Buffer.from('esto no es una fuente'), 'font/ttf'), 400, 'Bad Request')
    expectError(await admin.put(url, woff2, 'font/ttf'), 400, 'Bad Request')
    expect(await fontFileCount(gateway, account.id)).toBe(0)
    expectError(await admin.put(`${fontsOf(gateway, account.id)}/otra/file`, woff, 'font/woff'), 404, 'Not Found', /ninguna fuente llamada 'otra'/)
    expectError(
      await admin.put(`${fontsOf(gateway, '00000000-0000-4000-8000-000000000000')}/mi-letra/file`, woff, 'font/woff'),
      404,
      'Not Found',
      'La cuenta no existe',
    )
    expect(await fontFileCount(gateway, account.id)).toBe(0)
  })
})

describe('a letter in an account font', () => {
  it('is accepted in the latest version of the file and keeps it; another account’s font is as unknown as none, and charges nothing', async ({
    admin,
    account,
    client,
    gateway,
  }) => {
    await admin.post(fontsOf(gateway, account.id), { name: 'mi-letra', family: 'Mi Letra' })
    const url = `${fontsOf(gateway, account.id)}/mi-letra/file`
    await admin.put(url, woff2, 'font/woff2')
    const first = await client.post('/single', singleLetter(account, { fontName: 'mi-letra', message: '¡Hola, Begoña! ¿Qué tal el año?' }))
    expect(first.statusCode, first.body).toBe(200)
    await admin.put(url, woff, 'font/woff')
    const second = await client.post('/single', singleLetter(account, { fontName: 'mi-letra' }))
    const ids = [first.json<{ cardId: string }>().cardId, second.json<{ cardId: string }>().cardId]
    const rows = await gateway.db
      .select({ id: letters.id, fontName: letters.fontName, fontVersion: letters.fontVersion })
      .from(letters)
      .where(inArray(letters.id, ids))
    expect(ids.map((id) => rows.find((row) => row.id === id))).toEqual([
      { id: ids[0], fontName: 'mi-letra', fontVersion: 1 },
      { id: ids[1], fontName: 'mi-letra', fontVersion: 2 },
    ])
    expect((await client.get(`/cards/${ids[0]}`)).json()).toMatchObject({ fontName: 'mi-letra' })
    // The database holds a letter to a version that exists, whoever writes it.
    const refusedBy = (write: Promise<unknown>) =>
      write.then(
        () => 'written',
        (error: { cause?: { constraint_name?: string } }) => error.cause?.constraint_name,
      )
    expect(await refusedBy(gateway.db.update(letters).set({ fontVersion: 99 }).where(eq(letters.id, ids[0]!)))).toBe('letters_font_version_fk')
    expect(await refusedBy(gateway.db.update(letters).set({ fontVersion: null }).where(eq(letters.id, ids[0]!)))).toBe('letters_font_both_or_neither')

    const other = await adminAccount(gateway, 50)
    const otherClient = publicClient(gateway, other.apiKey)
    const before = await moneyState(gateway.db, other.id)
    expectError(
      await otherClient.post('/single', singleLetter(other, { fontName: 'mi-letra' })),
      400,
      'Bad Request',
      "La fuente 'mi-letra' no existe; las disponibles son: caveat, dancing-script, homemade-apple, indie-flower, kalam",
    )
    expectError(await otherClient.get('/fonts/mi-letra/preview'), 404, 'Not Found')
    expectError(await otherClient.get(`/fonts/${'x'.repeat(65)}/preview`), 400, 'Bad Request')
    expect(await moneyState(gateway.db, other.id)).toEqual(before)
  })

  it('is drawn whatever layout rules the font carries: a lookup that calls itself is accepted, written and proofed, not a stack overflow', async ({
    admin,
    account,
    client,
    gateway,
  }) => {
    await admin.post(fontsOf(gateway, account.id), { name: 'mi-letra', family: 'Mi Letra' })
    const x = (fontkit.create(ttf) as fontkit.Font).glyphForCodePoint(0x78).id
    const upload = await admin.put(`${fontsOf(gateway, account.id)}/mi-letra/file`, withRecursiveLayout(ttf, x, 0), 'font/ttf')
    expect(upload.statusCode, upload.body).toBe(200)
    const letter = await client.post('/single', singleLetter(account, { fontName: 'mi-letra', message: 'Un xilófono, por favor' }))
    expect(letter.statusCode, letter.body).toBe(200)
    const proof = await client.get(`/cards/${letter.json<{ cardId: string }>().cardId}/proof`)
    expect(proof.statusCode, proof.body.slice(0, 200)).toBe(200)
  })

  it('names at most 20 of the account’s own fonts when it refuses an unknown one, and points to GET /fonts for the rest', async ({
    account,
    client,
    gateway,
  }) => {
    const names = Array.from({ length: 21 }, (_, index) => `letra-${String(index).padStart(2, '0')}`)
    const fonts = await gateway.db
      .insert(accountFonts)
      .values(names.map((name) => ({ accountId: account.id, name, family: name })))
      .returning({ id: accountFonts.id })
    // Rows as an upload stores them; what a refusal reads is only that each has a file.
    await gateway.db.insert(accountFontFiles).values(
      fonts.map(({ id }) => ({
        fontId: id,
        version: 1,
        contentType: 'font/woff' as const,
        bytes: woff.length,
        sha256: '0'.repeat(64),
        original: woff,
        face: ttf,
        preview: woff,
      })),
    )
    const refused = expectError(await client.post('/single', singleLetter(account, { fontName: 'otra' })), 400, 'Bad Request')
    expect(refused.message).toBe(
      `La fuente 'otra' no existe; las disponibles son: caveat, dancing-script, homemade-apple, indie-flower, kalam, ${names.slice(0, 20).join(', ')} y otras (GET /fonts las lista todas)`,
    )
  })

  it('refuses text the font cannot write, naming the characters', async ({ admin, account, client, gateway }) => {
    await admin.post(fontsOf(gateway, account.id), { name: 'mi-letra', family: 'Mi Letra' })
    await admin.put(`${fontsOf(gateway, account.id)}/mi-letra/file`, woff2, 'font/woff2')
    expectError(
      await client.post('/single', singleLetter(account, { fontName: 'mi-letra', message: 'Dziękuję, Łukasz' })),
      400,
      'Bad Request',
      "El campo 'message' contiene caracteres que la letra 'mi-letra' no puede escribir: ę Ł",
    )
  })

  it('refuses a sender whose name the font cannot write, though every built-in hand can, charging nothing', async ({ admin, account, client, gateway }) => {
    await admin.post(fontsOf(gateway, account.id), { name: 'mi-letra', family: 'Mi Letra' })
    await admin.put(`${fontsOf(gateway, account.id)}/mi-letra/file`, woff2, 'font/woff2')
    // Patrick Hand has no µ; the built-in hands all do, so the sender was accepted.
    const sender = await admin.post(`/admin/accounts/${account.id}/senders`, { name: 'Laboratorio µ' })
    expect(sender.statusCode, sender.body).toBe(201)
    const senderId = sender.json<{ id: string }>().id
    const before = await moneyState(gateway.db, account.id)
    expectError(
      await client.post('/single', singleLetter({ ...account, senderId }, { fontName: 'mi-letra' })),
      400,
      'Bad Request',
      "El remitente (su campo 'name') contiene caracteres que la letra 'mi-letra' no puede escribir: µ",
    )
    expect(await moneyState(gateway.db, account.id)).toEqual(before)
    expect((await client.post('/single', singleLetter({ ...account, senderId }, { fontName: 'kalam' }))).statusCode).toBe(200)
  })

  it('is the campaign’s font when the campaign names it, for every letter of it', async ({ admin, account, client, gateway }) => {
    await admin.post(fontsOf(gateway, account.id), { name: 'mi-letra', family: 'Mi Letra' })
    const campaign = {
      name: 'Con letra propia',
      cardDesignId: account.cardDesignId,
      envelopeDesignId: account.envelopeDesignId,
      senderId: account.senderId,
      fontName: 'mi-letra',
      message: 'Hola {{nombre}}',
      variables: [{ name: 'nombre', maxSize: 20, defaultValue: 'amigo', example: 'Ana' }],
    }
    expectError(await admin.post(`/admin/accounts/${account.id}/campaigns`, campaign), 400, 'Bad Request', /aún no tiene archivo/)
    await admin.put(`${fontsOf(gateway, account.id)}/mi-letra/file`, woff2, 'font/woff2')
    const created = await admin.post(`/admin/accounts/${account.id}/campaigns`, campaign)
    expect(created.statusCode, created.body).toBe(201)
    const { name, surname, address, zip, city, country } = singleLetter(account, {}) as Record<string, string>
    const letter = await client.post('/card', { campaignId: created.json<{ id: string }>().id, name, surname, address, zip, city, country })
    expect(letter.statusCode, letter.body).toBe(200)
    const [row] = await gateway.db
      .select({ fontName: letters.fontName, fontVersion: letters.fontVersion })
      .from(letters)
      .where(eq(letters.id, letter.json<{ cardId: string }>().cardId))
    expect(row).toEqual({ fontName: 'mi-letra', fontVersion: 1 })
  })
})
