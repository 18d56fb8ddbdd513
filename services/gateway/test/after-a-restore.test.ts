import { describe, expect } from 'vitest'
import { eq, sql } from 'drizzle-orm'
import { PrintJournal } from '@letters/artifacts'
import { databaseRestores, letterEvents, letters, outbox, type LetterStatus } from '@letters/db'
import { JOURNAL_PRINTED_DETAIL, RESUMED_DETAIL } from '@letters/letters'
import type { App } from '../src/app.js'
import { it as base } from '@letters/test/support/fixtures'
import type { Account } from '@letters/test/support/gateway'
import { metricSamples } from '@letters/test/support/metrics'
import { expectError, sendSingle, startGateway } from './helpers.js'

type StuckList = { data: Array<{ id: string; status: string }>; nextCursor: string | null }
type Reconciled = { resumed: number; printedFromJournal: number; stuck: number }

/**
 * A letter of the account in `status`, changed just now, whose last job was handed to Redis
 * (its outbox row sent) and is not there: what a restore with an empty queue prefix leaves.
 */
async function waitingLetter(app: App, account: Account, status: LetterStatus) {
  const id = await sendSingle(app, account)
  await app.db.execute(sql`UPDATE letters SET status = ${status}, updated_at = now() WHERE id = ${id}::uuid`)
  await app.db.execute(sql`UPDATE outbox SET sent_at = now() WHERE payload ->> 'letterId' = ${id}`)
  return id
}

const detailsOf = async (app: App, id: string) =>
  (await app.db.select({ detail: letterEvents.detail }).from(letterEvents).where(eq(letterEvents.letterId, id))).map((event) => event.detail)
const statusOf = async (app: App, id: string) => (await app.db.select({ status: letters.status }).from(letters).where(eq(letters.id, id)))[0]?.status
const stuckIds = async (admin: { get: (url: string) => Promise<{ json: <T>() => T }> }) =>
  (await admin.get('/admin/stuck-letters?limit=100')).json<StuckList>().data.map((letter) => letter.id)

/** What the floor would have written had it printed the letter's files (`files` of card.pdf and envelope.pdf) before the restore. */
async function journaled(app: App, letterId: string, files: Array<'card.pdf' | 'envelope.pdf'>) {
  const journal = new PrintJournal(app.artifacts)
  const all = [`${letterId}.card.pdf`, `${letterId}.envelope.pdf`]
  for (const file of files) await journal.recordLetterFile({ letterId, file: `${letterId}.${file}`, files: all, claim: 1, printer: 'spool' }, Buffer.from(file))
}

/** Letters cancelled and restores reconciled after each test, so that the next one's lists are its own. */
const it = base.extend('afterwards', async ({ gateway: app }, { onCleanup }) => {
  const ids: string[] = []
  onCleanup(async () => {
    if (ids.length > 0) await app.db.execute(sql`UPDATE letters SET status = 'cancelled' WHERE id IN ${ids}`)
    await app.db.update(databaseRestores).set({ reconciledAt: sql`now()` })
  })
  return ids
})

// A database of its own: the stuck list shows every account's letters. RECONCILE_AFTER_MS as in
// production: a letter changed just now is stuck only because of the restore.
it.override({ gatewayOptions: { isolate: 'afterrestore', env: { RECONCILE_AFTER_MS: '600000' } } })

describe('letters left waiting by a restore', () => {
  it('are stuck at once, in the list and the gauge, and an ops retry takes them', async ({ gateway: app, admin, account, afterwards }) => {
    const waiting = [
      await waitingLetter(app, account, 'received'),
      await waitingLetter(app, account, 'ready_for_print'),
      await waitingLetter(app, account, 'printing'),
    ]
    afterwards.push(...waiting)
    // The control: changed a moment ago, none is stuck yet by RECONCILE_AFTER_MS.
    expect(await stuckIds(admin)).toEqual([])
    expectError(await admin.post(`/admin/cards/${waiting[0]}/retry`), 409, 'Conflict')

    // The reconciler found the database behind the artifact store's watermark.
    await app.db.insert(databaseRestores).values({ source: 'watermark', databaseCounter: 3, journalCounter: 9 })
    const after = await sendSingle(app, account)
    afterwards.push(after)
    await app.db.execute(sql`UPDATE outbox SET sent_at = now() WHERE payload ->> 'letterId' = ${after}`)

    expect((await stuckIds(admin)).sort()).toEqual([...waiting].sort())
    const stuck = await metricSamples(app, 'letters_stuck')
    for (const status of ['received', 'ready_for_print', 'printing']) expect(stuck[`letters_stuck{status="${status}",mode="live"}`], status).toBe(1)

    const retried = await admin.post(`/admin/cards/${waiting[0]}/retry`)
    expect(retried.statusCode, retried.body).toBe(200)
    expect(await detailsOf(app, waiting[0]!)).toContain(RESUMED_DETAIL)
    // Resumed, it changed after the restore: no longer stuck.
    expect((await stuckIds(admin)).sort()).toEqual(waiting.slice(1).sort())
  })
})

describe('DELETE /cards/{id} after a restore', () => {
  it('refuses with 409, and refunds nothing, a letter the print journal has on paper though the database shows it waiting', async ({
    gateway: app,
    admin,
    account,
    client,
    afterwards,
  }) => {
    const onPaper = await waitingLetter(app, account, 'ready_for_print')
    const notYet = await waitingLetter(app, account, 'ready_for_print')
    afterwards.push(onPaper, notYet)
    await journaled(app, onPaper, ['card.pdf', 'envelope.pdf'])
    const balance = async () => (await admin.get(`/admin/accounts/${account.id}`)).json<{ balance: number }>().balance
    const before = await balance()
    expectError(await client.delete(`/cards/${onPaper}`), 409, 'Conflict', 'La carta ya se entregó a la impresora y no se puede cancelar')
    expect(await statusOf(app, onPaper)).toBe('ready_for_print')
    expect(await balance()).toBe(before)
    // The control: one the journal does not have is cancelled and refunded.
    const cancelled = await client.delete(`/cards/${notYet}`)
    expect(cancelled.statusCode, cancelled.body).toBe(200)
    expect(await balance()).toBeGreaterThan(before)
  })
})

describe('POST /admin/reconcile', () => {
  it('marks printed what the print journal has on paper, resumes what lost its job, and leaves nothing stuck', async ({
    gateway: app,
    admin,
    account,
    afterwards,
  }) => {
    const onPaper = await waitingLetter(app, account, 'ready_for_print')
    const printingOnPaper = await waitingLetter(app, account, 'printing')
    const halfPrinted = await waitingLetter(app, account, 'printing')
    const received = await waitingLetter(app, account, 'received')
    afterwards.push(onPaper, printingOnPaper, halfPrinted, received)
    await journaled(app, onPaper, ['card.pdf', 'envelope.pdf'])
    await journaled(app, printingOnPaper, ['card.pdf', 'envelope.pdf'])
    await journaled(app, halfPrinted, ['card.pdf'])

    const response = await admin.post('/admin/reconcile')
    expect(response.statusCode, response.body).toBe(200)
    expect(response.json<Reconciled>()).toEqual({ resumed: 2, printedFromJournal: 2, stuck: 0 })

    for (const id of [onPaper, printingOnPaper]) {
      expect(await statusOf(app, id)).toBe('printed')
      expect(await detailsOf(app, id)).toContain(JOURNAL_PRINTED_DETAIL)
    }
    // Half on paper: produced again, and the floor hands over only the envelope (its journal read there).
    expect(await statusOf(app, halfPrinted)).toBe('printing')
    expect(await detailsOf(app, halfPrinted)).toContain(RESUMED_DETAIL)
    const jobs = await app.db
      .select({ jobName: outbox.jobName, letterId: sql<string>`${outbox.payload} ->> 'letterId'` })
      .from(outbox)
      .where(sql`${outbox.sentAt} IS NULL`)
    expect(
      jobs
        .filter((job) => [halfPrinted, received].includes(job.letterId))
        .map((job) => job.jobName)
        .sort(),
    ).toEqual(['normalize-address', 'produce-letter'])
    expect(jobs.filter((job) => [onPaper, printingOnPaper].includes(job.letterId))).toEqual([])

    const restores = await app.db.select().from(databaseRestores).where(eq(databaseRestores.source, 'ops'))
    expect(restores).toHaveLength(1)
    expect(restores[0]!.reconciledAt).not.toBeNull()
    expect(await stuckIds(admin)).toEqual([])
  })

  it('run again, finds nothing more to do', async ({ admin }) => {
    expect((await admin.post('/admin/reconcile')).json<Reconciled>()).toEqual({ resumed: 0, printedFromJournal: 0, stuck: 0 })
  })

  it('answers 400 with a body and 401 without the admin token', async ({ gateway: app, admin }) => {
    expectError(await admin.post('/admin/reconcile', { restored: true }), 400, 'Bad Request')
    expectError(await app.inject({ method: 'POST', url: '/admin/reconcile' }), 401, 'Unauthorized')
    expectError(await admin.raw('POST', '/admin/reconcile', undefined, { authorization: 'Bearer otro-token-cualquiera-123' }), 401, 'Unauthorized')
  })

  it('answers 503 when Redis does not answer, and the letters stay stuck for the next try', async ({ gateway: app, admin, account, afterwards }) => {
    const waiting = await waitingLetter(app, account, 'received')
    afterwards.push(waiting)
    // The same database, and a Redis nobody listens for.
    const cut = await startGateway({ DATABASE_URL: app.config.databaseUrl, REDIS_URL: 'redis://127.0.0.1:1' })
    try {
      const response = await cut.inject({ method: 'POST', url: '/admin/reconcile', headers: { authorization: `Bearer ${app.config.adminToken}` } })
      expectError(response, 503, 'Service Unavailable', 'Redis no responde: no se pudo saber qué trabajos se perdieron. Inténtalo de nuevo')
    } finally {
      await cut.close()
    }
    expect(await stuckIds(admin)).toContain(waiting)
    expect(await statusOf(app, waiting)).toBe('received')
  })
})
