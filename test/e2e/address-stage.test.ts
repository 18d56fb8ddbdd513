import { describe, expect } from 'vitest'
import { asc, eq } from 'drizzle-orm'
import { pino } from 'pino'
import { startAddressWorker } from '@letters/address-worker/worker'
import { normalizeLetter } from '@letters/address-worker/normalize-letter'
import { offlineVerifier } from '@letters/address'
import { ledgerEntries, letters, outbox } from '@letters/db'
import type { App } from '@letters/gateway/server'
import { OutboxDispatcher } from '@letters/pipeline'
import { ADMIN_TOKEN } from '../support/context.js'
import { it as base } from '../support/fixtures.js'
import type { Account } from '../support/gateway.js'

const log = pino({ level: 'silent' })

/** The gateway's outbox dispatcher and an address worker, running for the whole file. */
const it = base.extend('addressStage', { scope: 'file', auto: true }, ({ gateway: app }, { onCleanup }) => {
  const dispatcher = new OutboxDispatcher(app.db, app.queues, log, { idleMs: 50 })
  dispatcher.start()
  const worker = startAddressWorker({ config: app.config, db: app.db, log })
  onCleanup(async () => {
    await dispatcher.stop()
    await worker.close()
  })
})
// A database and queue prefix of its own: the dispatcher and the worker would take other files' rows and jobs.
it.override({ gatewayOptions: { isolate: 'address', checkContract: false }, accountCredits: 50 })

async function send(app: App, account: Account, recipient: Record<string, unknown>) {
  const response = await app.inject({
    method: 'POST',
    url: '/single',
    headers: { 'x-api-key': account.apiKey },
    payload: { cardDesignId: account.cardDesignId, envelopeDesignId: account.envelopeDesignId, senderId: account.senderId, message: 'Hola', ...recipient },
  })
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ cardId: string }>().cardId
}

const card = (app: App, account: Account, id: string) =>
  app
    .inject({ method: 'GET', url: `/cards/${id}`, headers: { 'x-api-key': account.apiKey } })
    .then((response) => response.json<{ status: string; address: Record<string, unknown> | null; events: Array<{ status: string; detail: string | null }> }>())

const balance = async (app: App, account: Account) =>
  (await app.inject({ method: 'GET', url: `/admin/accounts/${account.id}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json<{ balance: number }>()
    .balance

describe('the address stage', () => {
  it('normalizes a received letter, makes it ready for print and queues its production job', async ({ gateway: app, account }) => {
    const id = await send(app, account, {
      name: 'ANA',
      surname: 'ruiz',
      address: 'C/  Mayor 3',
      zip: ' 08001 ',
      city: 'BARCELONA',
      province: '',
      country: 'es',
    })
    await expect.poll(async () => (await card(app, account, id)).status, { timeout: 5000, interval: 50 }).toBe('ready_for_print')
    const letter = await card(app, account, id)
    expect(letter.address).toMatchObject({
      name: 'Ana',
      surname: 'Ruiz',
      address: 'Calle Mayor 3',
      zip: '08001',
      city: 'Barcelona',
      province: 'Barcelona',
      country: 'ES',
      countryName: 'España',
      deliverability: 'corrected',
    })
    expect(letter.events.map((event) => event.status)).toEqual(['received', 'ready_for_print'])
    expect(letter.events[1]?.detail).toMatch(/^Dirección corregida/)
    const jobs = await app.db.select().from(outbox).where(eq(outbox.jobName, 'produce-letter'))
    expect(jobs.filter((job) => job.payload.letterId === id)).toHaveLength(1)
  })

  it('cases an address typed in small letters but for its door’s capital as one typed all in small letters', async ({ gateway: app, account }) => {
    const id = await send(app, account, { name: 'lucía', surname: 'García', address: 'calle mayor 12, 3º B', zip: '28013', city: 'madrid', country: 'ES' })
    await expect.poll(async () => (await card(app, account, id)).status, { timeout: 5000, interval: 50 }).toBe('ready_for_print')
    expect((await card(app, account, id)).address).toMatchObject({
      name: 'Lucía',
      surname: 'García',
      address: 'Calle Mayor 12, 3º B',
      city: 'Madrid',
      deliverability: 'corrected',
    })
  })

  it('rejects an undeliverable address and refunds the letter exactly once', async ({ gateway: app, account }) => {
    const before = await balance(app, account)
    const id = await send(app, account, { name: 'Ana', surname: 'Ruiz', address: '...', zip: '28013', city: 'Madrid', country: 'ES' })
    expect(await balance(app, account)).toBe(before - 3)
    await expect.poll(async () => (await card(app, account, id)).status, { timeout: 5000, interval: 50 }).toBe('address_rejected')
    expect(await balance(app, account)).toBe(before)
    const letter = await card(app, account, id)
    expect(letter.address).toMatchObject({ deliverability: 'undeliverable', problems: ['la dirección no contiene letras ni números'] })
    expect(letter.events.at(-1)?.detail).toMatch(/Créditos devueltos/)

    // The job runs again (a retry, a duplicate): nothing changes, nothing is refunded twice.
    expect(await normalizeLetter(app.db, offlineVerifier, id, 'ES')).toBe('already_done')
    expect(await balance(app, account)).toBe(before)
    const movements = await app.db.select().from(ledgerEntries).where(eq(ledgerEntries.letterId, id)).orderBy(asc(ledgerEntries.id))
    expect(movements.map((entry) => [entry.kind, entry.amount])).toEqual([
      ['charge', -3],
      ['refund', 3],
    ])
    const [row] = await app.db.select({ status: letters.status }).from(letters).where(eq(letters.id, id))
    expect(row?.status).toBe('address_rejected')
  })

  it('changes nothing when a ready letter is processed again', async ({ gateway: app, account }) => {
    const id = await send(app, account, {
      name: 'Ana',
      surname: 'Ruiz',
      address: 'Calle Mayor 1',
      zip: '28013',
      city: 'Madrid',
      province: 'Madrid',
      country: 'ES',
    })
    await expect.poll(async () => (await card(app, account, id)).status, { timeout: 5000, interval: 50 }).toBe('ready_for_print')
    const before = await card(app, account, id)
    expect(before.address).toMatchObject({ deliverability: 'deliverable' })
    expect(await normalizeLetter(app.db, offlineVerifier, id, 'ES')).toBe('already_done')
    expect(await card(app, account, id)).toEqual(before)
  })
})
