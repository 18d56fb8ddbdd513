import { access } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect } from 'vitest'
import { eq } from 'drizzle-orm'
import { erasableStatuses } from '@letters/contracts'
import { letterEvents, letters, outbox, printBatches, printBatchLetters, webhookEvents, type LetterStatus } from '@letters/db'
import { ADMIN_TOKEN } from '@letters/test/support/context'
import { verifiedAddress } from '@letters/test/support/factories'
import type { RenderPool } from '@letters/render'
import type { App } from '../src/app.js'
import { cardProof } from '../src/features/letters/proofs.js'
import { it as base } from '@letters/test/support/fixtures'
import { UNKNOWN_ID, adminAccount, adminClient, expectError, publicClient, sendSingle } from './helpers.js'
import { letterFolder, moveLetter } from '@letters/letters'

type Owner = { apiKey: string; cardDesignId: string; envelopeDesignId: string; senderId: string }

const it = base
  /** Another account, whose key must not reach the test's account's letters. */
  .extend('other', ({ gateway }) => adminAccount(gateway, 100))
  /** A letter of `owner` (the test's account unless given; its key's mode) in `status`, with a recipient that says whose it is, as the workers would have left it. */
  .extend('letterIn', ({ gateway: app, account }) => async (status: LetterStatus, owner: Owner = account) => {
    const id = await sendSingle(app, owner, { name: 'Herminia', surname: 'Solórzano', message: 'Herminia, gracias por todo' })
    const address = ['scheduled', 'received', 'cancelled'].includes(status) ? null : verifiedAddress({ name: 'Herminia', surname: 'Solórzano' })
    await app.db.update(letters).set({ status, address }).where(eq(letters.id, id))
    return id
  })
  /** Erases the letter's personal data with `key` (the test's account's unless given). */
  .extend(
    'erase',
    ({ gateway: app, account }) =>
      (id: string, key = account.apiKey) =>
        publicClient(app, key).delete(`/cards/${id}/personal-data`),
  )
it.override({ accountCredits: 1000 })

const rowOf = async (app: App, id: string) => (await app.db.select().from(letters).where(eq(letters.id, id)))[0]!

describe('DELETE /cards/{cardId}/personal-data', () => {
  it.for(erasableStatuses)(
    'erases a %s letter: 204, then GET /cards/{id} shows it erased with its status and history',
    async (status, { gateway: app, account, letterIn, erase }) => {
      const id = await letterIn(status)
      const before = (await publicClient(app, account.apiKey).get(`/cards/${id}`)).json<{ events: unknown[]; status: string }>()
      const response = await erase(id)
      expect(response.statusCode, response.body).toBe(204)
      const after = (await publicClient(app, account.apiKey).get(`/cards/${id}`)).json<Record<string, unknown>>()
      expect(after).toMatchObject({
        status,
        events: before.events,
        message: '',
        recipient: { name: '', surname: '', company: null, address: '', zip: '', city: '', province: null, country: 'ES' },
        addressLines: null,
        personalDataErasedAt: expect.stringMatching(/Z$/),
      })
      expect(JSON.stringify(after)).not.toMatch(/Herminia|Solórzano|Calle Mayor/)
    },
  )

  it('answers 204 again for a letter erased before, changing nothing', async ({ gateway: app, letterIn, erase }) => {
    const id = await letterIn('mailed')
    expect((await erase(id)).statusCode).toBe(204)
    const first = await rowOf(app, id)
    const again = await erase(id)
    expect(again.statusCode, again.body).toBe(204)
    expect(await rowOf(app, id)).toEqual(first)
  })

  const cancelFirst = 'La carta aún no se ha impreso: cancélala primero (DELETE /cards/{cardId}) y después borra sus datos personales'
  it.for([
    ['scheduled', cancelFirst],
    ['received', cancelFirst],
    ['ready_for_print', cancelFirst],
    ['printing', 'La carta se está imprimiendo y no se puede cancelar: podrás borrar sus datos personales en cuanto esté impresa'],
  ] as const)('refuses a %s letter with 409, erasing nothing', async ([status, message], { gateway: app, letterIn, erase }) => {
    const id = await letterIn(status)
    const before = await rowOf(app, id)
    expectError(await erase(id), 409, 'Conflict', message)
    expect(await rowOf(app, id)).toEqual(before)
  })

  it('refuses with 409 a failed letter whose print batch is not handed over yet (its batch draws it), and erases it once the batch is', async ({
    gateway: app,
    letterIn,
    erase,
  }) => {
    const id = await letterIn('failed')
    const [batch] = await app.db.insert(printBatches).values({ status: 'closing', letterCount: 1 }).returning({ id: printBatches.id })
    await app.db.insert(printBatchLetters).values({ batchId: batch!.id, letterId: id, sequence: 1 })
    const before = await rowOf(app, id)
    expectError(await erase(id), 409, 'Conflict', /lote de impresión que aún no se ha entregado.*podrás borrar sus datos personales/)
    expect(await rowOf(app, id)).toEqual(before)
    await app.db.update(printBatches).set({ status: 'handed' }).where(eq(printBatches.id, batch!.id))
    expect((await erase(id)).statusCode).toBe(204)
    expect((await rowOf(app, id)).personalDataErasedAt).not.toBeNull()
  })

  it("answers 404 for another account's letter, an unknown id and a malformed one, erasing nothing", async ({ gateway: app, other, letterIn, erase }) => {
    const id = await letterIn('printed')
    for (const path of [id, UNKNOWN_ID, 'no-es-un-id']) expectError(await erase(path, other.apiKey), 404, 'Not Found', 'La carta no existe')
    expect((await rowOf(app, id)).personalDataErasedAt).toBeNull()
  })

  it("answers 404 for a letter of the key's other mode: a test key does not erase live letters, nor a live key test ones", async ({
    gateway: app,
    account,
    letterIn,
    erase,
  }) => {
    const testKey = (await adminClient(app).post(`/admin/accounts/${account.id}/api-keys`, { mode: 'test' })).json<{ apiKey: string }>().apiKey
    const live = await letterIn('printed')
    const test = await letterIn('printed', { ...account, apiKey: testKey })
    expectError(await erase(live, testKey), 404, 'Not Found', 'La carta no existe')
    expectError(await erase(test), 404, 'Not Found', 'La carta no existe')
    expect((await rowOf(app, live)).personalDataErasedAt).toBeNull()
    expect((await rowOf(app, test)).personalDataErasedAt).toBeNull()
    expect((await erase(test, testKey)).statusCode).toBe(204)
  })

  it('refuses a body with fields with 400, erasing nothing', async ({ gateway: app, account, letterIn }) => {
    const id = await letterIn('printed')
    const response = await app.inject({
      method: 'DELETE',
      url: `/cards/${id}/personal-data`,
      headers: { 'x-api-key': account.apiKey },
      payload: { motivo: 'RGPD' },
    })
    expectError(response, 400, 'Bad Request', 'Esta ruta no admite campos en el cuerpo: envíala sin cuerpo o con {}')
    expect((await rowOf(app, id)).personalDataErasedAt).toBeNull()
  })

  it('answers 415 to a body that is not JSON and 413 to one over 64 KiB, erasing nothing', async ({ gateway: app, account, letterIn }) => {
    const id = await letterIn('printed')
    const url = `/cards/${id}/personal-data`
    const headers = { 'x-api-key': account.apiKey }
    expectError(
      await app.inject({ method: 'DELETE', url, headers: { ...headers, 'content-type': 'text/plain' }, payload: 'RGPD' }),
      415,
      'Unsupported Media Type',
    )
    expectError(await app.inject({ method: 'DELETE', url, headers, payload: { motivo: 'x'.repeat(70_000) } }), 413, 'Payload Too Large')
    expect((await rowOf(app, id)).personalDataErasedAt).toBeNull()
  })

  it('answers 401 without a valid key', async ({ gateway: app, letterIn, erase }) => {
    const id = await letterIn('printed')
    expectError(await app.inject({ method: 'DELETE', url: `/cards/${id}/personal-data` }), 401, 'Unauthorized')
    expectError(await erase(id, 'clave-que-no-existe-0123456789'), 401, 'Unauthorized')
    expect((await rowOf(app, id)).personalDataErasedAt).toBeNull()
  })

  it("cuts what its events' details quote of the recipient, keeping the rest of them", async ({ gateway: app, letterIn, erase }) => {
    const id = await letterIn('address_rejected')
    await app.db.insert(letterEvents).values({
      letterId: id,
      status: 'address_rejected',
      detail: "Dirección no entregable: el código postal '28013' no corresponde a Madrid. Créditos devueltos.",
    })
    expect((await erase(id)).statusCode).toBe(204)
    const details = (await app.db.select({ detail: letterEvents.detail }).from(letterEvents).where(eq(letterEvents.letterId, id))).map((row) => row.detail)
    expect(details).toEqual([null, "Dirección no entregable: el código postal '…' no corresponde a …. Créditos devueltos."])
  })

  it("rewrites the letter's stored webhook bodies, and the events of later changes carry the erased letter", async ({
    gateway: app,
    account,
    letterIn,
    erase,
  }) => {
    const created = await publicClient(app, account.apiKey).post('/webhooks', { url: 'https://93.184.216.34/hooks/letters' })
    expect(created.statusCode, created.body).toBe(201)
    const endpointId = created.json<{ id: string }>().id
    try {
      const id = await letterIn('printed')
      const bodies = async () =>
        (await app.db.select({ body: webhookEvents.body }).from(webhookEvents).where(eq(webhookEvents.endpointId, endpointId)))
          .map((row) => JSON.parse(row.body) as { type: string; data: { id: string; personalDataErasedAt: string | null } })
          .filter((body) => body.data.id === id)
      expect((await bodies()).map((body) => body.type)).toEqual(['letter.received'])
      expect(JSON.stringify(await bodies())).toContain('Herminia')

      expect((await erase(id)).statusCode).toBe(204)
      expect((await adminClient(app).post(`/admin/cards/${id}/mailed`)).statusCode).toBe(200)
      const after = await bodies()
      expect(after.map((body) => body.type)).toEqual(['letter.received', 'letter.mailed'])
      expect(after.every((body) => body.data.personalDataErasedAt !== null)).toBe(true)
      expect(JSON.stringify(after)).not.toMatch(/Herminia|Solórzano|Calle Mayor|gracias por todo/)
    } finally {
      await publicClient(app, account.apiKey).delete(`/webhooks/${endpointId}`)
    }
  })
})

describe('proofs of an erased letter', () => {
  it.for(['/proof', '/proof.png'])('GET /cards/{cardId}%s answers 410, in Spanish', async (suffix, { gateway: app, account, letterIn, erase }) => {
    const id = await letterIn('printed')
    expect((await erase(id)).statusCode).toBe(204)
    expectError(await publicClient(app, account.apiKey).get(`/cards/${id}${suffix}`), 410, 'Gone', /datos personales de esta carta se borraron/)
  })

  it('a proof drawn from the letter as it was before its erasure does not stay in the artifact store', async ({ gateway: app, account, letterIn, erase }) => {
    const id = await letterIn('printed')
    // The letter is erased while its proof is being drawn: the client still gets what it asked for, the store keeps nothing.
    const renderPool = {
      render: async () => {
        expect((await erase(id)).statusCode).toBe(204)
        return Buffer.from('%PDF-1.7 prueba de Herminia')
      },
    } as unknown as RenderPool
    const pdf = await cardProof(
      { db: app.db, artifacts: app.artifacts, renderPool, config: app.config },
      app.log,
      { accountId: account.id, livemode: true },
      id,
    )
    expect(pdf.toString()).toContain('Herminia')
    const kept = await access(join(app.config.artifactsDir, letterFolder(id))).then(
      () => true,
      () => false,
    )
    expect(kept).toBe(false)
    expect((await rowOf(app, id)).artifactsRemovedAt).not.toBeNull()
  })

  it("still answers 404 for another account's erased letter", async ({ gateway: app, other, letterIn, erase }) => {
    const id = await letterIn('printed')
    expect((await erase(id)).statusCode).toBe(204)
    expectError(await publicClient(app, other.apiKey).get(`/cards/${id}/proof`), 404, 'Not Found', 'La carta no existe')
  })
})

describe('an erased letter never goes back to production', () => {
  it('refuses the ops retry of an erased failed letter with 409, queueing nothing', async ({ gateway: app, letterIn, erase }) => {
    const id = await letterIn('failed')
    expect((await erase(id)).statusCode).toBe(204)
    expectError(await adminClient(app).post(`/admin/cards/${id}/retry`), 409, 'Conflict', /datos personales de la carta se borraron/)
    expect((await rowOf(app, id)).status).toBe('failed')
    const jobs = await app.db.select().from(outbox).where(eq(outbox.jobName, 'produce-letter'))
    expect(jobs.filter((job) => job.payload.letterId === id)).toEqual([])
  })

  it('is never claimed for printing again (the floor), but may still be marked printed by its batch', async ({ gateway: app, letterIn, erase }) => {
    const id = await letterIn('failed')
    expect((await erase(id)).statusCode).toBe(204)
    const claim = await app.db.transaction((tx) => moveLetter(tx, id, { from: 'failed', to: 'printing', printClaim: 'next', detail: null }))
    expect(claim.moved).toBe(false)
    expect((await rowOf(app, id)).status).toBe('failed')
    const printed = await app.db.transaction((tx) => moveLetter(tx, id, { from: 'failed', to: 'printed', detail: null }))
    expect(printed.moved).toBe(true)
  })
})

describe('DELETE /admin/accounts/{id}/personal-data', () => {
  it("erases every erasable letter of the account, live and test, leaves the ones not printed yet, says how many, and touches no other account's", async ({
    gateway: app,
    other,
    letterIn,
  }) => {
    const owner = await adminAccount(app, 1000)
    const testKey = (await adminClient(app).post(`/admin/accounts/${owner.id}/api-keys`, { mode: 'test' })).json<{ apiKey: string }>().apiKey
    const erasable = [
      await letterIn('printed', owner),
      await letterIn('mailed', owner),
      await letterIn('cancelled', owner),
      await letterIn('printed', { ...owner, apiKey: testKey }),
    ]
    const unprinted = [await letterIn('received', owner), await letterIn('printing', owner)]
    const others = await letterIn('printed', other)

    const response = await adminClient(app).delete(`/admin/accounts/${owner.id}/personal-data`)
    expect(response.statusCode, response.body).toBe(200)
    expect(response.json()).toEqual({ erased: 4, left: 2, remaining: 0 })
    for (const id of erasable) expect((await rowOf(app, id)).personalDataErasedAt).not.toBeNull()
    for (const id of [...unprinted, others]) expect((await rowOf(app, id)).recipient.name).toBe('Herminia')

    const again = await adminClient(app).delete(`/admin/accounts/${owner.id}/personal-data`)
    expect(again.statusCode, again.body).toBe(200)
    expect(again.json()).toEqual({ erased: 0, left: 2, remaining: 0 })
  })

  it('answers 415 to a body that is not JSON and 413 to one over 64 KiB, erasing nothing', async ({ gateway: app, account, letterIn }) => {
    const id = await letterIn('printed')
    const url = `/admin/accounts/${account.id}/personal-data`
    const headers = { authorization: `Bearer ${ADMIN_TOKEN}` }
    expectError(
      await app.inject({ method: 'DELETE', url, headers: { ...headers, 'content-type': 'text/plain' }, payload: 'RGPD' }),
      415,
      'Unsupported Media Type',
    )
    expectError(await app.inject({ method: 'DELETE', url, headers, payload: { motivo: 'x'.repeat(70_000) } }), 413, 'Payload Too Large')
    expect((await rowOf(app, id)).personalDataErasedAt).toBeNull()
  })

  it('answers 404 for an unknown account, 400 for a malformed id and 401 without the admin token', async ({ gateway: app, account, letterIn }) => {
    expectError(await adminClient(app).delete(`/admin/accounts/${UNKNOWN_ID}/personal-data`), 404, 'Not Found', 'La cuenta no existe')
    expectError(await adminClient(app).delete('/admin/accounts/no-es-un-id/personal-data'), 400, 'Bad Request')
    const id = await letterIn('printed')
    expectError(await app.inject({ method: 'DELETE', url: `/admin/accounts/${account.id}/personal-data` }), 401, 'Unauthorized')
    expect((await rowOf(app, id)).personalDataErasedAt).toBeNull()
  })
})
