import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { and, eq, inArray, sql } from 'drizzle-orm'
import { isolatedDatabase } from '@letters/test/support/context'
import { newAccount, newCompanyData, newLetter } from '@letters/test/support/factories'
import { closeDb, createDb, letterEvents, letters, type Db } from '@letters/db'
import { moveLetters } from '../src/index.js'

let database: Awaited<ReturnType<typeof isolatedDatabase>>
let db: Db
let other: Db
let accountId: string
let company: Awaited<ReturnType<typeof newCompanyData>>

beforeAll(async () => {
  database = await isolatedDatabase('move-letters')
  db = createDb(database.url)
  other = createDb(database.url)
  accountId = (await newAccount(db, { credits: 10 })).id
  company = await newCompanyData(db, accountId)
})
afterAll(async () => {
  await closeDb(db)
  await closeDb(other)
  await database.drop()
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Waits until some backend of the database waits on a row lock: the second move is blocked behind the first. */
async function someoneWaitsOnALock() {
  for (let attempt = 0; attempt < 200; attempt++) {
    const [row] = await db.execute<{ waiting: number }>(
      sql`SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    )
    if ((row?.waiting ?? 0) > 0) return
    await sleep(25)
  }
  throw new Error('the second move never waited for the first one’s locks')
}

describe('moveLetters under concurrency', () => {
  it.each([
    ['the same move', 'received'],
    ['a move to another status', 'cancelled'],
  ] as const)('moves each letter once when two transactions race (%s): the second waits, then moves none and writes no event', async (_what, secondTo) => {
    const ids = await Promise.all(Array.from({ length: 40 }, async () => (await newLetter(db, accountId, company, { status: 'scheduled' })).id))

    let releaseFirst!: () => void
    const firstMayCommit = new Promise<void>((resolve) => (releaseFirst = resolve))
    let firstMoved: unknown[] = []
    // The first holds its rows' locks until the second has run into them.
    const first = db.transaction(async (tx) => {
      firstMoved = await moveLetters(tx, ids, { from: 'scheduled', to: 'received', detail: 'primera' })
      await firstMayCommit
    })
    while (firstMoved.length === 0) await sleep(10)
    const second = other.transaction((tx) => moveLetters(tx, ids, { from: 'scheduled', to: secondTo, detail: 'segunda' }))
    await someoneWaitsOnALock()
    releaseFirst()
    await first
    const secondMoved = await second

    expect({ first: firstMoved.length, second: secondMoved.length }).toEqual({ first: 40, second: 0 })
    const statuses = await db.select({ status: letters.status }).from(letters).where(inArray(letters.id, ids))
    expect(new Set(statuses.map((row) => row.status))).toEqual(new Set(['received']))
    const events = await db
      .select({ detail: letterEvents.detail })
      .from(letterEvents)
      .where(and(inArray(letterEvents.letterId, ids), eq(letterEvents.status, secondTo)))
    expect(events.map((event) => event.detail)).toEqual(secondTo === 'received' ? Array<string>(40).fill('primera') : [])
  })
})
