import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { eq, sql } from 'drizzle-orm'
import { pino } from 'pino'
import { normalizeAddress } from '@letters/address'
import { closeDb, createDb, letterEvents, letters, printBatches, printBatchLetters, type Db, type LetterStatus } from '@letters/db'
import { isolatedDatabase } from '@letters/test/support/context'
import { newAccount, newCompanyData, newLetter, sampleRecipient } from '@letters/test/support/factories'
import { LocalArtifactStore } from '@letters/artifacts'
import { SpoolPrinter, type PrintFile, type Printer } from '../src/printer.js'
import { finishBatch } from '../src/batch-closer.js'
import { closeIfDue, putInTray } from '../src/batch-tray.js'
import { markFailed, produceLetter, TEST_RENDERED_DETAIL, type Floor } from '../src/produce-letter.js'

let database: Awaited<ReturnType<typeof isolatedDatabase>>
let db: Db
let directory: string
let floor: Floor
let pokes = 0
let company: Awaited<ReturnType<typeof newCompanyData>>
let accountId: string
const rules = { maxLetters: 3, maxWaitMs: 60_000 }

beforeAll(async () => {
  database = await isolatedDatabase('tray')
  db = createDb(database.url)
  directory = await mkdtemp(join(tmpdir(), 'letters-tray-'))
  floor = {
    db,
    log: pino({ level: 'silent' }),
    printTimeoutMs: 10_000,
    floorCountry: 'ES',
    store: new LocalArtifactStore(join(directory, 'artifacts')),
    printer: new SpoolPrinter(join(directory, 'spool')),
    batching: { rules, poke: () => void pokes++ },
  }
  accountId = (await newAccount(db)).id
  company = await newCompanyData(db, accountId)
})
afterAll(async () => {
  await closeDb(db)
  await database.drop()
  await rm(directory, { recursive: true, force: true })
})
// Each test starts with no batch under way: the ones before are handed over by hand.
beforeEach(async () => {
  await db.update(printBatches).set({ status: 'handed' })
})

const readyLetter = (livemode = true, status: LetterStatus = 'ready_for_print') =>
  newLetter(db, accountId, company, {
    status,
    livemode,
    message: 'Gracias por tu pedido, Lucía',
    address: { ...normalizeAddress(sampleRecipient), verifiedBy: 'offline' },
  })
const statusOf = async (id: string) => (await db.select({ status: letters.status, printClaim: letters.printClaim }).from(letters).where(eq(letters.id, id)))[0]!
const membershipsOf = (id: string) => db.select().from(printBatchLetters).where(eq(printBatchLetters.letterId, id))

describe('PRINTER=batch: the tray', () => {
  it('never puts a test letter in a batch: it is rendered and marked printed as in spool mode', async () => {
    const letter = await readyLetter(false)
    expect(await produceLetter(floor, letter.id)).toBe('rendered')
    expect((await statusOf(letter.id)).status).toBe('printed')
    expect(await membershipsOf(letter.id)).toEqual([])
    const events = await db.select({ detail: letterEvents.detail }).from(letterEvents).where(eq(letterEvents.letterId, letter.id))
    expect(events.at(-1)?.detail).toBe(TEST_RENDERED_DETAIL)
  })

  it('puts a live letter in the open batch, keeps its own files and hands none over; a second run changes nothing', async () => {
    const letter = await readyLetter()
    expect(await produceLetter(floor, letter.id)).toBe('batched')
    const after = await statusOf(letter.id)
    expect(after.status).toBe('printing')
    expect((await readdir(join(directory, 'artifacts', letter.id))).sort()).toEqual(['card.pdf', 'envelope.pdf'])
    expect(await readdir(join(directory, 'spool')).catch(() => [])).toEqual([])
    // The reconciler's job again, while the letter waits in the tray: no new claim, no second place.
    expect(await produceLetter(floor, letter.id)).toBe('batched')
    expect((await statusOf(letter.id)).printClaim).toBe(after.printClaim)
    expect(await membershipsOf(letter.id)).toHaveLength(1)
  })

  it('refuses a run whose claim was superseded: the letter goes in no batch through it', async () => {
    const letter = await readyLetter(true, 'printing')
    await db.update(letters).set({ printClaim: 2 }).where(eq(letters.id, letter.id))
    expect(await putInTray(db, letter.id, 1, rules)).toEqual({ outcome: 'superseded' })
    expect(await membershipsOf(letter.id)).toEqual([])
    expect(await putInTray(db, letter.id, 2, rules)).toMatchObject({ outcome: 'added', closed: false })
    expect(await putInTray(db, letter.id, 2, rules)).toEqual({ outcome: 'already_batched' })
    expect(await membershipsOf(letter.id)).toHaveLength(1)
  })

  it('closes the batch at BATCH_MAX_LETTERS, pokes the closer, and opens the next for the letter after', async () => {
    const before = pokes
    const batch = [await readyLetter(), await readyLetter(), await readyLetter(), await readyLetter()]
    for (const letter of batch) expect(await produceLetter(floor, letter.id)).toBe('batched')
    expect(pokes).toBe(before + 1)
    const rows = await db
      .select({ status: printBatches.status, count: printBatches.letterCount })
      .from(printBatches)
      .where(sql`status <> 'handed'`)
    expect(rows.map((row) => `${row.status} ${row.count}`).sort()).toEqual(['closing 3', 'open 1'])
  })

  it('closes the open batch once its first letter has waited BATCH_MAX_WAIT_MS, not before', async () => {
    const letter = await readyLetter()
    await produceLetter(floor, letter.id)
    expect(await closeIfDue(db, rules)).toBe(false)
    await db
      .update(printBatches)
      .set({ openedAt: sql`now() - interval '61 seconds'` })
      .where(eq(printBatches.status, 'open'))
    expect(await closeIfDue(db, rules)).toBe(true)
    const [membership] = await membershipsOf(letter.id)
    const [batch] = await db.select().from(printBatches).where(eq(printBatches.id, membership!.batchId))
    expect(batch?.status).toBe('closing')
    expect(membership?.sequence).toBe(1)
  })

  it('prints a letter marked failed while it waited in the tray once its batch is handed over, and a later job finds it done', async () => {
    const [first, second] = [await readyLetter(), await readyLetter()]
    await produceLetter(floor, first.id)
    await produceLetter(floor, second.id)
    await markFailed(db, second.id, 3, 'any')
    await db
      .update(printBatches)
      .set({ openedAt: sql`now() - interval '61 seconds'` })
      .where(eq(printBatches.status, 'open'))
    await closeIfDue(db, rules)
    const [membership] = await membershipsOf(first.id)
    expect(await finishBatch(floor, membership!.batchId)).toBe('handed')
    expect((await statusOf(first.id)).status).toBe('printed')
    expect((await statusOf(second.id)).status).toBe('printed')
    expect((await readdir(join(directory, 'spool'))).sort()).toEqual([
      `batch-${membership!.batchId}.cards.pdf`,
      `batch-${membership!.batchId}.envelopes.pdf`,
      `batch-${membership!.batchId}.manifest.csv`,
    ])
    // Finishing again (a closer that raced this one) hands nothing over twice and changes nothing.
    expect(await finishBatch(floor, membership!.batchId)).toBe('handed')
    expect(await produceLetter(floor, second.id)).toBe('already_done')
  })

  it('retries a batch whose printer failed part-way: the files it took are not handed over again', async () => {
    const printed: string[] = []
    let refusals = 1
    const flaky: Printer = {
      name: 'flaky',
      async print(file: PrintFile) {
        if (file.name.endsWith('.envelopes.pdf') && refusals-- > 0) throw new Error('printer jammed')
        printed.push(file.name)
      },
    }
    const letter = await readyLetter()
    await produceLetter(floor, letter.id)
    await db
      .update(printBatches)
      .set({ openedAt: sql`now() - interval '61 seconds'` })
      .where(eq(printBatches.status, 'open'))
    await closeIfDue(db, rules)
    const [membership] = await membershipsOf(letter.id)
    const batchId = membership!.batchId
    await expect(finishBatch({ ...floor, printer: flaky }, batchId)).rejects.toThrow('printer jammed')
    expect((await statusOf(letter.id)).status).toBe('printing')
    expect(await finishBatch({ ...floor, printer: flaky }, batchId)).toBe('handed')
    expect(printed).toEqual([`batch-${batchId}.cards.pdf`, `batch-${batchId}.envelopes.pdf`, `batch-${batchId}.manifest.csv`])
    expect((await statusOf(letter.id)).status).toBe('printed')
  })

  it('is not taken over while the printer has one of its files and its closer has lost its connections: each file is printed once', async () => {
    const letter = await readyLetter()
    await produceLetter(floor, letter.id)
    await db
      .update(printBatches)
      .set({ openedAt: sql`now() - interval '61 seconds'` })
      .where(eq(printBatches.status, 'open'))
    await closeIfDue(db, rules)
    const [membership] = await membershipsOf(letter.id)
    const batchId = membership!.batchId
    const printed: string[] = []
    let startedCards!: () => void
    const cardsStarted = new Promise<void>((resolve) => (startedCards = resolve))
    let releaseCards!: () => void
    const cardsReleased = new Promise<void>((resolve) => (releaseCards = resolve))
    const slow: Printer = {
      name: 'slow',
      async print(file: PrintFile) {
        if (file.name.endsWith('.cards.pdf')) {
          startedCards()
          await cardsReleased
        }
        printed.push(file.name)
      },
    }
    // Closer A on connections of its own, so that they can be cut while its printer works.
    const dbA = createDb(`${database.url}?application_name=closer-a`)
    try {
      const first = finishBatch({ ...floor, db: dbA, printer: slow }, batchId)
      await cardsStarted
      const [cut] = await db.execute<{ n: number }>(
        sql`SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = 'closer-a'`,
      )
      expect(cut!.n).toBeGreaterThan(0)
      // Another worker's closer, at once: the lock went with A's connection, the lease did not.
      const other: Printer = { name: 'other', print: async (file) => void printed.push(file.name) }
      // (Without the lease it would wait on A's record, held again on a new connection, or print
      // the cards a second time if it got there first: given 5 s, it must answer `busy` at once.)
      const second = finishBatch({ ...floor, printer: other }, batchId)
      const outcome = await Promise.race([second, new Promise((resolve) => setTimeout(resolve, 5000, 'still waiting'))])
      releaseCards()
      await second.catch(() => undefined)
      expect(outcome).toBe('busy')
      await first.catch(() => undefined)
      // A has recorded the card file: the next round hands over only what is missing.
      expect(await finishBatch({ ...floor, printer: other }, batchId)).toBe('handed')
      expect(printed.filter((name) => name.endsWith('.cards.pdf'))).toHaveLength(1)
      expect(printed).toHaveLength(3)
      expect((await statusOf(letter.id)).status).toBe('printed')
    } finally {
      await closeDb(dbA)
    }
  })

  it('leaves a closer that took over a lapsed lease holding it when the closer it replaced lets go', async () => {
    const letter = await readyLetter()
    await produceLetter(floor, letter.id)
    await db
      .update(printBatches)
      .set({ openedAt: sql`now() - interval '61 seconds'` })
      .where(eq(printBatches.status, 'open'))
    await closeIfDue(db, rules)
    const [membership] = await membershipsOf(letter.id)
    const batchId = membership!.batchId
    const gated = () => {
      let started!: () => void
      let open!: () => void
      const printer: Printer & { started: Promise<void>; open: () => void } = {
        name: 'gated',
        started: new Promise<void>((resolve) => (started = resolve)),
        open: () => open(),
        async print(file: PrintFile) {
          if (!file.name.endsWith('.cards.pdf')) return
          started()
          await new Promise<void>((resolve) => (open = resolve))
        },
      }
      return printer
    }
    const leaseOf = async () =>
      (
        await db.execute<{ id: string | null; live: boolean }>(
          sql`SELECT closer_lease_id::text AS id, coalesce(closer_lease_until > now(), false) AS live FROM print_batches WHERE id = ${batchId}`,
        )
      )[0]!
    const dbA = createDb(`${database.url}?application_name=closer-lapsed`)
    try {
      const first = gated()
      const running = finishBatch({ ...floor, db: dbA, printer: first }, batchId)
      await first.started
      const leaseA = (await leaseOf()).id
      // A's lease lapses (a closer cut off for longer than it lasts) and its connections go.
      await db.execute(sql`UPDATE print_batches SET closer_lease_until = now() - interval '1 second' WHERE id = ${batchId}`)
      await db.execute(sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'closer-lapsed'`)
      // B takes the batch over, then waits for A's record of the card file (held again by A
      // until its printer answers).
      const second = gated()
      const takeover = finishBatch({ ...floor, printer: second }, batchId)
      await expect.poll(async () => (await leaseOf()).id, { timeout: 10_000 }).not.toBe(leaseA)
      const leaseB = (await leaseOf()).id
      expect(leaseB).not.toBeNull()
      // A finishes and lets go of what it takes for its lease: B's stays.
      first.open()
      await running.catch(() => undefined)
      expect(await leaseOf()).toEqual({ id: leaseB, live: true })
      // The card file was A's, recorded: B hands over the rest only.
      expect(await takeover).toBe('handed')
    } finally {
      await closeDb(dbA)
    }
  })
})
