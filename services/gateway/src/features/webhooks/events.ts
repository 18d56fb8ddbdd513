import { and, eq, sql } from 'drizzle-orm'
import type { EventListQuery, LetterEvent } from '@letters/contracts'
import { events, keysetPage, type Executor } from '@letters/db'
import type { KeyScope } from '../../common/caller.js'
import { decodeCursor, pageOf, positionSql, type Positioned } from '../../common/cursor.js'

/**
 * The key's events (its account's, of its mode), newest first, a page at a time: the bodies
 * its webhooks carry, kept EVENT_RETENTION_DAYS whether or not an endpoint received them. The
 * order (keysetPage's newest first) is served by events_account_idx and events_account_type_idx; a card's few events are read through events_letter_idx.
 */
export async function listEvents(ex: Executor, scope: KeyScope, query: EventListQuery): Promise<{ data: LetterEvent[]; nextCursor: string | null }> {
  const limit = query.limit ?? 20
  const keyset = keysetPage({ instant: events.occurredAt, id: events.id }, query.cursor ? decodeCursor(query.cursor) : undefined, 'newest first', limit)
  const rows = await ex
    .select({
      id: events.id,
      position: sql<Positioned['position']>`${positionSql(events.occurredAt)}`,
      // Parsed by Postgres: the stored text, keys in their order.
      body: sql<LetterEvent>`${events.body}::json`,
    })
    .from(events)
    .where(
      and(
        eq(events.accountId, scope.accountId),
        eq(events.livemode, scope.livemode),
        query.type ? eq(events.type, query.type) : undefined,
        query.cardId ? eq(events.letterId, query.cardId) : undefined,
        keyset.after,
      ),
    )
    .orderBy(keyset.orderBy)
    .limit(keyset.limit)
  const page = pageOf(rows, limit)
  return { data: page.rows.map((row) => row.body), nextCursor: page.nextCursor }
}
