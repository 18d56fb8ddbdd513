import { describe, expect } from 'vitest'
import { and, eq, inArray, sql } from 'drizzle-orm'
import { newLetter } from '@letters/test/support/factories'
import { it as base } from '@letters/test/support/fixtures'
import { closeDb, createDb, letterEvents, letters, type Db } from '@letters/db'
import { moveLetters } from '../src/index.js'

/** A second pool on the file's database: the second transaction's, as another process would have. */
const it = base.extend('other', { scope: 'file' }, ({ databaseUrl }, { onCleanup }) => {
  const other = createDb(databaseUrl)
  onCleanup(() => closeDb(other))
  return other
})

it.override({ databaseLabel: 'move-letters' })

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Waits until some backend of the database waits on a row lock: the second move is blocked behind the first. */
async function someoneWaitsOnALock(db: Db) {
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
  it.for([
    ['the same move', 'received'],
    ['a move to another status', 'cancelled'],
  ] as const)(
    'moves each letter once when two transactions race (%s): the second waits, then moves none and writes no event',
    async ([, secondTo], { database: db, other, owner: { accountId, company } }) => {
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
      await someoneWaitsOnALock(db)
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
    },
  )
})
