import { expect } from 'vitest'
import { asc, eq, sql } from 'drizzle-orm'
import { accounts, ledgerEntries, letterEvents, letters, outbox, type Db } from '@letters/db'

/** The account's balance, as stored. */
export const balanceOf = async (db: Db, accountId: string) =>
  (await db.select({ balance: accounts.balance }).from(accounts).where(eq(accounts.id, accountId)))[0]!.balance

/** What an account has in the database: balance, letters, ledger entries and queued jobs. */
export async function moneyState(db: Db, accountId: string) {
  const [account] = await db.select({ balance: accounts.balance }).from(accounts).where(eq(accounts.id, accountId))
  const letterRows = await db.select().from(letters).where(eq(letters.accountId, accountId))
  const entries = await db.select().from(ledgerEntries).where(eq(ledgerEntries.accountId, accountId)).orderBy(asc(ledgerEntries.id))
  const jobs = await db
    .select()
    .from(outbox)
    .where(sql`${outbox.payload}->>'letterId' IN (SELECT id::text FROM letters WHERE account_id = ${accountId}::uuid)`)
  return { balance: account!.balance, letters: letterRows, entries, charges: entries.filter((entry) => entry.kind === 'charge'), jobs }
}

/**
 * The ledger agrees with the letters: one charge per live letter (a test letter has none), of its
 * cost, and the balance is the entries' sum. Every letter that entered the pipeline (a `received`
 * event: sent at once, or a scheduled one the clock released) has exactly one address job; one
 * still scheduled, or cancelled while it was, has none.
 */
export async function expectLedgerMatchesLetters(db: Db, accountId: string) {
  const state = await moneyState(db, accountId)
  expect(state.entries.reduce((sum, entry) => sum + entry.amount, 0)).toBe(state.balance)
  const ids = (rows: Array<{ id: string }>) => rows.map((row) => row.id).sort()
  expect(state.charges.map((entry) => entry.letterId).sort()).toEqual(ids(state.letters.filter((letter) => letter.livemode)))
  const costs = new Map(state.letters.map((letter) => [letter.id, letter.cost]))
  for (const charge of state.charges) expect(-charge.amount).toBe(costs.get(charge.letterId!))

  const received = await db
    .selectDistinct({ letterId: letterEvents.letterId })
    .from(letterEvents)
    .innerJoin(letters, eq(letters.id, letterEvents.letterId))
    .where(sql`${letters.accountId} = ${accountId}::uuid AND ${letterEvents.status} = 'received'`)
  const addressJobs = state.jobs.filter((job) => job.jobName === 'normalize-address').map((job) => job.payload.letterId!)
  expect(addressJobs.sort()).toEqual(received.map((row) => row.letterId).sort())
  // What has no `received` event is a scheduled letter: still waiting, or cancelled while it was.
  for (const letter of state.letters.filter((letter) => !received.some((row) => row.letterId === letter.id))) {
    expect(letter.sendAt, letter.id).not.toBeNull()
    expect(['scheduled', 'cancelled'], letter.id).toContain(letter.status)
  }
  return state
}
