import { describe, expect } from 'vitest'
import { and, eq } from 'drizzle-orm'
import { letterEvents, letters, webhookEvents, type LetterStatus } from '@letters/db'
import { it as base } from '@letters/test/support/fixtures'
import { metricSamples } from '@letters/test/support/metrics'
import type { Account } from '@letters/test/support/gateway'
import type { App } from '../src/app.js'
import { FLOOR_TOKEN, expectError, sendSingle } from './helpers.js'

const it = base.extend({ gatewayOptions: { env: { FLOOR_TOKEN } }, accountCredits: 200 })

/** A letter of the account in `status` (set by hand, as the admin API's tests do: the batch path is the page test's), with its code. */
async function letterIn(app: App, account: Account, status: LetterStatus, overrides: Record<string, unknown> = {}) {
  const id = await sendSingle(app, account, overrides)
  const [letter] = await app.db.update(letters).set({ status }).where(eq(letters.id, id)).returning({ code: letters.code })
  return { id, code: letter!.code }
}

const scan = (app: App, payload: unknown, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url: '/floor/scan', headers: { authorization: `Bearer ${FLOOR_TOKEN}`, ...headers }, payload: payload as object })

const statusOf = async (app: App, id: string) => (await app.db.select({ status: letters.status }).from(letters).where(eq(letters.id, id)))[0]?.status
const mailedEvents = (app: App, id: string) =>
  app.db
    .select()
    .from(letterEvents)
    .where(and(eq(letterEvents.letterId, id), eq(letterEvents.status, 'mailed')))

/** floor_scans_total by outcome, as /metrics shows it. */
async function scanCounts(app: App): Promise<Record<string, number>> {
  const samples = Object.entries(await metricSamples(app, 'floor_scans_total'))
  return Object.fromEntries(samples.map(([sample, value]) => [/outcome="(\w+)"/.exec(sample)?.[1] ?? sample, value]))
}

describe('POST /floor/scan', () => {
  it('marks a printed letter mailed and answers the letter, as the admin API does (one transition, one event)', async ({ gateway: app, account, client }) => {
    const letter = await letterIn(app, account, 'printed', { name: 'Lucía', city: 'Sevilla', zip: '41004' })
    const response = await scan(app, { code: letter.code })
    expect(response.statusCode, response.body).toBe(200)
    const card = response.json<{ id: string; code: string; status: string; recipient: { name: string; city: string }; events: Array<{ detail: string }> }>()
    expect(card).toMatchObject({ id: letter.id, code: letter.code, status: 'mailed', recipient: { name: 'Lucía', city: 'Sevilla' } })
    expect(card.events.at(-1)).toMatchObject({ status: 'mailed', detail: 'Entregada a correos' })
    // The client sees the same letter.
    expect((await client.get(`/cards/${letter.id}`)).json()).toEqual(card)
    expect(await mailedEvents(app, letter.id)).toHaveLength(1)
  })

  it('tolerates what a scanner or a person adds: spaces, dashes, lower case, O for 0 and I or L for 1', async ({ gateway: app, account }) => {
    const letter = await letterIn(app, account, 'printed')
    const typed = ` ${letter.code.slice(0, 4).toLowerCase()}-${letter.code.slice(4, 7)} ${letter.code.slice(7)}\t`.replace(/0/g, 'o').replace(/1/g, 'l')
    const response = await scan(app, { code: typed })
    expect(response.statusCode, response.body).toBe(200)
    expect(response.json()).toMatchObject({ id: letter.id, status: 'mailed' })
  })

  it('refuses a code already scanned with 409 saying when, without a second event', async ({ gateway: app, account }) => {
    const letter = await letterIn(app, account, 'printed')
    expect((await scan(app, { code: letter.code })).statusCode).toBe(200)
    const [event] = await mailedEvents(app, letter.id)
    const day = new Intl.DateTimeFormat('es-ES', { dateStyle: 'long', timeZone: 'UTC' }).format(event!.at)
    const body = expectError(await scan(app, { code: letter.code }), 409, 'Conflict', /^La carta ya se marcó como enviada el .+ UTC$/)
    expect(body.message).toContain(day)
    expect(await mailedEvents(app, letter.id)).toHaveLength(1)
  })

  it.for([
    ['received', 'recibida'],
    ['ready_for_print', 'lista para imprimir'],
    ['printing', 'en impresión'],
    ['failed', 'fallida'],
    ['cancelled', 'cancelada'],
    ['scheduled', 'programada'],
  ] as const)('refuses a %s letter with 409 naming its status in Spanish, leaving it as it was', async ([status, spanish], { gateway: app, account }) => {
    const letter = await letterIn(app, account, status)
    expectError(
      await scan(app, { code: letter.code }),
      409,
      'Conflict',
      `Solo una carta impresa puede marcarse como enviada; esta está en estado «${spanish}» (${status})`,
    )
    expect(await statusOf(app, letter.id)).toBe(status)
  })

  it('answers an unknown code 404 "código desconocido"', async ({ gateway: app }) => {
    expectError(await scan(app, { code: 'ZZZZZZZZZZ' }), 404, 'Not Found', 'Código desconocido: ZZZZZZZZZZ')
    expectError(await scan(app, { code: 'not a code at all' }), 404, 'Not Found', /^Código desconocido/)
  })

  it("treats a test letter's code as unknown: it never reached the floor, and it stays as it was", async ({ gateway: app, account }) => {
    const letter = await letterIn(app, account, 'printed')
    await app.db.update(letters).set({ livemode: false }).where(eq(letters.id, letter.id))
    expectError(await scan(app, { code: letter.code }), 404, 'Not Found', `Código desconocido: ${letter.code}`)
    expect(await statusOf(app, letter.id)).toBe('printed')
  })

  it.for([
    ['no code', {}, /code/],
    ['a code that is not a string', { code: 12345 }, /code/],
    ['an empty code', { code: '' }, /code/],
    ['an unknown field', { code: 'ZZZZZZZZZZ', letterId: 'x' }, /letterId/],
  ] as const)('refuses a body with %s with 400', async ([_what, payload, message], { gateway: app }) => {
    expectError(await scan(app, payload), 400, 'Bad Request', message)
  })

  it('refuses a body that is not JSON with 415, and malformed JSON with 400', async ({ gateway: app }) => {
    expect((await scan(app, 'ZZZZZZZZZZ', { 'content-type': 'text/plain' })).statusCode).toBe(415)
    expectError(await scan(app, '{"code":', { 'content-type': 'application/json' }), 400, 'Bad Request')
  })

  it("refuses what another site's page can send with the browser's cached Basic credentials (forms, a typeless body): 415, the letter left printed", async ({
    gateway: app,
    account,
  }) => {
    const letter = await letterIn(app, account, 'printed')
    const basic = `Basic ${Buffer.from(`planta:${FLOOR_TOKEN}`).toString('base64')}`
    const json = JSON.stringify({ code: letter.code })
    const shapes: Array<[string | undefined, string]> = [
      ['application/x-www-form-urlencoded', `code=${letter.code}`],
      ['multipart/form-data; boundary=x', `--x\r\nContent-Disposition: form-data; name="code"\r\n\r\n${letter.code}\r\n--x--\r\n`],
      // <form enctype="text/plain"> with a field named so that the body reads as JSON.
      ['text/plain', `${json.slice(0, -1)}, "x": "="}`],
      // fetch(..., { mode: 'no-cors', body: new Blob([json]) }) sends no content type at all.
      [undefined, json],
    ]
    for (const [type, payload] of shapes) {
      const response = await app.inject({
        method: 'POST',
        url: '/floor/scan',
        headers: { authorization: basic, ...(type ? { 'content-type': type } : {}) },
        payload,
      })
      expect(response.statusCode, `${type}: ${response.body}`).toBe(415)
    }
    expect(await statusOf(app, letter.id)).toBe('printed')
  })

  it("refuses a JSON scan a browser says another site's page started (Fetch Metadata or a foreign Origin) with 403, and takes the floor page's own", async ({
    gateway: app,
    account,
  }) => {
    const letter = await letterIn(app, account, 'printed')
    const basic = `Basic ${Buffer.from(`planta:${FLOOR_TOKEN}`).toString('base64')}`
    const host = 'floor.example:3000'
    for (const headers of [
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
      { origin: 'https://evil.example' },
      { origin: 'null' },
    ] as Array<Record<string, string>>) {
      const response = await scan(app, { code: letter.code }, { authorization: basic, host, ...headers })
      expectError(response, 403, 'Forbidden', /no desde otro sitio web/)
    }
    expect(await statusOf(app, letter.id)).toBe('printed')
    const own = await scan(app, { code: letter.code }, { authorization: basic, host, 'sec-fetch-site': 'same-origin', origin: `http://${host}` })
    expect(own.statusCode, own.body).toBe(200)
  })

  it('names what was typed when it cannot be a code, and the tidied code when it can', async ({ gateway: app }) => {
    expectError(await scan(app, { code: '  not a code at all ' }), 404, 'Not Found', 'Código desconocido: not a code at all')
    expectError(await scan(app, { code: 'zzzz-zzzz-zo' }), 404, 'Not Found', 'Código desconocido: ZZZZZZZZZ0')
  })

  it('marks a letter mailed exactly once under 20 scans at the same time: one 200, 19 409, one event, one webhook event', async ({
    gateway: app,
    account,
    client,
  }) => {
    const hook = await client.post('/webhooks', { url: 'https://93.184.216.34/hooks/floor' })
    expect(hook.statusCode, hook.body).toBe(201)
    const endpointId = hook.json<{ id: string }>().id
    const letter = await letterIn(app, account, 'printed')
    const answers = await Promise.all(Array.from({ length: 20 }, () => scan(app, { code: letter.code })))
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([200, ...Array<number>(19).fill(409)])
    for (const answer of answers.filter((a) => a.statusCode === 409)) expectError(answer, 409, 'Conflict', /^La carta ya se marcó como enviada el /)
    expect(await mailedEvents(app, letter.id)).toHaveLength(1)
    const events = await app.db
      .select({ type: webhookEvents.type, body: webhookEvents.body })
      .from(webhookEvents)
      .where(eq(webhookEvents.endpointId, endpointId))
    // Its creation's event, then one for the scan.
    expect(events.filter((event) => JSON.parse(event.body).data.id === letter.id).map((event) => event.type)).toEqual(['letter.received', 'letter.mailed'])
  })

  it('counts scans by outcome in floor_scans_total', async ({ gateway: app, account }) => {
    const before = await scanCounts(app)
    const printed = await letterIn(app, account, 'printed')
    const waiting = await letterIn(app, account, 'ready_for_print')
    await scan(app, { code: printed.code })
    await scan(app, { code: printed.code })
    await scan(app, { code: waiting.code })
    await scan(app, { code: 'ZZZZZZZZZZ' })
    const after = await scanCounts(app)
    const grew = (outcome: string) => (after[outcome] ?? 0) - (before[outcome] ?? 0)
    expect({ mailed: grew('mailed'), already_mailed: grew('already_mailed'), not_printed: grew('not_printed'), unknown: grew('unknown') }).toEqual({
      mailed: 1,
      already_mailed: 1,
      not_printed: 1,
      unknown: 1,
    })
  })
})
