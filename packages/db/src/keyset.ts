import { sql, type SQL, type SQLWrapper } from 'drizzle-orm'

/** A row a page ends at, as its cursor names it: its instant (text Postgres reads as a timestamptz) and its id. */
export interface KeysetPosition {
  position: string
  id: string
}

/**
 * Which way a list reads. Newest first is spelt DESC NULLS LAST, like every index declared with
 * `.desc()` (drizzle writes those DESC NULLS LAST): a bare DESC means NULLS FIRST, which those
 * indexes cannot serve, and Postgres would then read and sort every row in reach for each page.
 * The columns are NOT NULL, so the spelling changes nothing else. Oldest first is the bare
 * ascending order of an ascending index.
 */
export type KeysetOrder = 'newest first' | 'oldest first'

/** The condition "past the cursor" (undefined on the first page) and the order that goes with it. */
export interface Keyset {
  after: SQL | undefined
  orderBy: SQL
}

type Key = { instant: SQLWrapper; id: SQLWrapper } | { id: SQLWrapper }

/**
 * A keyset read over `key`, past `after`: (instant, id) for the lists whose cursor names a row by
 * its instant and id, or id alone for a list ordered by a serial id.
 */
export function keyset(key: { instant: SQLWrapper; id: SQLWrapper }, after: KeysetPosition | undefined, order: KeysetOrder): Keyset
export function keyset(key: { id: SQLWrapper }, after: { id: number } | undefined, order: KeysetOrder): Keyset
export function keyset(key: Key, after: KeysetPosition | { id: number } | undefined, order: KeysetOrder): Keyset {
  return keysetOf(key, after, order)
}

function keysetOf(key: Key, after: KeysetPosition | { id: number } | undefined, order: KeysetOrder): Keyset {
  const past = order === 'newest first' ? sql`<` : sql`>`
  const direction = order === 'newest first' ? sql` DESC NULLS LAST` : sql``
  if ('instant' in key) {
    const position = after as KeysetPosition | undefined
    return {
      after: position && sql`(${key.instant}, ${key.id}) ${past} (${position.position}::timestamptz, ${position.id}::uuid)`,
      orderBy: sql`${key.instant}${direction}, ${key.id}${direction}`,
    }
  }
  return { after: after && sql`${key.id} ${past} ${after.id}`, orderBy: sql`${key.id}${direction}` }
}

/** A page of `limit` rows read keyset-wise: the condition and order of `keyset`, and one row more than the page, to tell whether another follows. */
export function keysetPage(
  key: { instant: SQLWrapper; id: SQLWrapper },
  after: KeysetPosition | undefined,
  order: KeysetOrder,
  limit: number,
): Keyset & { limit: number }
export function keysetPage(key: { id: SQLWrapper }, after: { id: number } | undefined, order: KeysetOrder, limit: number): Keyset & { limit: number }
export function keysetPage(key: Key, after: KeysetPosition | { id: number } | undefined, order: KeysetOrder, limit: number): Keyset & { limit: number } {
  return { ...keysetOf(key, after, order), limit: limit + 1 }
}
