import { sql } from 'drizzle-orm'
import type { Executor } from '@letters/db'

type Entry = { id: string; name: string }

/** The four lists of GET /company-data in one round trip. */
export async function companyData(ex: Executor, accountId: string) {
  // Raw SQL kept: a UNION ALL of four tables in one round trip, ordered as one list; drizzle's unionAll would need the kinds and the ORDER BY as raw SQL anyway.
  const rows = await ex.execute<{ kind: string; id: string; name: string }>(sql`
    SELECT * FROM (
      SELECT 'cardDesigns' AS kind, id, name, created_at FROM card_designs WHERE account_id = ${accountId}::uuid
      UNION ALL SELECT 'envelopeDesigns', id, name, created_at FROM envelope_designs WHERE account_id = ${accountId}::uuid
      UNION ALL SELECT 'senders', id, name, created_at FROM senders WHERE account_id = ${accountId}::uuid
      UNION ALL SELECT 'signatures', id, name, created_at FROM signatures WHERE account_id = ${accountId}::uuid
    ) entries ORDER BY created_at, id`)
  const data: Record<'cardDesigns' | 'envelopeDesigns' | 'senders' | 'signatures', Entry[]> = {
    cardDesigns: [],
    envelopeDesigns: [],
    senders: [],
    signatures: [],
  }
  for (const { kind, id, name } of rows) data[kind as keyof typeof data].push({ id, name })
  return { data }
}
