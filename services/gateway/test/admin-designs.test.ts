import { describe, expect } from 'vitest'
import { count, eq } from 'drizzle-orm'
import sharp from 'sharp'
import { Value } from 'typebox/value'
import { PrintSpec } from '@letters/contracts'
import { artworks, letters } from '@letters/db'
import { cardSvg, logoSvg, pdfOf, pngOf, signatureSvg } from '@letters/test/support/artwork'
import { it } from '@letters/test/support/fixtures'
import { UNKNOWN_ID, expectError, publicClient, singleLetter } from './helpers.js'

const artworkCount = async (app: { db: import('@letters/db').Db }, ownerId: string) =>
  (await app.db.select({ n: count() }).from(artworks).where(eq(artworks.ownerId, ownerId)))[0]!.n

describe('card designs are products', () => {
  it('takes just a name, as before, and answers the whole design with its defaults', async ({ admin, account }) => {
    const response = await admin.post(`/admin/accounts/${account.id}/card-designs`, { name: 'Navidad' })
    expect(response.statusCode).toBe(201)
    expect(response.json()).toEqual({
      id: expect.any(String),
      name: 'Navidad',
      format: 'A6',
      size: { width: 148, height: 105 },
      production: 'printed',
      stockCode: null,
      artwork: null,
      qrPlacement: null,
    })
  })

  it('takes a format, a production and a stock code, and changes them with PATCH', async ({ admin, account }) => {
    const created = await admin.post(`/admin/accounts/${account.id}/card-designs`, {
      name: 'Clásica',
      format: '5x7',
      production: 'preprinted',
      stockCode: 'CLASICA-57',
    })
    expect(created.json()).toMatchObject({ format: '5x7', size: { width: 177.8, height: 127 }, production: 'preprinted', stockCode: 'CLASICA-57' })
    const id = created.json<{ id: string }>().id
    const changed = await admin.patch(`/admin/accounts/${account.id}/card-designs/${id}`, { format: 'A5', production: 'printed', stockCode: null })
    expect(changed.statusCode).toBe(200)
    expect(changed.json()).toMatchObject({ id, name: 'Clásica', format: 'A5', size: { width: 210, height: 148 }, production: 'printed', stockCode: null })
  })

  it('refuses a preprinted design without a stock code, on creation and on change', async ({ admin, account }) => {
    expectError(await admin.post(`/admin/accounts/${account.id}/card-designs`, { name: 'X', production: 'preprinted' }), 400, 'Bad Request', /stockCode/)
    const response = await admin.patch(`/admin/accounts/${account.id}/card-designs/${account.cardDesignId}`, { production: 'preprinted' })
    expectError(response, 400, 'Bad Request', /necesita 'stockCode'/)
  })

  it('refuses an unknown format or production with the list of valid ones', async ({ admin, account }) => {
    expectError(await admin.post(`/admin/accounts/${account.id}/card-designs`, { name: 'X', format: 'A4' }), 400, 'Bad Request', /A6, A5, 5x7/)
    expectError(await admin.post(`/admin/accounts/${account.id}/card-designs`, { name: 'X', production: 'digital' }), 400, 'Bad Request', /printed, preprinted/)
    expectError(await admin.patch(`/admin/accounts/${account.id}/card-designs/${account.cardDesignId}`, {}), 400, 'Bad Request', /al menos uno/)
  })

  it("answers 404 for another account's design or an unknown account", async ({ admin, account, gateway }) => {
    const { adminAccount } = await import('@letters/test/support/accounts')
    const other = await adminAccount(gateway)
    expectError(
      await admin.patch(`/admin/accounts/${account.id}/card-designs/${other.cardDesignId}`, { name: 'Mía' }),
      404,
      'Not Found',
      'El diseño de tarjeta no existe',
    )
    expectError(
      await admin.patch(`/admin/accounts/${UNKNOWN_ID}/card-designs/${account.cardDesignId}`, { name: 'Mía' }),
      404,
      'Not Found',
      'La cuenta no existe',
    )
    expectError(await admin.post(`/admin/accounts/${UNKNOWN_ID}/card-designs`, { name: 'X' }), 404, 'Not Found', 'La cuenta no existe')
  })
})

describe('envelope designs', () => {
  it('take a format, a stock code and a paper colour', async ({ admin, account }) => {
    const created = await admin.post(`/admin/accounts/${account.id}/envelope-designs`, {
      name: 'Kraft',
      format: 'DL',
      stockCode: 'DL-KRAFT',
      paperColor: '#c8a27a',
    })
    expect(created.statusCode).toBe(201)
    expect(created.json()).toEqual({
      id: expect.any(String),
      name: 'Kraft',
      format: 'DL',
      size: { width: 220, height: 110 },
      stockCode: 'DL-KRAFT',
      paperColor: '#C8A27A',
      artwork: null,
    })
    const id = created.json<{ id: string }>().id
    expect((await admin.patch(`/admin/accounts/${account.id}/envelope-designs/${id}`, { paperColor: null })).json()).toMatchObject({
      paperColor: null,
      format: 'DL',
    })
    expectError(await admin.post(`/admin/accounts/${account.id}/envelope-designs`, { name: 'X', paperColor: 'kraft' }), 400, 'Bad Request', /#RRGGBB/)
    expectError(await admin.post(`/admin/accounts/${account.id}/envelope-designs`, { name: 'X', format: 'C4' }), 400, 'Bad Request', /C6, DL, C5/)
  })
})

describe('PUT …/artwork', () => {
  it('stores each upload as a new version and answers the design with its artwork', async ({ admin, account, gateway }) => {
    const url = `/admin/accounts/${account.id}/card-designs/${account.cardDesignId}/artwork`
    const first = await admin.put(url, cardSvg('A6'), 'image/svg+xml')
    expect(first.statusCode, first.body).toBe(200)
    expect(first.json()).toMatchObject({
      id: account.cardDesignId,
      artwork: { contentType: 'image/svg+xml', bytes: expect.any(Number), sha256: expect.stringMatching(/^[0-9a-f]{64}$/), version: 1 },
    })
    const second = await admin.put(url, await pngOf(1819, 1311), 'image/png')
    expect(second.statusCode, second.body).toBe(200)
    expect(second.json()).toMatchObject({ artwork: { contentType: 'image/png', version: 2 } })
    const third = await admin.put(url, await pdfOf(148, 105), 'application/pdf')
    expect(third.statusCode, third.body).toBe(200)
    expect(third.json()).toMatchObject({ artwork: { contentType: 'application/pdf', version: 3 } })
    expect(await artworkCount(gateway, account.cardDesignId)).toBe(3)
  })

  it('keeps artwork to the format it was made for: a format change shows none until the new format’s is uploaded', async ({
    admin,
    account,
    client,
    gateway,
  }) => {
    const url = `/admin/accounts/${account.id}/card-designs/${account.cardDesignId}/artwork`
    expect((await admin.put(url, cardSvg('A6'), 'image/svg+xml')).json()).toMatchObject({ artwork: { version: 1 } })
    const changed = await admin.patch(`/admin/accounts/${account.id}/card-designs/${account.cardDesignId}`, { format: 'A5' })
    expect(changed.json()).toMatchObject({ format: 'A5', artwork: null })
    // A letter accepted now prints no front rather than an A6 front stretched over an A5 card.
    const sent = await client.post('/single', singleLetter(account))
    const [letter] = await gateway.db.select({ spec: letters.printSpec }).from(letters).where(eq(letters.id, sent.json<{ cardId: string }>().cardId))
    expect(letter?.spec).toMatchObject({ card: { format: 'A5', artwork: null } })
    expect(Value.Check(PrintSpec, letter?.spec)).toBe(true)
    const a5 = await admin.put(url, cardSvg('A5'), 'image/svg+xml')
    expect(a5.json()).toMatchObject({ format: 'A5', artwork: { version: 2 } })
    // Back to A6: its own artwork again.
    expect((await admin.patch(`/admin/accounts/${account.id}/card-designs/${account.cardDesignId}`, { format: 'A6' })).json()).toMatchObject({
      artwork: { version: 1 },
    })
  })

  it('numbers concurrent uploads one after the other', async ({ admin, account, gateway }) => {
    const url = `/admin/accounts/${account.id}/card-designs/${account.cardDesignId}/artwork`
    const answers = await Promise.all(Array.from({ length: 4 }, (_, i) => admin.put(url, cardSvg('A6', { fill: `#10${i}0${i}0` }), 'image/svg+xml')))
    expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200, 200, 200])
    expect(answers.map((answer) => answer.json<{ artwork: { version: number } }>().artwork.version).sort()).toEqual([1, 2, 3, 4])
    expect(await artworkCount(gateway, account.cardDesignId)).toBe(4)
  })

  it('refuses each bad file with its reason in Spanish, storing nothing', async ({ admin, account, gateway }) => {
    const url = `/admin/accounts/${account.id}/card-designs/${account.cardDesignId}/artwork`
    const refusals: Array<[Buffer | string, string, number, RegExp]> = [
      [cardSvg('A6', { extra: '<script>alert(1)</script>' }), 'image/svg+xml', 400, /script/i],
      [cardSvg('A6', { extra: '<image href="https://evil.example/x.png" width="10" height="10"/>' }), 'image/svg+xml', 400, /referencia|externa|https/i],
      [cardSvg('A6', { extra: '<foreignObject><div xmlns="http://www.w3.org/1999/xhtml">x</div></foreignObject>' }), 'image/svg+xml', 400, /foreignObject/],
      [
        '<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 154 111">&x;</svg>',
        'image/svg+xml',
        400,
        /DOCTYPE|entidad/i,
      ],
      ['<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100"><rect width="100" height="100"/></svg>', 'image/svg+xml', 400, /proporci/i],
      ['<svg', 'image/svg+xml', 400, /XML/],
      [await pngOf(800, 567), 'image/png', 400, /300/],
      [await pdfOf(100, 100), 'application/pdf', 400, /mm/],
      [Buffer.from('hola'), 'application/pdf', 400, /PDF/],
      [Buffer.from('hola'), 'text/plain', 415, /Content-Type/],
      [Buffer.alloc(20 * 1024 * 1024 + 1, 1), 'image/png', 413, /20 MB/],
    ]
    for (const [body, type, status, message] of refusals) {
      const response = await admin.put(url, body, type)
      expect(response.statusCode, `${type}: ${response.body}`).toBe(status)
      expect(response.json<{ message: string }>().message).toMatch(message)
    }
    expect(await artworkCount(gateway, account.cardDesignId)).toBe(0)
  })

  it("answers an empty Content-Type or a list of types with the artwork routes' own 415, storing nothing", async ({ admin, account, gateway }) => {
    const owners = {
      [account.cardDesignId]: `card-designs/${account.cardDesignId}`,
      [account.envelopeDesignId]: `envelope-designs/${account.envelopeDesignId}`,
      [account.signatureId]: `signatures/${account.signatureId}`,
    }
    for (const [ownerId, path] of Object.entries(owners)) {
      for (const contentType of ['', 'image/svg+xml, image/png', 'image/png, application/json']) {
        const response = await admin.put(`/admin/accounts/${account.id}/${path}/artwork`, cardSvg('A6'), contentType)
        expectError(response, 415, 'Unsupported Media Type', /El archivo debe enviarse tal cual, con Content-Type image\/svg\+xml/)
      }
      expect(await artworkCount(gateway, ownerId)).toBe(0)
    }
  })

  it("takes a card's front on a preprinted design as on a printed one (the proofs' picture of its stock), refusing a bad one on either in Spanish", async ({
    admin,
    account,
    client,
  }) => {
    const created = await admin.post(`/admin/accounts/${account.id}/card-designs`, { name: 'Clásica', production: 'preprinted', stockCode: 'CLASICA-A6' })
    expect(created.statusCode, created.body).toBe(201)
    const designs = { printed: account.cardDesignId, preprinted: created.json<{ id: string }>().id }
    for (const [production, id] of Object.entries(designs)) {
      const url = `/admin/accounts/${account.id}/card-designs/${id}/artwork`
      const square = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100"><rect width="100" height="100"/></svg>'
      expectError(await admin.put(url, square, 'image/svg+xml'), 400, 'Bad Request', /proporción \(ancho\/alto\)/)
      expectError(await admin.put(url, await pngOf(800, 567), 'image/png'), 400, 'Bad Request', /a 300 ppp hacen falta/)
      const uploaded = await admin.put(url, cardSvg('A6', { fill: '#ff0000' }), 'image/svg+xml')
      expect(uploaded.statusCode, uploaded.body).toBe(200)
      expect(uploaded.json()).toMatchObject({ id, production, artwork: { contentType: 'image/svg+xml', version: 1 } })
      expect((await client.get(`/card-designs/${id}`)).json()).toMatchObject({ production, artwork: { version: 1 } })
      // The preview a client shows when its users pick a design is that front, whichever the production.
      const { data } = await sharp((await client.get(`/card-designs/${id}/preview`)).rawPayload)
        .raw()
        .toBuffer({ resolveWithObject: true })
      expect([data[0]! > 240, data[1]! < 15, data[2]! < 15], production).toEqual([true, true, true])
    }
  })

  it('gives envelopes a logo and signatures a drawing', async ({ admin, account }) => {
    const logo = await admin.put(`/admin/accounts/${account.id}/envelope-designs/${account.envelopeDesignId}/artwork`, logoSvg, 'image/svg+xml')
    expect(logo.statusCode, logo.body).toBe(200)
    expect(logo.json()).toMatchObject({ id: account.envelopeDesignId, format: 'C6', artwork: { version: 1 } })
    const signature = await admin.put(`/admin/accounts/${account.id}/signatures/${account.signatureId}/artwork`, signatureSvg, 'image/svg+xml')
    expect(signature.statusCode, signature.body).toBe(200)
    expect(signature.json()).toEqual({ id: account.signatureId, name: expect.any(String), artwork: expect.objectContaining({ version: 1 }) })
    const opaque = await admin.put(`/admin/accounts/${account.id}/signatures/${account.signatureId}/artwork`, await pngOf(600, 200), 'image/png')
    expectError(opaque, 400, 'Bad Request', /transparente/)
    const transparent = await admin.put(
      `/admin/accounts/${account.id}/signatures/${account.signatureId}/artwork`,
      await pngOf(600, 200, { alpha: true }),
      'image/png',
    )
    expect(transparent.json()).toMatchObject({ artwork: { contentType: 'image/png', version: 2 } })
  })

  it('answers 404 for a design that is not the account’s', async ({ admin, account }) => {
    expectError(
      await admin.put(`/admin/accounts/${account.id}/card-designs/${UNKNOWN_ID}/artwork`, cardSvg(), 'image/svg+xml'),
      404,
      'Not Found',
      'El diseño de tarjeta no existe',
    )
    expectError(
      await admin.put(`/admin/accounts/${UNKNOWN_ID}/signatures/${account.signatureId}/artwork`, signatureSvg, 'image/svg+xml'),
      404,
      'Not Found',
      'La cuenta no existe',
    )
  })
})

describe('senders get a return address', () => {
  it('normalizes it by the rules of a recipient', async ({ admin, account }) => {
    const response = await admin.post(`/admin/accounts/${account.id}/senders`, {
      name: 'Papelería Luna',
      returnAddress: { name: 'Papelería Luna', address: 'c/ sierpes 4', zip: '41004', city: 'SEVILLA', country: 'es' },
    })
    expect(response.statusCode, response.body).toBe(201)
    expect(response.json()).toEqual({
      id: expect.any(String),
      name: 'Papelería Luna',
      returnAddress: {
        name: 'Papelería Luna',
        company: null,
        address: 'Calle Sierpes 4',
        zip: '41004',
        city: 'Sevilla',
        province: 'Sevilla',
        country: 'ES',
        countryName: 'España',
      },
    })
    const id = response.json<{ id: string }>().id
    const cleared = await admin.patch(`/admin/accounts/${account.id}/senders/${id}`, { returnAddress: null })
    expect(cleared.json()).toMatchObject({ returnAddress: null, name: 'Papelería Luna' })
  })

  it('refuses one the post could not deliver, and text the fonts cannot write', async ({ admin, account }) => {
    const bad = await admin.post(`/admin/accounts/${account.id}/senders`, {
      name: 'Luna',
      returnAddress: { name: 'Luna', address: 'Calle Mayor 1', zip: '99999', city: 'Madrid', country: 'ES' },
    })
    expectError(bad, 400, 'Bad Request', /remite.*código postal/)
    const unwritable = await admin.patch(`/admin/accounts/${account.id}/senders/${account.senderId}`, {
      returnAddress: { name: 'Luna 🌙', address: 'Calle Mayor 1', zip: '28013', city: 'Madrid', country: 'ES' },
    })
    expectError(unwritable, 400, 'Bad Request', /returnAddress.name/)
    expectError(await admin.patch(`/admin/accounts/${account.id}/senders/${UNKNOWN_ID}`, { name: 'X' }), 404, 'Not Found', 'El remitente no existe')
  })
})

describe('the public API shows designs', () => {
  it('lists keep their {id, name} shape; one design shows all of it; another account’s is 404', async ({ client, account, admin, gateway }) => {
    const list = await client.get('/card-designs')
    expect(list.json()).toEqual({ data: [{ id: account.cardDesignId, name: expect.any(String) }] })
    await admin.put(`/admin/accounts/${account.id}/card-designs/${account.cardDesignId}/artwork`, cardSvg(), 'image/svg+xml')
    const design = await client.get(`/card-designs/${account.cardDesignId}`)
    expect(design.statusCode).toBe(200)
    expect(design.json()).toMatchObject({
      id: account.cardDesignId,
      format: 'A6',
      size: { width: 148, height: 105 },
      production: 'printed',
      artwork: { version: 1 },
    })
    const envelope = await client.get(`/envelope-designs/${account.envelopeDesignId}`)
    expect(envelope.json()).toMatchObject({ id: account.envelopeDesignId, format: 'C6', size: { width: 162, height: 114 }, artwork: null })
    const { adminAccount } = await import('@letters/test/support/accounts')
    const other = await adminAccount(gateway)
    expectError(await client.get(`/card-designs/${other.cardDesignId}`), 404, 'Not Found', 'El diseño no existe')
    expectError(await client.get(`/envelope-designs/${other.envelopeDesignId}`), 404, 'Not Found')
    expectError(await client.get('/card-designs/no-es-un-id'), 404, 'Not Found')
    expectError(await client.get(`/card-designs/${other.cardDesignId}/preview`), 404, 'Not Found')
  })

  it('previews the front as a PNG at most 1,000 px wide, and a blank card without artwork', async ({ client, account, admin }) => {
    const blank = await client.get(`/card-designs/${account.cardDesignId}/preview`)
    expect(blank.statusCode).toBe(200)
    expect(blank.headers['content-type']).toBe('image/png')
    const blankSize = await sharp(blank.rawPayload).metadata()
    expect(blankSize.width).toBeLessThanOrEqual(1000)
    expect(Math.abs(blankSize.width / blankSize.height - 148 / 105)).toBeLessThan(0.02)
    await admin.put(`/admin/accounts/${account.id}/card-designs/${account.cardDesignId}/artwork`, cardSvg('A6', { fill: '#ff0000' }), 'image/svg+xml')
    const front = await client.get(`/card-designs/${account.cardDesignId}/preview`)
    const { data, info } = await sharp(front.rawPayload).raw().toBuffer({ resolveWithObject: true })
    expect(info.width).toBeLessThanOrEqual(1000)
    // The corner of the artwork is its background: red, where the blank card was white.
    expect([data[0]! > 240, data[1]! < 15, data[2]! < 15]).toEqual([true, true, true])
  })

  it("previews an envelope's logo and a signature's drawing as PNGs; 404 without one, for another account's or an id that is none", async ({
    client,
    account,
    admin,
    gateway,
  }) => {
    const under = `/admin/accounts/${account.id}`
    expectError(await client.get(`/envelope-designs/${account.envelopeDesignId}/preview`), 404, 'Not Found', 'El diseño de sobre no existe o no tiene logotipo')
    expectError(await client.get(`/signatures/${account.signatureId}/preview`), 404, 'Not Found', 'La firma no existe o no tiene dibujo')
    expect((await admin.put(`${under}/envelope-designs/${account.envelopeDesignId}/artwork`, logoSvg, 'image/svg+xml')).statusCode).toBe(200)
    expect((await admin.put(`${under}/signatures/${account.signatureId}/artwork`, signatureSvg, 'image/svg+xml')).statusCode).toBe(200)
    for (const url of [`/envelope-designs/${account.envelopeDesignId}/preview`, `/signatures/${account.signatureId}/preview`]) {
      const response = await client.get(url)
      expect(response.statusCode, url).toBe(200)
      expect(response.headers['content-type']).toBe('image/png')
      const { info, data } = await sharp(response.rawPayload).flatten({ background: '#ffffff' }).raw().toBuffer({ resolveWithObject: true })
      expect(info.width).toBeLessThanOrEqual(1000)
      // Something is drawn: not every pixel is the first one's colour.
      const first = data.subarray(0, info.channels)
      let differing = 0
      for (let at = 0; at < data.length; at += info.channels) if (data[at] !== first[0] || data[at + 1] !== first[1] || data[at + 2] !== first[2]) differing++
      expect(differing).toBeGreaterThan(100)
    }
    const { adminAccount } = await import('@letters/test/support/accounts')
    const other = await adminAccount(gateway)
    expectError(await publicClient(gateway, other.apiKey).get(`/signatures/${account.signatureId}/preview`), 404, 'Not Found')
    expectError(await publicClient(gateway, other.apiKey).get(`/envelope-designs/${account.envelopeDesignId}/preview`), 404, 'Not Found')
    expectError(await client.get('/signatures/no-es-un-id/preview'), 404, 'Not Found')
  })

  it("shows one signature with its drawing, null before one is uploaded; 404 for another account's", async ({ client, account, admin, gateway }) => {
    expect((await client.get(`/signatures/${account.signatureId}`)).json()).toEqual({ id: account.signatureId, name: 'Firma', artwork: null })
    await admin.put(`/admin/accounts/${account.id}/signatures/${account.signatureId}/artwork`, signatureSvg, 'image/svg+xml')
    expect((await client.get(`/signatures/${account.signatureId}`)).json()).toMatchObject({ artwork: expect.objectContaining({ version: 1 }) })
    const { adminAccount } = await import('@letters/test/support/accounts')
    const other = await adminAccount(gateway)
    expectError(await publicClient(gateway, other.apiKey).get(`/signatures/${account.signatureId}`), 404, 'Not Found', 'La firma no existe')
    expectError(await client.get('/signatures/no-es-un-id'), 404, 'Not Found')
  })
})

describe('every new route’s other answers', () => {
  it('PATCH an envelope design: 400 for a bad field or none, 404 for another account’s', async ({ admin, account, gateway }) => {
    const { adminAccount } = await import('@letters/test/support/accounts')
    const other = await adminAccount(gateway)
    const url = `/admin/accounts/${account.id}/envelope-designs/${account.envelopeDesignId}`
    expectError(await admin.patch(url, {}), 400, 'Bad Request', /al menos uno/)
    expectError(await admin.patch(url, { format: 'A4' }), 400, 'Bad Request', /C6, DL, C5/)
    expectError(
      await admin.patch(`/admin/accounts/${account.id}/envelope-designs/${other.envelopeDesignId}`, { name: 'X' }),
      404,
      'Not Found',
      'El diseño de sobre no existe',
    )
    expectError(await admin.patch(`/admin/accounts/${account.id}/envelope-designs/no-es-un-id`, { name: 'X' }), 400, 'Bad Request')
  })

  it('GET /envelope-designs/{id} with an id that is not a UUID is 404', async ({ client }) => {
    expectError(await client.get('/envelope-designs/sobre-1'), 404, 'Not Found', 'El diseño no existe')
  })

  it('GET /cards/{id}/proof.png: page 1 as a PNG; 400 for a page that is no number from 1 to 10; 404 for a page it lacks or another account’s letter', async ({
    client,
    account,
    gateway,
  }) => {
    const { adminAccount } = await import('@letters/test/support/accounts')
    const { publicClient } = await import('@letters/test/support/gateway')
    const sent = await client.post('/single', singleLetter(account))
    const cardId = sent.json<{ cardId: string }>().cardId
    const first = await client.get(`/cards/${cardId}/proof.png`)
    expect(first.statusCode).toBe(200)
    expect(first.headers['content-type']).toBe('image/png')
    for (const page of ['0', '-1', '11', 'abc']) {
      const response = await client.get(`/cards/${cardId}/proof.png?page=${page}`)
      expect(response.statusCode, `page=${page}`).toBe(400)
      expectError(response, 400, 'Bad Request', /'page'/)
    }
    // A letter without a printed front has two pages: its handwriting and its envelope.
    expect((await client.get(`/cards/${cardId}/proof.png?page=2`)).statusCode).toBe(200)
    expectError(await client.get(`/cards/${cardId}/proof.png?page=3`), 404, 'Not Found', 'La prueba no tiene página 3')
    const other = await adminAccount(gateway)
    expectError(await publicClient(gateway, other.apiKey).get(`/cards/${cardId}/proof.png`), 404, 'Not Found', 'La carta no existe')
  })

  it('POST /card takes its own signature over the campaign’s, and refuses another account’s with nothing charged', async ({
    admin,
    account,
    client,
    gateway,
  }) => {
    const { adminAccount } = await import('@letters/test/support/accounts')
    const other = await adminAccount(gateway)
    const second = (await admin.post(`/admin/accounts/${account.id}/signatures`, { name: 'Firma de Luis' })).json<{ id: string }>().id
    const campaign = await admin.post(`/admin/accounts/${account.id}/campaigns`, {
      name: 'Firmada',
      cardDesignId: account.cardDesignId,
      envelopeDesignId: account.envelopeDesignId,
      senderId: account.senderId,
      signatureId: account.signatureId,
      message: 'Gracias',
      variables: [],
    })
    expect(campaign.statusCode, campaign.body).toBe(201)
    const campaignId = campaign.json<{ id: string }>().id
    const recipient = { name: 'Ana', surname: 'Ruiz', address: 'Calle Mayor 1', zip: '28013', city: 'Madrid', country: 'ES' }
    const byDefault = await client.post('/card', { campaignId, ...recipient })
    const overridden = await client.post('/card', { campaignId, ...recipient, signatureId: second })
    const signatureOf = async (response: { json: <T>() => T }) =>
      (await client.get(`/cards/${response.json<{ cardId: string }>().cardId}`)).json<{ signatureId: string | null }>().signatureId
    expect(await signatureOf(byDefault)).toBe(account.signatureId)
    expect(await signatureOf(overridden)).toBe(second)
    const { balance } = (await admin.get(`/admin/accounts/${account.id}`)).json<{ balance: number }>()
    expectError(
      await client.post('/card', { campaignId, ...recipient, signatureId: other.signatureId }),
      400,
      'Bad Request',
      "El campo 'signatureId' no corresponde a ninguna firma de la cuenta",
    )
    expect((await admin.get(`/admin/accounts/${account.id}`)).json<{ balance: number }>().balance).toBe(balance)
    const refusedCampaign = await admin.post(`/admin/accounts/${account.id}/campaigns`, {
      name: 'Ajena',
      cardDesignId: account.cardDesignId,
      envelopeDesignId: account.envelopeDesignId,
      senderId: account.senderId,
      signatureId: other.signatureId,
      message: 'Gracias',
      variables: [],
    })
    expectError(refusedCampaign, 400, 'Bad Request', "El campo 'signatureId' no corresponde a ninguna firma de la cuenta")
  })
})
