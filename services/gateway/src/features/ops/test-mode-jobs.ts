import { sql } from 'drizzle-orm'
import { UUID_PATTERN } from '@letters/contracts'
import type { Db } from '@letters/db'

/**
 * Which of these job subjects are test mode's: a letter made with a test key (the `letterId` of
 * an address or production job) or an event for a test endpoint (the `eventId` of a webhook
 * delivery). Jobs carry ids only, so Postgres tells; anything that is not a UUID (a job added
 * by hand on the dashboard) is nobody's.
 */
export async function testModeSubjects(db: Db, ids: string[]): Promise<Set<string>> {
  const uuids = [...new Set(ids.filter((id) => UUID_PATTERN.test(id)))]
  if (uuids.length === 0) return new Set()
  // Raw SQL kept: one round trip over two tables (UNION ALL), ids only.
  const rows = await db.execute<{ id: string }>(sql`
    SELECT id::text FROM letters WHERE id IN ${uuids} AND NOT livemode
    UNION ALL
    SELECT ev.id::text FROM webhook_events ev JOIN webhook_endpoints e ON e.id = ev.endpoint_id
    WHERE ev.id IN ${uuids} AND NOT e.livemode`)
  return new Set(rows.map((row) => row.id))
}
