import { randomBytes, randomUUID } from 'node:crypto'
import { describe, expect } from 'vitest'
import { asc, eq, sql } from 'drizzle-orm'
import postgres from 'postgres'
import { QR_SCANNED_EVENT, QR_SCANS_COUNTED_PER_MINUTE } from '@letters/contracts'
import { closeDb, createDb, events, letterEvents, letters, qrScans, type Db } from '@letters/db'
import { newLetter, type newCompanyData } from '@letters/test/support/factories'
import { it as base } from '@letters/test/support/fixtures'
import { QrScanJournal, recordLetterEvents, type QrScanJournalOptions } from '../src/index.js'

const it = base.extend({ databaseLabel: 'qr-scan-journal' })

type Owner = { accountId: string; company: Awaited<ReturnType<typeof newCompanyData>> }

const TRACKING_URL = 'https://tienda.example.com/gracias'

/** A received letter with a tracking URL and its code, its first event written as the intake writes it. */
async function trackedLetter(db: Db, { accountId, company }: Owner) {
  const code = randomBytes(9).toString('base64url').slice(0, 12)
  const letter = await newLetter(db, accountId, company, { trackingUrl: TRACKING_URL, trackingCode: code })
  await db.transaction(async (tx) => {
    await tx.insert(letterEvents).values({ letterId: letter.id, status: 'received' })
    await recordLetterEvents(tx, [letter.id])
  })
  return { id: letter.id, code }
}

function journalOf(db: Db, options: Partial<QrScanJournalOptions> = {}) {
  const reports: Array<{ level: 'warn' | 'error'; details: object; message: string }> = []
  const log = {
    warn: (details: object, message: string) => reports.push({ level: 'warn', details, message }),
    error: (details: object, message: string) => reports.push({ level: 'error', details, message }),
  }
  return { journal: new QrScanJournal(db, { log, retryMs: 20, ...options }), reports }
}

const tallyOf = async (db: Db, id: string) => {
  const [row] = await db.select({ scans: letters.qrScans }).from(letters).where(eq(letters.id, id))
  const kinds = (await db.select({ kind: qrScans.kind }).from(qrScans).where(eq(qrScans.letterId, id))).map((scan) => scan.kind)
  const scanEvents = await db
    .select({ body: events.body })
    .from(events)
    .where(sql`${events.letterId} = ${id} AND ${events.type} = ${QR_SCANNED_EVENT}`)
    .orderBy(asc(events.occurredAt))
  return {
    scans: row!.scans,
    counted: kinds.filter((kind) => kind === 'counted').length,
    limited: kinds.filter((kind) => kind === 'limited').length,
    uncounted: kinds.filter((kind) => kind === 'prefetch' || kind === 'preview').length,
    events: scanEvents.map((event) => (JSON.parse(event.body) as { data: { scans: number } }).data.scans),
  }
}

/** A transaction holding the rows of `ids` (as a status change would), until `release` is called. */
async function holdRows(databaseUrl: string, ids: string[]) {
  const holder = postgres(databaseUrl, { max: 1, onnotice: () => {} })
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  let held!: () => void
  const holding = new Promise<void>((resolve) => (held = resolve))
  const done = holder.begin(async (tx) => {
    await tx`SELECT 1 FROM letters WHERE id = ANY(${ids}::uuid[]) FOR UPDATE`
    held()
    await released
  })
  await holding
  return {
    release: async () => {
      release()
      await done
      await holder.end()
    },
  }
}

/** Waits until a statement of the connection named `applicationName` waits for a lock; returns its pid. */
async function waitingOnLock(databaseUrl: string, applicationName: string): Promise<number> {
  const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} })
  try {
    for (const giveUpAt = Date.now() + 20_000; Date.now() < giveUpAt;) {
      const [row] = await admin<Array<{ pid: number }>>`
        SELECT pid FROM pg_stat_activity WHERE application_name = ${applicationName} AND wait_event_type = 'Lock'`
      if (row) return row.pid
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    throw new Error(`no statement of ${applicationName} waited for a lock within 20 s`)
  } finally {
    await admin.end()
  }
}

describe('the journal of QR link requests', () => {
  it('writes requests of several letters that arrive together as one at a time would: counts, limits, prefetches and one event per letter', async ({
    database: db,
    owner,
  }) => {
    const { journal } = journalOf(db)
    const [first, second, third] = await Promise.all([trackedLetter(db, owner), trackedLetter(db, owner), trackedLetter(db, owner)])
    const requests = [
      ...Array.from({ length: 14 }, () => journal.record(first.code, 'scan')),
      journal.record(first.code, 'prefetch'),
      journal.record(second.code, 'scan'),
      journal.record(second.code, 'preview'),
      journal.record(second.code, 'scan'),
      journal.record(third.code, 'prefetch'),
    ]
    await Promise.all(requests)
    await journal.drained()
    expect(journal.size).toBe(0)

    expect(await tallyOf(db, first.id)).toEqual({
      scans: QR_SCANS_COUNTED_PER_MINUTE,
      counted: QR_SCANS_COUNTED_PER_MINUTE,
      limited: 14 - QR_SCANS_COUNTED_PER_MINUTE,
      uncounted: 1,
      events: [QR_SCANS_COUNTED_PER_MINUTE],
    })
    expect(await tallyOf(db, second.id)).toEqual({ scans: 2, counted: 2, limited: 0, uncounted: 1, events: [2] })
    expect(await tallyOf(db, third.id)).toEqual({ scans: 0, counted: 0, limited: 0, uncounted: 1, events: [] })

    // A later batch adds to the open event, and the minute's limit still holds for the first letter.
    await journal.record(first.code, 'scan')
    await journal.record(second.code, 'scan')
    await journal.drained()
    expect(await tallyOf(db, first.id)).toMatchObject({ scans: QR_SCANS_COUNTED_PER_MINUTE, limited: 15 - QR_SCANS_COUNTED_PER_MINUTE })
    expect(await tallyOf(db, second.id)).toMatchObject({ scans: 3, events: [3] })
  })

  it('skips a code no letter has any longer, and writes the rest of its batch', async ({ database: db, owner }) => {
    const { journal, reports } = journalOf(db)
    const kept = await trackedLetter(db, owner)
    await Promise.all([journal.record('zzzzzzzzzzzz', 'scan'), journal.record(kept.code, 'scan')])
    await journal.drained()
    expect(await tallyOf(db, kept.id)).toMatchObject({ scans: 1, events: [1] })
    expect(reports).toEqual([])
  })

  it(`holds the limit of ${QR_SCANS_COUNTED_PER_MINUTE} a minute when two gateways' journals write scans of one code at once`, async ({
    database: db,
    databaseUrl,
    owner,
  }) => {
    const other = createDb(databaseUrl, { max: 2 })
    try {
      const { code, id } = await trackedLetter(db, owner)
      const journals = [journalOf(db).journal, journalOf(other).journal]
      // The row held while both batches start, so that they meet.
      const held = await holdRows(databaseUrl, [id])
      await Promise.all(journals.flatMap((journal) => Array.from({ length: 15 }, () => journal.record(code, 'scan'))))
      await new Promise((resolve) => setTimeout(resolve, 300))
      await held.release()
      await Promise.all(journals.map((journal) => journal.drained()))
      expect(await tallyOf(db, id)).toEqual({
        scans: QR_SCANS_COUNTED_PER_MINUTE,
        counted: QR_SCANS_COUNTED_PER_MINUTE,
        limited: 30 - QR_SCANS_COUNTED_PER_MINUTE,
        uncounted: 0,
        events: [QR_SCANS_COUNTED_PER_MINUTE],
      })
    } finally {
      await closeDb(other)
    }
  })

  it('writes a batch again on a new connection when its connection is cut mid-write, counting each scan once', async ({ databaseUrl, database, owner }) => {
    const applicationName = `qr-journal-${randomUUID().slice(0, 8)}`
    const db = createDb(`${databaseUrl}?application_name=${applicationName}`, { max: 1 })
    try {
      const { code, id } = await trackedLetter(database, owner)
      const { journal, reports } = journalOf(db)
      const held = await holdRows(databaseUrl, [id])
      await Promise.all(Array.from({ length: 4 }, () => journal.record(code, 'scan')))
      const pid = await waitingOnLock(databaseUrl, applicationName)
      const [cut] = await database.execute<{ cut: boolean }>(sql`SELECT pg_terminate_backend(${pid}) AS cut`)
      expect(cut!.cut).toBe(true)
      await held.release()
      await journal.drained()
      expect(await tallyOf(database, id)).toEqual({ scans: 4, counted: 4, limited: 0, uncounted: 0, events: [4] })
      expect(reports.map((report) => report.level)).toContain('warn')
      expect(reports.filter((report) => report.level === 'error')).toEqual([])
    } finally {
      await closeDb(db)
    }
  })

  it('makes a request wait for room once the journal is full, and loses none of them', async ({ database: db, databaseUrl, owner }) => {
    const { code, id } = await trackedLetter(db, owner)
    const { journal } = journalOf(db, { maxPending: 3, maxBatch: 3 })
    const held = await holdRows(databaseUrl, [id])
    let answered = 0
    const requests = Array.from({ length: 8 }, () => journal.record(code, 'prefetch').then(() => answered++))
    // The first three fill it; their batch waits on the held row, and the other five wait for room.
    await expect.poll(() => answered).toBe(3)
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(answered).toBe(3)
    await held.release()
    await Promise.all(requests)
    await journal.drained()
    expect(answered).toBe(8)
    expect(await tallyOf(db, id)).toMatchObject({ scans: 0, uncounted: 8 })
  })

  it('writes what is queued when it is stopped, and past its deadline says how many it leaves', async ({ database: db, databaseUrl, owner }) => {
    const { code, id } = await trackedLetter(db, owner)
    const stopped = journalOf(db)
    await Promise.all([stopped.journal.record(code, 'scan'), stopped.journal.record(code, 'scan')])
    await stopped.journal.close(5000)
    expect(await tallyOf(db, id)).toMatchObject({ scans: 2 })

    const late = journalOf(db)
    const held = await holdRows(databaseUrl, [id])
    try {
      await late.journal.record(code, 'scan')
      await late.journal.close(300)
      expect(late.reports).toEqual([{ level: 'error', details: { unwritten: 1 }, message: expect.stringContaining('left unwritten') }])
    } finally {
      await held.release()
    }
    await late.journal.drained()
  })

  it('reports and drops a batch that cannot be written, and goes on with the next', async ({ database: db, owner }) => {
    const { code, id } = await trackedLetter(db, owner)
    const { journal, reports } = journalOf(db)
    // An instant with no text: the batch fails for good, not for a passing reason.
    await journal.record(code, 'scan', new Date(Number.NaN))
    await journal.drained()
    expect(reports.map((report) => [report.level, report.details])).toEqual([['error', expect.objectContaining({ requests: 1 })]])
    await journal.record(code, 'scan')
    await journal.drained()
    expect(await tallyOf(db, id)).toMatchObject({ scans: 1 })
  })
})
