import { sql } from 'drizzle-orm'
import type { Db } from '@letters/db'

/**
 * Holds an account's row as a slow concurrent charge would (an admin's adjustment, another
 * replica's batch), on a connection of the test's own, so that creations for it wait. Resolves
 * once the row is held, with the release (safe to call more than once).
 */
export async function holdAccountRow(db: Db, accountId: string): Promise<() => Promise<void>> {
  let release!: () => void
  let locked!: () => void
  const taken = new Promise<void>((resolve) => (locked = resolve))
  const released = new Promise<void>((resolve) => (release = resolve))
  const holder = db.transaction(async (tx) => {
    await tx.execute(sql`SELECT 1 FROM accounts WHERE id = ${accountId}::uuid FOR NO KEY UPDATE`)
    locked()
    await released
  })
  await taken
  return async () => {
    release()
    await holder
  }
}
