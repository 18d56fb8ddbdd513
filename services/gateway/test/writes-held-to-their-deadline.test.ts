// A write of the gateway's own (an upload's new version) is held to its request's deadline as
// the intake holds a creation: it begins only if the request still waits, a failure before its
// commit frees the deadline again, and a commit whose connection dropped is told as unknown,
// never as "nothing was done".
import { describe, expect } from 'vitest'
import { eq, sql } from 'drizzle-orm'
import { accounts } from '@letters/db'
import { OrderDeadline } from '@letters/intake'
import { it } from '@letters/test/support/fixtures'
import type { App } from '../src/app.js'
import { outcomeUnknownMessage, requestDeadlineMessage } from '../src/common/deadline-messages.js'
import { writeByDeadline } from '../src/common/deadline-writes.js'
import { OutcomeUnknown, Unavailable } from '../src/common/errors.js'

/** How many writes were committed: each adds a mark to the account's name (its money is not touched). */
const marksOf = async (app: App, accountId: string) =>
  (await app.db.select({ name: accounts.name }).from(accounts).where(eq(accounts.id, accountId)))[0]!.name.split('+').length - 1

/** A deadline still open: decided within a minute. */
const openDeadline = () => new OrderDeadline(Date.now() + 60_000, Date.now() + 61_000)

/** A write whose commit can be read back. */
const addOne = (accountId: string) => sql`update accounts set name = name || '+' where id = ${accountId}`

describe('writeByDeadline', () => {
  it('commits a write begun while its request waits, and leaves the deadline writing so it cannot be answered 503', async ({ gateway: app, account }) => {
    const before = await marksOf(app, account.id)
    const deadline = openDeadline()
    const result = await writeByDeadline(app.db, deadline, async (tx, begin) => {
      begin()
      await tx.execute(addOne(account.id))
      return 'stored'
    })
    expect(result).toBe('stored')
    expect(await marksOf(app, account.id)).toBe(before + 1)
    expect(deadline.writing).toBe(true)
    expect(deadline.abandon()).toBe(false)
  })

  it('refuses to begin once its request was given up on: a 503, and what the transaction did before is rolled back', async ({ gateway: app, account }) => {
    const before = await marksOf(app, account.id)
    const deadline = openDeadline()
    const written = writeByDeadline(app.db, deadline, async (tx, begin) => {
      // Done while the locks are taken; the request is given up on meanwhile.
      await tx.execute(addOne(account.id))
      deadline.abandon()
      begin()
      await tx.execute(addOne(account.id))
    })
    await expect(written).rejects.toSatisfy((error) => error instanceof Unavailable && error.message === requestDeadlineMessage)
    expect(await marksOf(app, account.id)).toBe(before)
  })

  it('refuses to begin past the time to decide, even before any timer gave the request up', async ({ gateway: app, account }) => {
    const before = await marksOf(app, account.id)
    const deadline = new OrderDeadline(Date.now() - 1, Date.now() + 1000)
    const written = writeByDeadline(app.db, deadline, async (tx, begin) => {
      begin()
      await tx.execute(addOne(account.id))
    })
    await expect(written).rejects.toBeInstanceOf(Unavailable)
    expect(deadline.abandoned).toBe(true)
    expect(await marksOf(app, account.id)).toBe(before)
  })

  it('frees the deadline again when the write fails before its commit, so the request can still be answered 503', async ({ gateway: app, account }) => {
    const before = await marksOf(app, account.id)
    const deadline = openDeadline()
    const failure = new Error('a check after the write refused it')
    const written = writeByDeadline(app.db, deadline, async (tx, begin) => {
      begin()
      await tx.execute(addOne(account.id))
      throw failure
    })
    await expect(written).rejects.toBe(failure)
    expect(deadline.writing).toBe(false)
    expect(deadline.abandon()).toBe(true)
    expect(await marksOf(app, account.id)).toBe(before)
  })

  it('tells a commit whose connection was terminated as an unknown outcome, and keeps the deadline writing', async ({ gateway: app, account }) => {
    const deadline = openDeadline()
    const written = writeByDeadline(app.db, deadline, async (tx, begin) => {
      begin()
      await tx.execute(addOne(account.id))
      const [backend] = await tx.execute<{ pid: number }>(sql`select pg_backend_pid() as pid`)
      // From another connection of the pool: the transaction's own is gone before it commits.
      await app.db.execute(sql`select pg_terminate_backend(${backend!.pid})`)
    })
    await expect(written).rejects.toSatisfy((error) => error instanceof OutcomeUnknown && error.message === outcomeUnknownMessage(false))
    expect(deadline.writing).toBe(true)
  })
})
