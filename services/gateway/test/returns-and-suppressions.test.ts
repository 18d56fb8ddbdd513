import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { describe, expect } from 'vitest'
import { eq } from 'drizzle-orm'
import { returnReasonLabels, returnReasons } from '@letters/contracts'
import { letters, type LetterStatus } from '@letters/db'
import { it as base } from '@letters/test/support/fixtures'
import type { Account } from '@letters/test/support/gateway'
import { metricSamples } from '@letters/test/support/metrics'
import type { App } from '../src/app.js'
import { bulkCampaign, bulkRecipient, type BulkAnswer } from './bulk-fixtures.js'
import { FLOOR_TOKEN, UNKNOWN_ID, adminAccount, adminClient, expectError, publicClient, singleLetter } from './helpers.js'

/**
 * A letter the post brings back, through the admin API (the floor's scanner has its own tests,
 * test/e2e/floor-returned.test.ts), and the suppression list it feeds: the next letter to that
 * address refused, however it is spelt, unless the request says otherwise; each mode's list and
 * each account's its own; and nothing of the recipient left after its erasure but the entry.
 * No workers run here: a letter is put in `mailed` by hand (SQL), as the floor's scan leaves it.
 */
const it = base.extend({ gatewayOptions: { isolate: 'returns', env: { FLOOR_TOKEN } } })

const run = promisify(execFile)

/** A letter of the account (of the key's mode) to this recipient, set to `status` by hand. */
async function letterIn(app: App, account: Account, status: LetterStatus, recipient: Record<string, unknown> = {}, apiKey = account.apiKey) {
  const response = await publicClient(app, apiKey).post('/single', singleLetter(account, recipient))
  expect(response.statusCode, response.body).toBe(200)
  const id = response.json<{ cardId: string }>().cardId
  if (status !== 'received') await app.db.update(letters).set({ status }).where(eq(letters.id, id))
  return id
}

const returnedVia = (app: App, id: string, reason: unknown) => adminClient(app).post(`/admin/cards/${id}/returned`, { reason })
const balanceOf = async (app: App, accountId: string) => (await adminClient(app).get(`/admin/accounts/${accountId}`)).json<{ balance: number }>().balance

type SuppressionPage = { data: Array<{ id: string; reason: string; createdAt: string; zip: string; country: string }>; nextCursor: string | null }
const suppressionsOf = async (app: App, apiKey: string) => {
  const response = await publicClient(app, apiKey).get('/suppressions')
  expect(response.statusCode, response.body).toBe(200)
  return response.json<SuppressionPage>()
}
const returnedEvents = async (app: App, apiKey: string, id: string) =>
  (await publicClient(app, apiKey).get(`/events?cardId=${id}&type=letter.returned`)).json<{ data: Array<{ type: string }> }>().data

/** letters_returned_total by reason, as /metrics shows it. */
async function returnedCounts(app: App): Promise<Record<string, number>> {
  const samples = await metricSamples(app, 'letters_returned_total')
  return Object.fromEntries(Object.entries(samples).map(([sample, value]) => [/reason="(\w+)"/.exec(sample)![1]!, value]))
}
/** What each reason's count went up by between two readings, the reasons that did not move left out. */
const added = (before: Record<string, number>, after: Record<string, number>) =>
  Object.fromEntries(Object.entries(after).flatMap(([reason, value]) => (value === (before[reason] ?? 0) ? [] : [[reason, value - (before[reason] ?? 0)]])))

/** The day a suppression's letter came back, as the refusal names it (Madrid's calendar). */
const dayOf = (instant: string) =>
  new Intl.DateTimeFormat('es-ES', { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'Europe/Madrid' }).format(new Date(instant))

describe('POST /admin/cards/{id}/returned', () => {
  it('returns a mailed letter with its reason and day, one letter.returned event, its address suppressed and nothing refunded', async ({
    gateway: app,
    account,
  }) => {
    const id = await letterIn(app, account, 'mailed', { address: 'Calle de Atocha 30', zip: '28012' })
    const balance = await balanceOf(app, account.id)
    const response = await returnedVia(app, id, 'unknown_recipient')
    expect(response.statusCode, response.body).toBe(200)
    const answer = response.json<{ card: Record<string, unknown>; suppressionId: string }>()
    expect(answer).toMatchObject({
      card: { id, accountId: account.id, status: 'returned', returnReason: 'unknown_recipient', returnedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) },
      suppressionId: expect.any(String),
    })
    expect(answer.card.events).toEqual(expect.arrayContaining([expect.objectContaining({ status: 'returned', detail: 'Devuelta por correos: Desconocido' })]))
    expect(await returnedEvents(app, account.apiKey, id)).toHaveLength(1)
    expect(await balanceOf(app, account.id)).toBe(balance)
    expect((await suppressionsOf(app, account.apiKey)).data).toEqual([
      { id: answer.suppressionId, reason: 'unknown_recipient', createdAt: expect.any(String), zip: '28012', country: 'ES' },
    ])
  })

  it('answers 404 for an unknown letter, 409 for one not mailed and for one returned already, 400 for a reason not among the six', async ({
    gateway: app,
    account,
  }) => {
    expectError(await returnedVia(app, UNKNOWN_ID, 'moved'), 404, 'Not Found', 'La carta no existe')
    const received = await letterIn(app, account, 'received', { address: 'Calle Ancha 2' })
    expectError(
      await returnedVia(app, received, 'moved'),
      409,
      'Conflict',
      'Solo una carta enviada puede marcarse como devuelta; esta está en estado «recibida» (received)',
    )
    const printed = await letterIn(app, account, 'printed', { address: 'Calle Ancha 4' })
    expectError(await returnedVia(app, printed, 'moved'), 409, 'Conflict', /esta está en estado «impresa» \(printed\)$/)

    const mailed = await letterIn(app, account, 'mailed', { address: 'Calle Ancha 6' })
    expectError(
      await returnedVia(app, mailed, 'lost'),
      400,
      'Bad Request',
      "El campo 'reason' debe ser uno de: unknown_recipient, bad_address, refused, moved, deceased, other",
    )
    expectError(await adminClient(app).post(`/admin/cards/${mailed}/returned`, {}), 400, 'Bad Request')
    expect((await returnedVia(app, mailed, 'moved')).statusCode).toBe(200)
    expectError(await returnedVia(app, mailed, 'moved'), 409, 'Conflict', 'La carta ya se marcó como devuelta')
    // A second return, even with another reason, changes nothing: one event, the first reason.
    expectError(await returnedVia(app, mailed, 'deceased'), 409, 'Conflict', 'La carta ya se marcó como devuelta')
    expect(await returnedEvents(app, account.apiKey, mailed)).toHaveLength(1)
    const card = (await publicClient(app, account.apiKey).get(`/cards/${mailed}`)).json<{ returnReason: string }>()
    expect(card.returnReason).toBe('moved')
  })

  it('returns a letter once under 10 concurrent returns: one 200, nine 409, one letter.returned event, one suppression entry', async ({
    gateway: app,
    account,
  }) => {
    const id = await letterIn(app, account, 'mailed', { address: 'Paseo del Prado 8', zip: '28014' })
    const balance = await balanceOf(app, account.id)
    const answers = await Promise.all(Array.from({ length: 10 }, () => returnedVia(app, id, 'bad_address')))
    const statuses = answers.map((answer) => answer.statusCode).sort()
    expect(statuses).toEqual([200, ...Array<number>(9).fill(409)])
    for (const answer of answers.filter((one) => one.statusCode === 409)) expectError(answer, 409, 'Conflict', 'La carta ya se marcó como devuelta')
    expect(await returnedEvents(app, account.apiKey, id)).toHaveLength(1)
    const list = await suppressionsOf(app, account.apiKey)
    expect(list.data).toHaveLength(1)
    expect(list.data[0]!.id).toBe(answers.find((answer) => answer.statusCode === 200)!.json<{ suppressionId: string }>().suppressionId)
    expect(await balanceOf(app, account.id)).toBe(balance)
  })

  it('counts each return once in letters_returned_total under its reason, and a refused second return not at all', async ({ gateway: app, account }) => {
    const moved = await letterIn(app, account, 'mailed', { address: 'Calle de Embajadores 12', zip: '28012' })
    const refused = await letterIn(app, account, 'mailed', { address: 'Calle de Embajadores 14', zip: '28012' })
    const before = await returnedCounts(app)
    expect((await returnedVia(app, moved, 'moved')).statusCode).toBe(200)
    expect(added(before, await returnedCounts(app))).toEqual({ moved: 1 })
    expect((await returnedVia(app, refused, 'refused')).statusCode).toBe(200)
    expect(added(before, await returnedCounts(app))).toEqual({ moved: 1, refused: 1 })
    // A letter returned already is not counted again, under its reason or another.
    expect((await returnedVia(app, moved, 'moved')).statusCode).toBe(409)
    expect((await returnedVia(app, moved, 'deceased')).statusCode).toBe(409)
    expect(added(before, await returnedCounts(app))).toEqual({ moved: 1, refused: 1 })
  })

  it('does not suppress the address of a letter refused by its recipient', async ({ gateway: app, account }) => {
    const id = await letterIn(app, account, 'mailed', { address: 'Calle Princesa 9', zip: '28008' })
    const response = await returnedVia(app, id, 'refused')
    expect(response.json()).toMatchObject({ card: { status: 'returned', returnReason: 'refused' }, suppressionId: null })
    expect((await suppressionsOf(app, account.apiKey)).data).toEqual([])
    expect((await publicClient(app, account.apiKey).post('/single', singleLetter(account, { address: 'Calle Princesa 9', zip: '28008' }))).statusCode).toBe(200)
  })
})

describe('the suppression list refuses the next letter to a returned address', () => {
  const street = { address: 'Calle de Alcalá 20', zip: '28014', city: 'Madrid', province: 'Madrid', country: 'ES' }

  it('refuses POST /single to the address however it is written (case, accents, "C/", spaces) with a 400 naming the day and the reason, charging nothing; ignoreSuppression sends it', async ({
    gateway: app,
    account,
  }) => {
    const id = await letterIn(app, account, 'mailed', street)
    expect((await returnedVia(app, id, 'bad_address')).statusCode).toBe(200)
    const [entry] = (await suppressionsOf(app, account.apiKey)).data
    const balance = await balanceOf(app, account.id)
    const client = publicClient(app, account.apiKey)

    for (const spelling of ['CALLE DE ALCALA 20', 'C/ de Alcalá 20', 'c/ de alcala, 20', '  Calle   de  Alcalá   20 ']) {
      const response = await client.post('/single', singleLetter(account, { ...street, address: spelling, name: 'Otra', surname: 'Persona' }))
      const body = expectError(response, 400, 'Bad Request')
      expect(body.message).toContain(`fue devuelta el ${dayOf(entry!.createdAt)} como dirección incorrecta`)
      expect(body.message).toMatch(
        /^La dirección .+, 28014 \(ES\) fue devuelta el \d{1,2} de [a-z]+ de \d{4} como dirección incorrecta: no se le escribe de nuevo salvo que la petición lleve 'ignoreSuppression': true/,
      )
    }
    // Another door of the same street is another address.
    const next = await client.post('/single', singleLetter(account, { ...street, address: 'Calle de Alcalá 22' }))
    expect(next.statusCode, next.body).toBe(200)
    const { cost } = (await client.get(`/cards/${next.json<{ cardId: string }>().cardId}`)).json<{ cost: number }>()
    expect(await balanceOf(app, account.id)).toBe(balance - cost)

    const anyway = await client.post('/single', singleLetter(account, { ...street, address: 'C/ de Alcalá 20', ignoreSuppression: true }))
    expect(anyway.statusCode, anyway.body).toBe(200)
    expect(await balanceOf(app, account.id)).toBe(balance - 2 * cost)
  })

  it('refuses POST /card to the address with the same 400, storing and charging nothing; ignoreSuppression sends it', async ({ gateway: app, account }) => {
    const id = await letterIn(app, account, 'mailed', street)
    expect((await returnedVia(app, id, 'bad_address')).statusCode).toBe(200)
    const [entry] = (await suppressionsOf(app, account.apiKey)).data
    const campaignId = await bulkCampaign(app, account)
    const client = publicClient(app, account.apiKey)
    const balance = await balanceOf(app, account.id)
    const lettersOf = async () =>
      (await app.db.select({ id: letters.id }).from(letters).where(eq(letters.accountId, account.id))).map((letter) => letter.id).sort()
    const stored = await lettersOf()

    const card = bulkRecipient({ ...street, address: 'c/ de alcala, 20', name: 'Otra', surname: 'Persona' })
    const refused = expectError(await client.post('/card', { campaignId, ...card }), 400, 'Bad Request')
    expect(refused.message).toMatch(
      /^La dirección .+, 28014 \(ES\) fue devuelta el \d{1,2} de [a-z]+ de \d{4} como dirección incorrecta: no se le escribe de nuevo salvo que la petición lleve 'ignoreSuppression': true/,
    )
    expect(refused.message).toContain(`fue devuelta el ${dayOf(entry!.createdAt)}`)
    expect(await balanceOf(app, account.id)).toBe(balance)
    expect(await lettersOf()).toEqual(stored)

    const anyway = await client.post('/card', { campaignId, ...card, ignoreSuppression: true })
    expect(anyway.statusCode, anyway.body).toBe(200)
    const { cost } = (await client.get(`/cards/${anyway.json<{ cardId: string }>().cardId}`)).json<{ cost: number }>()
    expect(cost).toBeGreaterThan(0)
    expect(await balanceOf(app, account.id)).toBe(balance - cost)
  })

  it('lists a suppressed recipient of POST /cards/bulk in errors and creates and charges the others; a CSV too, and ?ignoreSuppression=true sends all', async ({
    gateway: app,
    account,
  }) => {
    const id = await letterIn(app, account, 'mailed', street)
    expect((await returnedVia(app, id, 'bad_address')).statusCode).toBe(200)
    const campaignId = await bulkCampaign(app, account)
    const client = publicClient(app, account.apiKey)
    const balance = await balanceOf(app, account.id)

    const recipients = [
      bulkRecipient({ name: 'Ana', address: 'Calle Mayor 3' }),
      bulkRecipient({ name: 'Bea', ...street, address: 'calle de alcala 20' }),
      bulkRecipient({ name: 'Carla', address: 'Calle Mayor 5' }),
    ]
    const json = await client.post('/cards/bulk', { campaignId, recipients })
    expect(json.statusCode, json.body).toBe(200)
    const answer = json.json<BulkAnswer>()
    expect(answer).toMatchObject({
      created: 2,
      cardIds: [expect.any(String), null, expect.any(String)],
      errors: [{ index: 1, error: 'Bad Request', message: expect.stringMatching(/fue devuelta el .+ como dirección incorrecta/) }],
    })
    const cost = answer.cost!
    // Two letters charged, the suppressed one not.
    const { cost: each } = (await client.get(`/cards/${answer.cardIds[0]}`)).json<{ cost: number }>()
    expect(cost).toBe(2 * each)
    expect(await balanceOf(app, account.id)).toBe(balance - cost)

    const csv =
      'name,surname,address,zip,city,country,nombre,cupon\r\n' +
      'Dora,Sanz,Calle Mayor 7,28013,Madrid,ES,Dora,NAV1\r\n' +
      'Eva,Gil,C/ de Alcalá 20,28014,Madrid,ES,Eva,NAV2\r\n' +
      'Fina,Paz,Calle Mayor 9,28013,Madrid,ES,Fina,NAV3\r\n'
    const post = (query: string) => client.post(`/cards/bulk?campaignId=${campaignId}${query}`, csv, { 'content-type': 'text/csv' })
    const fromCsv = (await post('')).json<BulkAnswer>()
    expect(fromCsv).toMatchObject({ created: 2, cardIds: [expect.any(String), null, expect.any(String)], errors: [{ index: 1, error: 'Bad Request' }] })
    expect(fromCsv.errors[0]!.message).toContain('como dirección incorrecta')
    expect(await balanceOf(app, account.id)).toBe(balance - 2 * cost)

    const all = (await post('&ignoreSuppression=true')).json<BulkAnswer>()
    expect(all).toMatchObject({ created: 3, errors: [] })
    expect(await balanceOf(app, account.id)).toBe(balance - 2 * cost - all.cost!)
  })

  it('lets the next letter through once DELETE /suppressions/{id} lifts the entry (204), which is then unknown (404)', async ({ gateway: app, account }) => {
    const id = await letterIn(app, account, 'mailed', street)
    const { suppressionId } = (await returnedVia(app, id, 'moved')).json<{ suppressionId: string }>()
    const client = publicClient(app, account.apiKey)
    expectError(await client.post('/single', singleLetter(account, street)), 400, 'Bad Request', /porque el destinatario se ha mudado/)
    const lifted = await client.delete(`/suppressions/${suppressionId}`)
    expect(lifted.statusCode, lifted.body).toBe(204)
    expect((await suppressionsOf(app, account.apiKey)).data).toEqual([])
    const next = await client.post('/single', singleLetter(account, street))
    expect(next.statusCode, next.body).toBe(200)
    expectError(
      await client.delete(`/suppressions/${suppressionId}`),
      404,
      'Not Found',
      'La entrada no existe en la lista de direcciones suprimidas de la cuenta',
    )
  })

  it("keeps each mode's list apart: a test key sees and applies only the test list, a live key only the live one", async ({
    gateway: app,
    account,
    testKey,
  }) => {
    const testLetter = await letterIn(app, account, 'mailed', street, testKey)
    const { suppressionId: testEntry } = (await returnedVia(app, testLetter, 'deceased')).json<{ suppressionId: string }>()
    expect((await suppressionsOf(app, testKey)).data.map((entry) => entry.id)).toEqual([testEntry])
    expect((await suppressionsOf(app, account.apiKey)).data).toEqual([])
    // The live key writes to the address; the test key is refused it.
    expect((await publicClient(app, account.apiKey).post('/single', singleLetter(account, street))).statusCode).toBe(200)
    expectError(await publicClient(app, testKey).post('/single', singleLetter(account, street)), 400, 'Bad Request', /porque el destinatario ha fallecido/)
    // Nor can the live key lift the test entry.
    expectError(await publicClient(app, account.apiKey).delete(`/suppressions/${testEntry}`), 404, 'Not Found')
    expect((await publicClient(app, testKey).delete(`/suppressions/${testEntry}`)).statusCode).toBe(204)
  })

  it("answers 404 for another account's entry and leaves it where it is", async ({ gateway: app, account }) => {
    const other = await adminAccount(app, 20)
    const id = await letterIn(app, other, 'mailed', street)
    const { suppressionId } = (await returnedVia(app, id, 'bad_address')).json<{ suppressionId: string }>()
    // Another account's list knows nothing of the address either.
    expect((await publicClient(app, account.apiKey).post('/single', singleLetter(account, street))).statusCode).toBe(200)
    expectError(await publicClient(app, account.apiKey).delete(`/suppressions/${suppressionId}`), 404, 'Not Found', 'La entrada no existe')
    expectError(await adminClient(app).delete(`/admin/accounts/${account.id}/suppressions/${suppressionId}`), 404, 'Not Found', 'La entrada no existe')
    expect((await suppressionsOf(app, other.apiKey)).data.map((entry) => entry.id)).toEqual([suppressionId])
  })
})

describe('POST /floor/returned, and the floor page in its "Devuelta" mode', () => {
  const floorHeaders = { authorization: `Basic ${Buffer.from(`planta:${FLOOR_TOKEN}`).toString('base64')}` }
  const scanReturned = (app: App, payload: unknown) => app.inject({ method: 'POST', url: '/floor/returned', headers: floorHeaders, payload: payload as object })
  const codeOf = async (app: App, id: string) => (await app.db.select({ code: letters.code }).from(letters).where(eq(letters.id, id)))[0]!.code

  it('returns a live mailed letter by the code on its envelope, read as a scanner types it; refuses in Spanish what it cannot return', async ({
    gateway: app,
    account,
    testKey,
  }) => {
    const id = await letterIn(app, account, 'mailed', { address: 'Calle Serrano 41', zip: '28001' })
    const code = await codeOf(app, id)
    const typed = `${code.slice(0, 5)}-${code.slice(5)}`.toLowerCase()
    const response = await scanReturned(app, { code: typed, reason: 'deceased' })
    expect(response.statusCode, response.body).toBe(200)
    expect(response.json()).toMatchObject({ card: { id, code, status: 'returned', returnReason: 'deceased' }, suppressionId: expect.any(String) })
    expectError(await scanReturned(app, { code, reason: 'deceased' }), 409, 'Conflict', 'La carta ya se marcó como devuelta')

    expectError(await scanReturned(app, { code: 'ZZZZZZZZZZ', reason: 'other' }), 404, 'Not Found', 'Código desconocido: ZZZZZZZZZZ')
    // A test letter never reached the floor: its code is unknown there.
    const testLetter = await letterIn(app, account, 'mailed', { address: 'Calle Serrano 43' }, testKey)
    expectError(await scanReturned(app, { code: await codeOf(app, testLetter), reason: 'other' }), 404, 'Not Found', /^Código desconocido: /)
    const printed = await letterIn(app, account, 'printed', { address: 'Calle Serrano 45' })
    expectError(
      await scanReturned(app, { code: await codeOf(app, printed), reason: 'other' }),
      409,
      'Conflict',
      'Solo una carta enviada puede marcarse como devuelta; esta está en estado «impresa» (printed)',
    )
    expectError(await scanReturned(app, { code, reason: 'perdida' }), 400, 'Bad Request', "El campo 'reason' debe ser uno de: unknown_recipient")
    expectError(await scanReturned(app, { code }), 400, 'Bad Request')
  })

  it('draws the reasons, by their Spanish names, only in "Devuelta" mode (?modo=devuelta), and its script names them the same', async ({ gateway: app }) => {
    const get = (url: string) => app.inject({ method: 'GET', url, headers: floorHeaders })
    const squeezed = (text: string) => text.replace(/>\s+</g, '><').replace(/\s+/g, ' ')
    const first = squeezed((await get('/floor')).body)
    expect(first).toContain('<fieldset id="return-reasons" class="choices" hidden>')
    expect(first).toMatch(/<input type="radio" name="mode" value="mailed" checked \/>/)
    const returned = await get('/floor?modo=devuelta')
    expect(returned.statusCode).toBe(200)
    const page = squeezed(returned.body)
    expect(page).toContain('<fieldset id="return-reasons" class="choices" >')
    expect(page).toMatch(/<input type="radio" name="mode" value="returned" checked \/>/)
    expect(page).toContain('<legend>Motivo de la devolución')
    expect(page).toContain('<a id="refresh" href="/floor?modo=devuelta">')
    for (const reason of returnReasons)
      expect(page).toContain(`<label class="choice"><input type="radio" name="reason" value="${reason}" /> ${returnReasonLabels[reason]}</label>`)
    // No reason is picked before someone picks one.
    expect(page).not.toMatch(/name="reason" value="[a-z_]+" checked/)
    // Anything else in the query is the first mode, never an error.
    expect(squeezed((await get('/floor?modo=otro&modo=devuelta')).body)).toContain('class="choices" hidden>')
    const script = (await get('/floor/scan.js')).body
    expect(script).toContain(JSON.stringify(returnReasonLabels))
  })
})

describe('erasure of a returned letter', () => {
  it("leaves neither the recipient's name nor street anywhere in the database (pg_dump --data-only), while the address's entry stays listed and applied", async ({
    gateway: app,
    account,
  }) => {
    // Names no other row of this file's database holds.
    const recipient = { name: 'Sagrario', surname: 'Etxeberria-Quintanilla', address: 'Travesía del Arcipreste de Hita 17', zip: '28015', city: 'Madrid' }
    const id = await letterIn(app, account, 'mailed', recipient)
    const { suppressionId } = (await returnedVia(app, id, 'bad_address')).json<{ suppressionId: string }>()
    const dump = async () =>
      (
        await run('pg_dump', ['--data-only', '--no-owner', '--no-privileges', `--dbname=${app.config.databaseUrl}`], {
          maxBuffer: 512 * 1024 * 1024,
        })
      ).stdout
    const traces = (text: string) => ['Sagrario', 'Etxeberria-Quintanilla', 'Arcipreste de Hita'].filter((value) => text.includes(value))
    // Before: the letter, its events and their webhook bodies hold all three.
    expect(traces(await dump())).toEqual(['Sagrario', 'Etxeberria-Quintanilla', 'Arcipreste de Hita'])

    const erased = await publicClient(app, account.apiKey).delete(`/cards/${id}/personal-data`)
    expect(erased.statusCode, erased.body).toBe(204)
    const after = await dump()
    expect(after).toContain(suppressionId)
    expect(traces(after)).toEqual([])

    expect((await suppressionsOf(app, account.apiKey)).data).toEqual([
      { id: suppressionId, reason: 'bad_address', createdAt: expect.any(String), zip: '28015', country: 'ES' },
    ])
    expect((await publicClient(app, account.apiKey).get(`/cards/${id}`)).json()).toMatchObject({ status: 'returned', returnReason: 'bad_address' })
    // And the list still refuses the address.
    expectError(await publicClient(app, account.apiKey).post('/single', singleLetter(account, recipient)), 400, 'Bad Request', /como dirección incorrecta/)
  })

  it('suppresses the address of a letter erased while the post had it, from the key the erasure kept, and refuses the next letter to it, charging nothing', async ({
    gateway: app,
    account,
  }) => {
    const recipient = { name: 'Remedios', surname: 'Villalba', address: 'Calle Toledo 50', zip: '28005', city: 'Madrid' }
    const id = await letterIn(app, account, 'mailed', recipient)
    expect((await publicClient(app, account.apiKey).delete(`/cards/${id}/personal-data`)).statusCode).toBe(204)
    const [kept] = await app.db
      .select({ key: letters.returnAddressKey, zip: letters.returnZip, recipient: letters.recipient })
      .from(letters)
      .where(eq(letters.id, id))
    // A hash and the postal code: no street, no name.
    expect(kept).toEqual({ key: expect.stringMatching(/^[0-9a-f]{64}$/), zip: '28005', recipient: expect.objectContaining({ name: '', address: '' }) })

    const response = await returnedVia(app, id, 'bad_address')
    expect(response.statusCode, response.body).toBe(200)
    const { suppressionId } = response.json<{ suppressionId: string | null }>()
    expect(suppressionId).toEqual(expect.any(String))
    expect((await suppressionsOf(app, account.apiKey)).data).toEqual([
      { id: suppressionId, reason: 'bad_address', createdAt: expect.any(String), zip: '28005', country: 'ES' },
    ])
    const balance = await balanceOf(app, account.id)
    expectError(
      await publicClient(app, account.apiKey).post('/single', singleLetter(account, { ...recipient, address: 'C/ Toledo, 50' })),
      400,
      'Bad Request',
      /como dirección incorrecta/,
    )
    expect(await balanceOf(app, account.id)).toBe(balance)
  })

  it('suppresses every address when returns and erasures of the same letters race, whichever commits first', async ({ gateway: app, account }) => {
    const streets = ['Calle Olmo 3', 'Calle Pez 8', 'Calle Luna 21', 'Calle Sol 14', 'Calle Mesón de Paños 6']
    const ids = await Promise.all(streets.map((address) => letterIn(app, account, 'mailed', { address, zip: '28013' })))
    const client = publicClient(app, account.apiKey)
    const answers = await Promise.all(ids.flatMap((id) => [returnedVia(app, id, 'moved'), client.delete(`/cards/${id}/personal-data`)]))
    expect(answers.map((answer) => answer.statusCode)).toEqual(ids.flatMap(() => [200, 204]))
    expect((await suppressionsOf(app, account.apiKey)).data).toHaveLength(streets.length)
    const balance = await balanceOf(app, account.id)
    for (const address of streets) {
      expectError(await client.post('/single', singleLetter(account, { address, zip: '28013' })), 400, 'Bad Request', /se ha mudado/)
    }
    expect(await balanceOf(app, account.id)).toBe(balance)
  })
})

describe('malformed requests about returns and the suppression list', () => {
  it('answer a Spanish 400 and change nothing: a malformed entry id, a bad page, a bad mode, a return without a reason or with another field', async ({
    gateway: app,
    account,
  }) => {
    const id = await letterIn(app, account, 'mailed')
    const client = publicClient(app, account.apiKey)
    const admin = adminClient(app)
    expectError(await client.delete('/suppressions/no-es-un-id'), 400, 'Bad Request', /suppressionId/)
    expectError(await client.get('/suppressions?limit=0'), 400, 'Bad Request', /limit/)
    expectError(await admin.get(`/admin/accounts/${account.id}/suppressions?mode=otro`), 400, 'Bad Request', "El parámetro 'mode' debe ser 'live' o 'test'")
    expectError(await admin.post(`/admin/cards/${id}/returned`, {}), 400, 'Bad Request', /reason/)
    expectError(await admin.post(`/admin/cards/${id}/returned`, { reason: 'moved', refund: true }), 400, 'Bad Request')
    expectError(await admin.get(`/admin/accounts/${UNKNOWN_ID}/suppressions`), 404, 'Not Found')
    const [letter] = await app.db.select({ status: letters.status, returnedAt: letters.returnedAt }).from(letters).where(eq(letters.id, id))
    expect(letter).toEqual({ status: 'mailed', returnedAt: null })
    expect((await suppressionsOf(app, account.apiKey)).data).toEqual([])
  })
})
