import { describe, expect } from 'vitest'
import { eq } from 'drizzle-orm'
import { letters, type LetterStatus } from '@letters/db'
import type { App } from '../src/app.js'
import { UNKNOWN_ID, adminAccount, expectError, publicClient, sendSingle } from './helpers.js'
import { it as base } from '@letters/test/support/fixtures'
import type { Account } from '@letters/test/support/gateway'
import { expectLedgerMatchesLetters, moneyState } from '@letters/test/support/ledger'

const it = base.extend({ accountCredits: 1000 })

/** Puts a letter where a worker would have moved it. */
const setStatus = (app: App, id: string, status: LetterStatus) => app.db.update(letters).set({ status }).where(eq(letters.id, id))

const refundsOf = async (app: App, owner: Account, letterId: string) =>
  (await moneyState(app.db, owner.id)).entries.filter((entry) => entry.kind === 'refund' && entry.letterId === letterId)

describe('DELETE /cards/{cardId}', () => {
  it.for(['received', 'ready_for_print'] as const)(
    'cancels a %s letter and gives its credits back in the same step',
    async (status, { gateway: app, account }) => {
      const id = await sendSingle(app, account, { country: 'FR', zip: '75001', city: 'París', province: '' })
      await setStatus(app, id, status)
      const before = (await moneyState(app.db, account.id)).balance
      const response = await publicClient(app, account.apiKey).delete(`/cards/${id}`)
      expect(response.statusCode, response.body).toBe(200)
      const card = response.json<{ status: string; cost: number; events: Array<{ status: string; detail: string | null }> }>()
      expect(card.status).toBe('cancelled')
      expect(card.events.at(-1)).toEqual({ status: 'cancelled', at: expect.any(String), detail: 'Cancelada por el cliente; 5 créditos devueltos' })
      expect((await moneyState(app.db, account.id)).balance).toBe(before + 5)
      expect((await refundsOf(app, account, id)).map((entry) => entry.amount)).toEqual([5])
      await expectLedgerMatchesLetters(app.db, account.id)
    },
  )

  it.for([
    ['printing', 'La carta ya está en producción y no se puede cancelar'],
    ['printed', 'La carta ya está impresa y no se puede cancelar'],
    ['mailed', 'La carta ya se entregó a correos y no se puede cancelar'],
    ['failed', 'La producción de la carta falló y operaciones la está revisando; no se puede cancelar'],
    ['address_rejected', 'La carta fue rechazada por su dirección y sus créditos ya se devolvieron'],
  ] as const)('refuses a %s letter with 409 and gives nothing back', async ([status, message], { gateway: app, account }) => {
    const id = await sendSingle(app, account)
    await setStatus(app, id, status)
    const before = (await moneyState(app.db, account.id)).balance
    expectError(await publicClient(app, account.apiKey).delete(`/cards/${id}`), 409, 'Conflict', message)
    expect((await moneyState(app.db, account.id)).balance).toBe(before)
    expect(await refundsOf(app, account, id)).toEqual([])
    const [letter] = await app.db.select({ status: letters.status }).from(letters).where(eq(letters.id, id))
    expect(letter?.status).toBe(status)
  })

  it('refuses a second cancellation with 409, refunding once', async ({ gateway: app, account }) => {
    const id = await sendSingle(app, account)
    expect((await publicClient(app, account.apiKey).delete(`/cards/${id}`)).statusCode).toBe(200)
    expectError(await publicClient(app, account.apiKey).delete(`/cards/${id}`), 409, 'Conflict', 'La carta ya está cancelada')
    expect(await refundsOf(app, account, id)).toHaveLength(1)
  })

  it('refunds exactly once when twenty cancellations of one letter race', async ({ gateway: app, account }) => {
    const id = await sendSingle(app, account)
    const before = (await moneyState(app.db, account.id)).balance
    const responses = await Promise.all(Array.from({ length: 20 }, () => publicClient(app, account.apiKey).delete(`/cards/${id}`)))
    expect(responses.map((response) => response.statusCode).sort()).toEqual([200, ...Array<number>(19).fill(409)])
    expect((await moneyState(app.db, account.id)).balance).toBe(before + 3)
    expect(await refundsOf(app, account, id)).toHaveLength(1)
    await expectLedgerMatchesLetters(app.db, account.id)
  })

  it("answers 404 for another account's letter, an unknown id and a malformed one, touching nothing", async ({ gateway: app, account }) => {
    const other = await adminAccount(app, 100)
    const id = await sendSingle(app, account)
    const before = (await moneyState(app.db, account.id)).balance
    for (const path of [`/cards/${id}`, `/cards/${UNKNOWN_ID}`, '/cards/no-es-un-id']) {
      expectError(await publicClient(app, other.apiKey).delete(path), 404, 'Not Found', 'La carta no existe')
    }
    expect((await moneyState(app.db, account.id)).balance).toBe(before)
    const [letter] = await app.db.select({ status: letters.status }).from(letters).where(eq(letters.id, id))
    expect(letter?.status).toBe('received')
  })

  it('refuses a body with fields with 400, cancelling and refunding nothing', async ({ gateway: app, account }) => {
    const id = await sendSingle(app, account)
    const before = (await moneyState(app.db, account.id)).balance
    const response = await app.inject({ method: 'DELETE', url: `/cards/${id}`, headers: { 'x-api-key': account.apiKey }, payload: { motivo: 'duplicada' } })
    expectError(response, 400, 'Bad Request', 'Esta ruta no admite campos en el cuerpo: envíala sin cuerpo o con {}')
    expect((await moneyState(app.db, account.id)).balance).toBe(before)
    expect(await refundsOf(app, account, id)).toEqual([])
  })

  it('answers 401 without a valid key', async ({ gateway: app, account }) => {
    const id = await sendSingle(app, account)
    expectError(await app.inject({ method: 'DELETE', url: `/cards/${id}` }), 401, 'Unauthorized')
    expectError(await publicClient(app, 'clave-que-no-existe-0123456789').delete(`/cards/${id}`), 401, 'Unauthorized')
  })
})
