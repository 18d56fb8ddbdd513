import { randomUUID } from 'node:crypto'
import { describe, expect } from 'vitest'
import { eq } from 'drizzle-orm'
import postgres from 'postgres'
import { closeDb, createDb, printBatches } from '@letters/db'
import { it } from '@letters/test/support/fixtures'
import { releaseCloserLease } from '../src/batch-closer.js'

describe('a closer’s lease on its batch', () => {
  it('is released on a new connection when the connection under its release is cut, not left for its term', async ({ databaseUrl }) => {
    const applicationName = `lease-release-${randomUUID().slice(0, 8)}`
    const db = createDb(`${databaseUrl}?application_name=${applicationName}`, { max: 1 })
    const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} })
    try {
      const leaseId = randomUUID()
      const [batch] = await db
        .insert(printBatches)
        .values({ status: 'closing', cardStock: `lease-${leaseId}`, closerLeaseId: leaseId, closerLeaseUntil: new Date(Date.now() + 150_000) })
        .returning({ id: printBatches.id })
      // The batch's row held by another transaction: the release waits on it, its connection open.
      const { release } = await admin.begin(async (tx) => {
        await tx`SELECT 1 FROM print_batches WHERE id = ${batch!.id} FOR UPDATE`
        // Looked at once before the release starts, as a slow start on a busy machine makes it.
        await tx`SELECT count(*) FROM pg_stat_activity`
        const release = releaseCloserLease(db, batch!.id, { id: leaseId })
        let cut = 0
        for (const giveUpAt = Date.now() + 20_000; cut === 0 && Date.now() < giveUpAt;) {
          // A transaction reads the activity as it first saw it unless told to look again: a
          // release that starts waiting after the first look would never be seen.
          await tx`SELECT pg_stat_clear_snapshot()`
          const [row] = await tx<Array<{ n: number }>>`
            SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
            WHERE application_name = ${applicationName} AND wait_event_type = 'Lock' AND query LIKE 'update "print_batches"%'`
          cut = row!.n
          if (cut === 0) await new Promise((resolve) => setTimeout(resolve, 20))
        }
        expect(cut, 'the release was cut while it waited').toBe(1)
        // Wrapped: the transaction commits (letting the row go) without waiting for the release.
        return { release }
      })
      expect(await release).toBe(true)
      const [row] = await db
        .select({ leaseId: printBatches.closerLeaseId, until: printBatches.closerLeaseUntil })
        .from(printBatches)
        .where(eq(printBatches.id, batch!.id))
      expect(row).toEqual({ leaseId: null, until: null })
    } finally {
      await admin.end()
      await closeDb(db)
    }
    // The file's own database is copied from the run's template within the time of its first
    // test, this one: with four other suites starting beside it, that copy outlasted the default 30 s.
  }, 60_000)
})
