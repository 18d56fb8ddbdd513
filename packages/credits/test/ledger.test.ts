import { describe, expect } from 'vitest'
import { asc, eq } from 'drizzle-orm'
import { ledgerEntries, type Db } from '@letters/db'
import { newAccount, newCompanyData, newLetter } from '@letters/test/support/factories'
import { it as base } from '@letters/test/support/fixtures'
import { AccountNotFoundError, InsufficientCreditsError, adjust, balance, refundLetter, topUp } from '../src/index.js'

const it = base.extend({ databaseLabel: 'ledger' })

async function entriesOf(db: Db, accountId: string) {
  return db.select().from(ledgerEntries).where(eq(ledgerEntries.accountId, accountId)).orderBy(asc(ledgerEntries.id))
}

/** The ledger's invariants: the balance is the sum of the entries, and each entry continues the one before. */
async function expectConsistentLedger(db: Db, accountId: string) {
  const entries = await entriesOf(db, accountId)
  let running = 0
  for (const entry of entries) {
    running += entry.amount
    expect(entry.balanceAfter).toBe(running)
    expect(entry.balanceAfter).toBeGreaterThanOrEqual(0)
  }
  expect(await balance(db, accountId)).toBe(running)
  return entries
}

describe('credits ledger', () => {
  it('refunds, tops up and adjusts, recording each movement with the balance it left', async ({ database: db }) => {
    const account = await newAccount(db)
    const company = await newCompanyData(db, account.id)
    const letter = await newLetter(db, account.id, company)

    expect((await topUp(db, account.id, 10, 'bought')).balanceAfter).toBe(10)
    expect((await adjust(db, account.id, -3, 'paid elsewhere')).balanceAfter).toBe(7)
    expect((await refundLetter(db, letter, 'address rejected'))?.balanceAfter).toBe(10)
    expect((await adjust(db, account.id, -4, 'correction')).balanceAfter).toBe(6)
    expect((await adjust(db, account.id, 2)).balanceAfter).toBe(8)

    const entries = await expectConsistentLedger(db, account.id)
    expect(entries.map((entry) => [entry.kind, entry.amount, entry.letterId, entry.reason])).toEqual([
      ['top_up', 10, null, 'bought'],
      ['adjustment', -3, null, 'paid elsewhere'],
      ['refund', 3, letter.id, 'address rejected'],
      ['adjustment', -4, null, 'correction'],
      ['adjustment', 2, null, null],
    ])
  })

  it('rejects a debit the balance cannot cover and writes nothing', async ({ database: db }) => {
    const account = await newAccount(db, { credits: 2 })
    await expect(adjust(db, account.id, -3)).rejects.toBeInstanceOf(InsufficientCreditsError)
    expect(await balance(db, account.id)).toBe(2)
    expect(await entriesOf(db, account.id)).toHaveLength(1)
  })

  it('tells a missing account from a short balance', async ({ database: db }) => {
    const missing = '00000000-0000-4000-8000-000000000000'
    await expect(adjust(db, missing, -3)).rejects.toBeInstanceOf(AccountNotFoundError)
    await expect(balance(db, missing)).rejects.toBeInstanceOf(AccountNotFoundError)
  })

  it('refuses amounts that are not positive whole credits', async ({ database: db, owner }) => {
    await expect(refundLetter(db, { id: '00000000-0000-4000-8000-000000000000', accountId: owner.accountId, cost: 0, livemode: true }, 'free')).rejects.toThrow(
      RangeError,
    )
    await expect(adjust(db, owner.accountId, 1.5)).rejects.toThrow(RangeError)
    await expect(topUp(db, owner.accountId, -1)).rejects.toThrow(RangeError)
    await expect(adjust(db, owner.accountId, 0)).rejects.toThrow(RangeError)
    expect(await balance(db, owner.accountId)).toBe(10)
  })

  it('refunds a letter at most once', async ({ database: db }) => {
    const account = await newAccount(db, { credits: 3 })
    const letter = await newLetter(db, account.id, await newCompanyData(db, account.id))
    await adjust(db, account.id, -3)
    await refundLetter(db, letter, 'cancelled')
    await expect(refundLetter(db, letter, 'cancelled')).rejects.toThrow()
    expect(await balance(db, account.id)).toBe(3)
    await expectConsistentLedger(db, account.id)
  })

  it('refunds a live letter its cost, with the reason, and a test letter nothing: no entry, the balance as it was', async ({ database: db, owner }) => {
    const live = await newLetter(db, owner.accountId, owner.company, { cost: 5 })
    const test = await newLetter(db, owner.accountId, owner.company, { cost: 5, livemode: false })
    await adjust(db, owner.accountId, -5, 'the live letter')

    expect(await refundLetter(db, test, 'cancelled by the client')).toBeNull()
    expect(await balance(db, owner.accountId)).toBe(5)
    expect(await refundLetter(db, live, 'cancelled by the client')).toMatchObject({ balanceAfter: 10 })
    // A second refund of the test letter still writes nothing (nothing to guard against twice).
    expect(await refundLetter(db, test, 'address rejected')).toBeNull()

    const entries = await expectConsistentLedger(db, owner.accountId)
    expect(entries.filter((entry) => entry.kind === 'refund').map((entry) => [entry.letterId, entry.amount, entry.reason])).toEqual([
      [live.id, 5, 'cancelled by the client'],
    ])
    expect(await balance(db, owner.accountId)).toBe(10)
  })

  it('rolls the movement back with the transaction it ran in', async ({ database: db, owner }) => {
    await expect(
      db.transaction(async (tx) => {
        await adjust(tx, owner.accountId, -3)
        throw new Error('letter insert failed')
      }),
    ).rejects.toThrow('letter insert failed')
    expect(await balance(db, owner.accountId)).toBe(10)
    expect(await entriesOf(db, owner.accountId)).toHaveLength(1)
  })
})

describe('credits ledger under concurrency', () => {
  it('lets exactly 50 of 200 parallel debits of 3 through on 150 credits', async ({ database: db }) => {
    const account = await newAccount(db, { credits: 150 })
    const results = await Promise.allSettled(Array.from({ length: 200 }, () => db.transaction((tx) => adjust(tx, account.id, -3))))
    const succeeded = results.filter((result) => result.status === 'fulfilled')
    const failed = results.filter((result) => result.status === 'rejected')
    expect(succeeded).toHaveLength(50)
    expect(failed).toHaveLength(150)
    for (const failure of failed) expect(failure.reason).toBeInstanceOf(InsufficientCreditsError)
    expect(await balance(db, account.id)).toBe(0)
    const entries = await expectConsistentLedger(db, account.id)
    expect(entries.filter((entry) => entry.kind === 'adjustment')).toHaveLength(50)
  })

  it('keeps the ledger exact with refunds and top-ups interleaved with debits', async ({ database: db }) => {
    const account = await newAccount(db, { credits: 150 })
    const company = await newCompanyData(db, account.id)
    // 20 letters (paid for by an earlier debit), to be refunded while the debits run.
    const paid: Array<Awaited<ReturnType<typeof newLetter>>> = []
    await topUp(db, account.id, 60)
    await adjust(db, account.id, -60)
    for (let i = 0; i < 20; i++) paid.push(await newLetter(db, account.id, company))
    // And 20 test letters, never charged: their refunds, interleaved too, must move nothing.
    const unpaid = await Promise.all(Array.from({ length: 20 }, () => newLetter(db, account.id, company, { livemode: false })))

    const work: Array<Promise<unknown>> = []
    for (let i = 0; i < 200; i++) {
      work.push(db.transaction((tx) => adjust(tx, account.id, -3)))
      if (i % 10 === 0) work.push(db.transaction((tx) => refundLetter(tx, paid[i / 10]!, 'cancelled')))
      if (i % 10 === 5) work.push(db.transaction((tx) => refundLetter(tx, unpaid[(i - 5) / 10]!, 'cancelled')))
      if (i % 8 === 0) work.push(db.transaction((tx) => topUp(tx, account.id, 5)))
    }
    const results = await Promise.allSettled(work)
    const rejected = results.filter((result): result is PromiseRejectedResult => result.status === 'rejected')
    for (const failure of rejected) expect(failure.reason).toBeInstanceOf(InsufficientCreditsError)

    const entries = await expectConsistentLedger(db, account.id)
    const concurrentCharges = entries.filter((entry) => entry.kind === 'adjustment' && entry.amount === -3)
    expect(entries.filter((entry) => entry.kind === 'refund')).toHaveLength(20)
    expect(entries.filter((entry) => entry.kind === 'top_up')).toHaveLength(2 + 25)
    expect(concurrentCharges.length + rejected.length).toBe(200)
    // 150 to start, 25 top-ups of 5 and 20 refunds of 3 arrived (none for a test letter); what was not charged is left.
    expect(await balance(db, account.id)).toBe(150 + 125 + 60 - 3 * concurrentCharges.length)
  })

  it('serializes debits across accounts without one blocking the other', async ({ database: db }) => {
    const first = await newAccount(db, { credits: 30 })
    const second = await newAccount(db, { credits: 30 })
    await Promise.allSettled(Array.from({ length: 40 }, (_, i) => db.transaction((tx) => adjust(tx, i % 2 ? first.id : second.id, -3))))
    expect(await balance(db, first.id)).toBe(0)
    expect(await balance(db, second.id)).toBe(0)
    await expectConsistentLedger(db, first.id)
    await expectConsistentLedger(db, second.id)
  })
})
