import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect } from 'vitest'
import { eq, sql } from 'drizzle-orm'
import { pino } from 'pino'
import { normalizeAddress } from '@letters/address'
import { closeDb, createDb, letterEvents, letters, printBatches, printBatchLetters, type Db, type LetterStatus } from '@letters/db'
import { newLetter, sampleRecipient, type newCompanyData } from '@letters/test/support/factories'
import { it as base } from '@letters/test/support/fixtures'
import { LocalArtifactStore } from '@letters/artifacts'
import { SpoolPrinter, type PrintFile, type Printer } from '../src/printer.js'
import { finishBatch } from '../src/batch-closer.js'
import { closeIfDue, putInTray } from '../src/batch-tray.js'
import { markFailed, produceLetter, TEST_RENDERED_DETAIL } from '../src/produce-letter.js'
import type { Floor } from '../src/floor.js'

const rules = { maxLetters: 3, maxWaitMs: 60_000 }

const it = base
  /** The floor's directory, named after the file: its artifact store and its printer's spool. */
  .extend('directory', { scope: 'file' }, async ({ databaseLabel }, { onCleanup }) => {
    const directory = await mkdtemp(join(tmpdir(), `letters-${databaseLabel}-`))
    onCleanup(() => rm(directory, { recursive: true, force: true }))
    return directory
  })
  /** How often the floor has poked the batch closer. */
  .extend('pokes', { scope: 'file' }, () => ({ count: 0 }))
  /** The floor in PRINTER=batch mode, on the file's database: each closed batch pokes the closer. */
  .extend('floor', { scope: 'file' }, ({ database, directory, pokes }): Floor => ({
    db: database,
    log: pino({ level: 'silent' }),
    printTimeoutMs: 10_000,
    floorCountry: 'ES',
    store: new LocalArtifactStore(join(directory, 'artifacts')),
    printer: new SpoolPrinter(join(directory, 'spool')),
    batching: { rules, poke: () => void pokes.count++ },
  }))

it.override({ databaseLabel: 'tray' })

// Each test starts with no batch under way: the ones before are handed over by hand.
it.beforeEach(async ({ database }) => {
  await database.update(printBatches).set({ status: 'handed' })
})

type Owner = { accountId: string; company: Awaited<ReturnType<typeof newCompanyData>> }

const readyLetter = (db: Db, { accountId, company }: Owner, livemode = true, status: LetterStatus = 'ready_for_print') =>
  newLetter(db, accountId, company, {
    status,
    livemode,
    message: 'Gracias por tu pedido, Lucía',
    address: { ...normalizeAddress(sampleRecipient), verifiedBy: 'offline' },
  })
const statusOf = async (db: Db, id: string) =>
  (await db.select({ status: letters.status, printClaim: letters.printClaim }).from(letters).where(eq(letters.id, id)))[0]!
const membershipsOf = (db: Db, id: string) => db.select().from(printBatchLetters).where(eq(printBatchLetters.letterId, id))

describe('PRINTER=batch: the tray', () => {
  it('never puts a test letter in a batch: it is rendered and marked printed as in spool mode', async ({ database: db, floor, owner }) => {
    const letter = await readyLetter(db, owner, false)
    expect(await produceLetter(floor, letter.id)).toBe('rendered')
    expect((await statusOf(db, letter.id)).status).toBe('printed')
    expect(await membershipsOf(db, letter.id)).toEqual([])
    const events = await db.select({ detail: letterEvents.detail }).from(letterEvents).where(eq(letterEvents.letterId, letter.id))
    expect(events.at(-1)?.detail).toBe(TEST_RENDERED_DETAIL)
  })

  it('puts a live letter in the open batch, keeps its own files and hands none over; a second run changes nothing', async ({
    database: db,
    floor,
    directory,
    owner,
  }) => {
    const letter = await readyLetter(db, owner)
    expect(await produceLetter(floor, letter.id)).toBe('batched')
    const after = await statusOf(db, letter.id)
    expect(after.status).toBe('printing')
    expect((await readdir(join(directory, 'artifacts', letter.id))).sort()).toEqual(['card.pdf', 'envelope.pdf'])
    expect(await readdir(join(directory, 'spool')).catch(() => [])).toEqual([])
    // The reconciler's job again, while the letter waits in the tray: no new claim, no second place.
    expect(await produceLetter(floor, letter.id)).toBe('batched')
    expect((await statusOf(db, letter.id)).printClaim).toBe(after.printClaim)
    expect(await membershipsOf(db, letter.id)).toHaveLength(1)
  })

  it('refuses a run whose claim was superseded: the letter goes in no batch through it', async ({ database: db, owner }) => {
    const letter = await readyLetter(db, owner, true, 'printing')
    await db.update(letters).set({ printClaim: 2 }).where(eq(letters.id, letter.id))
    expect(await putInTray(db, letter.id, 1, rules)).toEqual({ outcome: 'superseded' })
    expect(await membershipsOf(db, letter.id)).toEqual([])
    expect(await putInTray(db, letter.id, 2, rules)).toMatchObject({ outcome: 'added', closed: false })
    expect(await putInTray(db, letter.id, 2, rules)).toEqual({ outcome: 'already_batched' })
    expect(await membershipsOf(db, letter.id)).toHaveLength(1)
  })

  it('opens no tray for a run of a letter already in a batch that has closed (a job run again): it stays in its batch, and no empty tray is left', async ({
    database: db,
    owner,
  }) => {
    const letter = await readyLetter(db, owner, true, 'printing')
    await db.update(letters).set({ printClaim: 1 }).where(eq(letters.id, letter.id))
    const first = await putInTray(db, letter.id, 1, rules)
    expect(first).toMatchObject({ outcome: 'added' })
    // Its batch closes (full, or due) and is being handed over: no tray of its stocks is open.
    await db
      .update(printBatches)
      .set({ status: 'closing' })
      .where(eq(printBatches.id, (first as { batchId: string }).batchId))
    expect(await putInTray(db, letter.id, 1, rules)).toEqual({ outcome: 'already_batched' })
    expect(await membershipsOf(db, letter.id)).toHaveLength(1)
    expect(await db.select({ id: printBatches.id }).from(printBatches).where(eq(printBatches.status, 'open'))).toEqual([])
  })

  it('closes the batch at BATCH_MAX_LETTERS, pokes the closer, and opens the next for the letter after', async ({ database: db, floor, pokes, owner }) => {
    const before = pokes.count
    const batch = [await readyLetter(db, owner), await readyLetter(db, owner), await readyLetter(db, owner), await readyLetter(db, owner)]
    for (const letter of batch) expect(await produceLetter(floor, letter.id)).toBe('batched')
    expect(pokes.count).toBe(before + 1)
    const rows = await db
      .select({ status: printBatches.status, count: printBatches.letterCount })
      .from(printBatches)
      .where(sql`status <> 'handed'`)
    expect(rows.map((row) => `${row.status} ${row.count}`).sort()).toEqual(['closing 3', 'open 1'])
  })

  it('keeps one ink per batch, as it keeps one stock: letters of two inks fill two trays, and each closes with its own', async ({
    database: db,
    floor,
    owner,
  }) => {
    const inked = async (inkColor: 'blue' | 'red') => {
      const letter = await readyLetter(db, owner)
      await db.update(letters).set({ inkColor, drawing: 5 }).where(eq(letters.id, letter.id))
      expect(await produceLetter(floor, letter.id)).toBe('batched')
      return letter.id
    }
    const ids = [await inked('blue'), await inked('red'), await inked('blue'), await inked('red'), await inked('blue')]
    const trays = await db
      .select({ batchId: printBatchLetters.batchId, ink: printBatches.inkColor, letterInk: letters.inkColor, status: printBatches.status })
      .from(printBatchLetters)
      .innerJoin(printBatches, eq(printBatches.id, printBatchLetters.batchId))
      .innerJoin(letters, eq(letters.id, printBatchLetters.letterId))
      .where(sql`${printBatchLetters.letterId} IN ${ids}`)
    for (const tray of trays) expect(tray.letterInk).toBe(tray.ink)
    const byBatch = new Map(trays.map((tray) => [tray.batchId, `${tray.ink} ${tray.status}`]))
    // Three blue letters fill a batch of three (closed); the two red ones wait in their own.
    expect([...byBatch.values()].sort()).toEqual(['blue closing', 'red open'])
  })

  it('closes the open batch once its first letter has waited BATCH_MAX_WAIT_MS, not before', async ({ database: db, floor, owner }) => {
    const letter = await readyLetter(db, owner)
    await produceLetter(floor, letter.id)
    expect(await closeIfDue(db, rules)).toBe(false)
    await db
      .update(printBatches)
      .set({ openedAt: sql`now() - interval '61 seconds'` })
      .where(eq(printBatches.status, 'open'))
    expect(await closeIfDue(db, rules)).toBe(true)
    const [membership] = await membershipsOf(db, letter.id)
    const [batch] = await db.select().from(printBatches).where(eq(printBatches.id, membership!.batchId))
    expect(batch?.status).toBe('closing')
    expect(membership?.sequence).toBe(1)
  })

  it('prints a letter marked failed while it waited in the tray once its batch is handed over, and a later job finds it done', async ({
    database: db,
    floor,
    directory,
    owner,
  }) => {
    const [first, second] = [await readyLetter(db, owner), await readyLetter(db, owner)]
    await produceLetter(floor, first.id)
    await produceLetter(floor, second.id)
    await markFailed(db, second.id, 3, 'any')
    await db
      .update(printBatches)
      .set({ openedAt: sql`now() - interval '61 seconds'` })
      .where(eq(printBatches.status, 'open'))
    await closeIfDue(db, rules)
    const [membership] = await membershipsOf(db, first.id)
    expect(await finishBatch(floor, membership!.batchId)).toBe('handed')
    expect((await statusOf(db, first.id)).status).toBe('printed')
    expect((await statusOf(db, second.id)).status).toBe('printed')
    expect((await readdir(join(directory, 'spool'))).sort()).toEqual([
      `batch-${membership!.batchId}.cards.pdf`,
      `batch-${membership!.batchId}.envelopes.pdf`,
      `batch-${membership!.batchId}.manifest.csv`,
    ])
    // Finishing again (a closer that raced this one) hands nothing over twice and changes nothing.
    expect(await finishBatch(floor, membership!.batchId)).toBe('handed')
    expect(await produceLetter(floor, second.id)).toBe('already_done')
  })

  it('retries a batch whose printer failed part-way: the files it took are not handed over again', async ({ database: db, floor, owner }) => {
    const printed: string[] = []
    let refusals = 1
    const flaky: Printer = {
      name: 'flaky',
      async print(file: PrintFile) {
        if (file.name.endsWith('.envelopes.pdf') && refusals-- > 0) throw new Error('printer jammed')
        printed.push(file.name)
      },
    }
    const letter = await readyLetter(db, owner)
    await produceLetter(floor, letter.id)
    await db
      .update(printBatches)
      .set({ openedAt: sql`now() - interval '61 seconds'` })
      .where(eq(printBatches.status, 'open'))
    await closeIfDue(db, rules)
    const [membership] = await membershipsOf(db, letter.id)
    const batchId = membership!.batchId
    await expect(finishBatch({ ...floor, printer: flaky }, batchId)).rejects.toThrow('printer jammed')
    expect((await statusOf(db, letter.id)).status).toBe('printing')
    expect(await finishBatch({ ...floor, printer: flaky }, batchId)).toBe('handed')
    expect(printed).toEqual([`batch-${batchId}.cards.pdf`, `batch-${batchId}.envelopes.pdf`, `batch-${batchId}.manifest.csv`])
    expect((await statusOf(db, letter.id)).status).toBe('printed')
  })

  it('is not taken over while the printer has one of its files and its closer has lost its connections: each file is printed once', async ({
    database: db,
    databaseUrl,
    floor,
    owner,
  }) => {
    const letter = await readyLetter(db, owner)
    await produceLetter(floor, letter.id)
    await db
      .update(printBatches)
      .set({ openedAt: sql`now() - interval '61 seconds'` })
      .where(eq(printBatches.status, 'open'))
    await closeIfDue(db, rules)
    const [membership] = await membershipsOf(db, letter.id)
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
    const dbA = createDb(`${databaseUrl}?application_name=closer-a`)
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
      expect((await statusOf(db, letter.id)).status).toBe('printed')
    } finally {
      await closeDb(dbA)
    }
  })

  it('leaves a closer that took over a lapsed lease holding it when the closer it replaced lets go', async ({ database: db, databaseUrl, floor, owner }) => {
    const letter = await readyLetter(db, owner)
    await produceLetter(floor, letter.id)
    await db
      .update(printBatches)
      .set({ openedAt: sql`now() - interval '61 seconds'` })
      .where(eq(printBatches.status, 'open'))
    await closeIfDue(db, rules)
    const [membership] = await membershipsOf(db, letter.id)
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
    const dbA = createDb(`${databaseUrl}?application_name=closer-lapsed`)
    try {
      const first = gated()
      const running = finishBatch({ ...floor, db: dbA, printer: first }, batchId)
      await first.started
      const leaseA = (await leaseOf()).id
      // A's connections go, then its lease lapses (a closer cut off for longer than it lasts).
      const { cut } = (await db.execute<{ cut: string }>(sql`SELECT clock_timestamp()::text AS cut`))[0]!
      await db.execute(sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'closer-lapsed'`)
      // A holds its record of the card file again, on a new connection, before B starts: B
      // starting earlier could take the file first, as a lapsed lease allows.
      const heldAgain = async () =>
        (
          await db.execute(sql`
            SELECT a.pid FROM pg_stat_activity a
            WHERE a.application_name = 'closer-lapsed' AND a.state = 'idle in transaction' AND a.backend_start > ${cut}::timestamptz
              AND EXISTS (SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE l.pid = a.pid AND c.relname = 'print_batch_handoffs')`)
        ).length
      await expect.poll(heldAgain, { timeout: 10_000, interval: 20 }).toBe(1)
      // Lapsed only now, just before B: A's lease renewal (every 2 s, while it waits for its
      // printer) would otherwise make it live again while A reconnects.
      await db.execute(sql`UPDATE print_batches SET closer_lease_until = now() - interval '1 second' WHERE id = ${batchId}`)
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
