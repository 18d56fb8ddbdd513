import { describe, expect } from 'vitest'
import { and, eq, sql } from 'drizzle-orm'
import { letterEvents, letters, outbox, type LetterStatus } from '@letters/db'
import type { App } from '../src/app.js'
import { it as base } from '@letters/test/support/fixtures'
import type { Account } from '@letters/test/support/gateway'
import { UNKNOWN_ID, adminAccount, expectError, publicClient, sendSingle } from './helpers.js'
import { RESUMED_DETAIL, RETRIED_DETAIL } from '@letters/letters'

type AdminCard = { id: string; accountId: string; livemode: boolean; status: string; events: Array<{ status: string; detail: string | null }> }
type StuckList = {
  data: Array<{ id: string; accountId: string; livemode: boolean; status: string; createdAt: string; updatedAt: string; stuckForSeconds: number }>
  nextCursor: string | null
}

/** A letter of the account in `status`, its last change `minutesAgo` minutes ago (set by hand: the floor is not running). */
async function letterIn(app: App, account: Account, status: LetterStatus, minutesAgo = 0) {
  const id = await sendSingle(app, account)
  await app.db.execute(sql`UPDATE letters SET status = ${status}, updated_at = now() - ${minutesAgo} * interval '1 minute' WHERE id = ${id}::uuid`)
  return id
}

const jobsOf = async (app: App, id: string, jobName: string) =>
  app.db
    .select()
    .from(outbox)
    .where(and(eq(outbox.jobName, jobName), sql`${outbox.payload}->>'letterId' = ${id}`))
const eventsOf = async (app: App, id: string) => app.db.select().from(letterEvents).where(eq(letterEvents.letterId, id))
const statusOf = async (app: App, id: string) => (await app.db.select({ status: letters.status }).from(letters).where(eq(letters.id, id)))[0]?.status

/**
 * Letters of the test's account in every status, three of them stuck. Longest stuck first:
 * received 2 h ago, printing 10 min ago, failed just now. Cancelled after the test, so that
 * the next test's stuck list is its own.
 */
const it = base.extend('stuckLetters', async ({ gateway: app, account }, { onCleanup }) => {
  const failed = await letterIn(app, account, 'failed')
  const printing = await letterIn(app, account, 'printing', 10)
  const received = await letterIn(app, account, 'received', 120)
  const expected = [received, printing, failed]
  onCleanup(async () => {
    await app.db.execute(sql`UPDATE letters SET status = 'cancelled' WHERE id IN ${expected}`)
  })
  // Not stuck: moving, or past the pipeline.
  await letterIn(app, account, 'ready_for_print')
  await letterIn(app, account, 'received')
  for (const status of ['printed', 'mailed', 'cancelled', 'address_rejected'] as const) await letterIn(app, account, status, 180)
  return expected
})

// A database of its own: the stuck list shows every account's letters, and other files leave
// failed letters in the shared one. A letter is stuck after a minute without progress.
it.override({ gatewayOptions: { isolate: 'adminletters', env: { RECONCILE_AFTER_MS: '60000' } } })

describe('GET /admin/cards/{id}', () => {
  it("returns any account's letter as its client sees it, with its events and its account", async ({ gateway: app, admin }) => {
    const other = await adminAccount(app)
    const id = await sendSingle(app, other)
    const response = await admin.get(`/admin/cards/${id}`)
    expect(response.statusCode, response.body).toBe(200)
    const clientView = (await publicClient(app, other.apiKey).get(`/cards/${id}`)).json<object>()
    expect(response.json()).toEqual({ accountId: other.id, ...clientView })
    expect(response.json<AdminCard>().events).toEqual([{ status: 'received', at: expect.any(String), detail: null }])
  })

  it('returns a test-mode letter too, marked livemode false', async ({ gateway: app, admin, account }) => {
    const testKey = (await admin.post(`/admin/accounts/${account.id}/api-keys`, { mode: 'test' })).json<{ apiKey: string }>().apiKey
    const id = await sendSingle(app, { ...account, apiKey: testKey })
    const response = await admin.get(`/admin/cards/${id}`)
    expect(response.statusCode, response.body).toBe(200)
    expect(response.json()).toMatchObject({ id, accountId: account.id, livemode: false })
  })

  it('answers 404 for an unknown letter, 400 for a malformed id and 401 for a bad token', async ({ gateway: app, admin, account }) => {
    expectError(await admin.get(`/admin/cards/${UNKNOWN_ID}`), 404, 'Not Found', 'La carta no existe')
    expectError(await admin.get('/admin/cards/nada'), 400, 'Bad Request', "El parámetro de ruta 'id' debe ser un UUID válido")
    const id = await sendSingle(app, account)
    expectError(await admin.raw('GET', `/admin/cards/${id}`, undefined, { authorization: 'Bearer otro-token-cualquiera-123' }), 401, 'Unauthorized')
  })
})

describe('GET /admin/stuck-letters', () => {
  it('lists failed letters and those without progress past the threshold, with status and age, longest stuck first', async ({
    admin,
    account,
    stuckLetters: expected,
  }) => {
    const response = await admin.get('/admin/stuck-letters')
    expect(response.statusCode, response.body).toBe(200)
    const list = response.json<StuckList>()
    expect(list.nextCursor).toBeNull()
    expect(list.data.map((letter) => letter.id)).toEqual(expected)
    expect(list.data.map((letter) => letter.status)).toEqual(['received', 'printing', 'failed'])
    const [received, printing, failed] = list.data
    expect(received).toEqual({
      id: expected[0],
      accountId: account.id,
      livemode: true,
      status: 'received',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      stuckForSeconds: expect.any(Number),
    })
    expect(received!.stuckForSeconds).toBeGreaterThanOrEqual(7200)
    expect(received!.stuckForSeconds).toBeLessThan(7200 + 120)
    expect(printing!.stuckForSeconds).toBeGreaterThanOrEqual(600)
    expect(failed!.stuckForSeconds).toBeLessThan(120)
    expect(Date.now() - Date.parse(received!.updatedAt)).toBeGreaterThanOrEqual(7200_000)
  })

  it('pages with limit and the cursor, each letter once', async ({ admin, stuckLetters: expected }) => {
    const ids: string[] = []
    const sizes: number[] = []
    for (let cursor: string | null | undefined; cursor !== null;) {
      const page = (await admin.get(`/admin/stuck-letters?limit=2${cursor ? `&cursor=${cursor}` : ''}`)).json<StuckList>()
      ids.push(...page.data.map((letter) => letter.id))
      sizes.push(page.data.length)
      cursor = page.nextCursor
    }
    expect(sizes).toEqual([2, 1])
    expect(ids).toEqual(expected)
  })

  it.for([
    ['limit=0', "El parámetro 'limit' debe ser mayor o igual que 1"],
    ['cursor=xyz', "El parámetro 'cursor' no es válido: usa el 'nextCursor' de la página anterior"],
    ['status=failed', "El parámetro 'status' no está permitido"],
  ])('rejects ?%s with 400', async ([query, message], { admin }) => {
    expectError(await admin.get(`/admin/stuck-letters?${query}`), 400, 'Bad Request', message)
  })

  it('answers 401 without the admin token', async ({ gateway: app }) => {
    expectError(await app.inject({ method: 'GET', url: '/admin/stuck-letters' }), 401, 'Unauthorized')
  })
})

describe('POST /admin/cards/{id}/retry', () => {
  it('sends a failed letter back to production: ready_for_print, its event, one production job', async ({ gateway: app, admin, account }) => {
    const id = await letterIn(app, account, 'failed')
    const response = await admin.post(`/admin/cards/${id}/retry`)
    expect(response.statusCode, response.body).toBe(200)
    const card = response.json<AdminCard>()
    expect(card).toMatchObject({ id, accountId: account.id, status: 'ready_for_print' })
    expect(card.events.at(-1)).toMatchObject({ status: 'ready_for_print', detail: RETRIED_DETAIL })
    expect(await jobsOf(app, id, 'produce-letter')).toHaveLength(1)
    // The client sees it too, and it leaves the stuck list.
    expect((await publicClient(app, account.apiKey).get(`/cards/${id}`)).json()).toMatchObject({ status: 'ready_for_print' })
    expect((await admin.get('/admin/stuck-letters')).json<StuckList>().data.map((letter) => letter.id)).not.toContain(id)
  })

  it('retried again, answers 409 and queues nothing more', async ({ gateway: app, admin, account }) => {
    const id = await letterIn(app, account, 'failed')
    expect((await admin.post(`/admin/cards/${id}/retry`)).statusCode).toBe(200)
    expectError(
      await admin.post(`/admin/cards/${id}/retry`),
      409,
      'Conflict',
      'La carta está en la cola de producción y no está atascada: no hay nada que reintentar (se considera atascada tras 1 min sin avanzar)',
    )
    expect(await jobsOf(app, id, 'produce-letter')).toHaveLength(1)
    expect((await eventsOf(app, id)).filter((event) => event.detail === RETRIED_DETAIL)).toHaveLength(1)
  })

  it('of ten retries at once, sends the letter on once: one 200, nine 409, one job', async ({ gateway: app, admin, account }) => {
    const id = await letterIn(app, account, 'failed')
    const responses = await Promise.all(Array.from({ length: 10 }, () => admin.post(`/admin/cards/${id}/retry`)))
    expect(responses.map((response) => response.statusCode).sort()).toEqual([200, ...Array<number>(9).fill(409)])
    expect(await jobsOf(app, id, 'produce-letter')).toHaveLength(1)
    expect((await eventsOf(app, id)).filter((event) => event.detail === RETRIED_DETAIL)).toHaveLength(1)
    expect(await statusOf(app, id)).toBe('ready_for_print')
  })

  it.for([
    ['received', 'normalize-address'],
    ['ready_for_print', 'produce-letter'],
    ['printing', 'produce-letter'],
  ] as const)('resumes a letter stuck in %s where it is, with its job (%s) again, once', async ([status, jobName], { gateway: app, admin, account }) => {
    const id = await letterIn(app, account, status, 5)
    const before = (await jobsOf(app, id, jobName)).length
    const response = await admin.post(`/admin/cards/${id}/retry`)
    expect(response.statusCode, response.body).toBe(200)
    const card = response.json<AdminCard>()
    expect(card.status).toBe(status)
    expect(card.events.at(-1)).toEqual({ status, at: expect.any(String), detail: RESUMED_DETAIL })
    expect(await jobsOf(app, id, jobName)).toHaveLength(before + 1)
    // Resumed just now, it is no longer stuck: a second retry changes nothing.
    expectError(
      await admin.post(`/admin/cards/${id}/retry`),
      409,
      'Conflict',
      /no está atascada: no hay nada que reintentar \(se considera atascada tras 1 min sin avanzar\)$/,
    )
    expect(await jobsOf(app, id, jobName)).toHaveLength(before + 1)
  })

  it.for([
    [
      'received',
      'La carta está esperando la validación de su dirección y no está atascada: no hay nada que reintentar (se considera atascada tras 1 min sin avanzar)',
    ],
    ['printing', 'La carta se está imprimiendo y no está atascada: no hay nada que reintentar (se considera atascada tras 1 min sin avanzar)'],
    ['scheduled', 'La carta está programada y aún no ha entrado en producción: no hay nada que reintentar'],
    ['printed', 'La carta ya está impresa: no hay nada que reintentar'],
    ['mailed', 'La carta ya se entregó a correos: no hay nada que reintentar'],
    ['address_rejected', 'La carta fue rechazada por su dirección y sus créditos ya se devolvieron: no se puede reintentar'],
    ['cancelled', 'La carta está cancelada: no se puede reintentar'],
  ] as const)('refuses a %s letter that is not stuck with 409, changing nothing', async ([status, message], { gateway: app, admin, account }) => {
    const id = await letterIn(app, account, status, ['received', 'printing'].includes(status) ? 0 : 180)
    const [jobs, events] = [
      await app.db
        .select()
        .from(outbox)
        .where(sql`${outbox.payload}->>'letterId' = ${id}`),
      await eventsOf(app, id),
    ]
    expectError(await admin.post(`/admin/cards/${id}/retry`), 409, 'Conflict', message)
    expect(await statusOf(app, id)).toBe(status)
    expect(
      await app.db
        .select()
        .from(outbox)
        .where(sql`${outbox.payload}->>'letterId' = ${id}`),
    ).toEqual(jobs)
    expect(await eventsOf(app, id)).toEqual(events)
  })

  it('answers 404 for an unknown letter, 400 for a malformed id or a body with fields, 401 for a bad token', async ({ gateway: app, admin, account }) => {
    expectError(await admin.post(`/admin/cards/${UNKNOWN_ID}/retry`), 404, 'Not Found', 'La carta no existe')
    expectError(await admin.post('/admin/cards/nada/retry'), 400, 'Bad Request', "El parámetro de ruta 'id' debe ser un UUID válido")
    const id = await letterIn(app, account, 'failed')
    expectError(
      await admin.post(`/admin/cards/${id}/retry`, { motivo: 'papel' }),
      400,
      'Bad Request',
      'Esta ruta no admite campos en el cuerpo: envíala sin cuerpo o con {}',
    )
    expectError(await admin.raw('POST', `/admin/cards/${id}/retry`, {}, { authorization: 'Bearer otro-token-cualquiera-123' }), 401, 'Unauthorized')
    expect(await statusOf(app, id)).toBe('failed')
    expect(await jobsOf(app, id, 'produce-letter')).toEqual([])
  })

  it('takes the request without a body too', async ({ gateway: app, admin, account }) => {
    const id = await letterIn(app, account, 'failed')
    const response = await admin.raw('POST', `/admin/cards/${id}/retry`)
    expect(response.statusCode, response.body).toBe(200)
  })
})
