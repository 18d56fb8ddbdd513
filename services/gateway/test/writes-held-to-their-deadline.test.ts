// A write of the gateway's own (an upload's new version) is held to its request's deadline as
// the intake holds a creation: it begins only if the request still waits, a failure before its
// commit frees the deadline again, and a commit whose connection dropped is told as unknown,
// never as "nothing was done".
import { describe, expect } from 'vitest'
import { eq, sql } from 'drizzle-orm'
import { accounts } from '@letters/db'
import { OrderDeadline } from '@letters/intake'
import { it } from '@letters/test/support/fixtures'
import { until } from '@letters/test/support/wait'
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

  it('tells a commit whose connection was cut while it committed as an unknown outcome, and keeps the deadline writing', async ({ gateway: app }) => {
    // A commit that lasts two seconds (a deferred trigger sleeps in it), so that its connection can
    // be cut while the COMMIT itself runs, after the work is done.
    await app.db.execute(sql`CREATE TABLE IF NOT EXISTS slow_commits (id int)`)
    await app.db.execute(sql`CREATE OR REPLACE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(2); RETURN NULL; END $$`)
    await app.db.execute(sql`DROP TRIGGER IF EXISTS slow_commit ON slow_commits`)
    await app.db.execute(
      sql`CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON slow_commits DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit()`,
    )
    const deadline = openDeadline()
    let backend = 0
    const written = writeByDeadline(app.db, deadline, async (tx, begin) => {
      begin()
      await tx.execute(sql`INSERT INTO slow_commits VALUES (1)`)
      backend = (await tx.execute<{ pid: number }>(sql`SELECT pg_backend_pid() AS pid`))[0]!.pid
    })
    const committing = async () =>
      (
        await app.db.execute<{ n: number }>(
          sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ${backend} AND state = 'active' AND lower(query) = 'commit'`,
        )
      )[0]!.n === 1
    await until('the write to be committing', committing, { everyMs: 20 })
    await app.db.execute(sql`SELECT pg_terminate_backend(${backend})`)
    await expect(written).rejects.toSatisfy((error) => error instanceof OutcomeUnknown && error.message === outcomeUnknownMessage(false))
    expect(deadline.writing).toBe(true)
    // The cut came first: this commit did not happen, but the gateway could not know it.
    expect((await app.db.execute<{ n: number }>(sql`SELECT count(*)::int AS n FROM slow_commits`))[0]!.n).toBe(0)
  })
})
