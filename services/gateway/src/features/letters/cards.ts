import { and, eq, sql } from 'drizzle-orm'
import { alias } from 'drizzle-orm/pg-core'
import { UUID_PATTERN, letterStatuses, type admin, type publicApi } from '@letters/contracts'
import { keysetPage, letters, type Executor } from '@letters/db'
import { badRequest, notFound } from '../../common/errors.js'
import { parseDateTime, queryDateTime } from './send-at.js'
import type { KeyScope } from '../../common/caller.js'
import { decodeCursor, pageOf, positionSql, type Positioned } from '../../common/cursor.js'
import { letterJsonSql } from '@letters/letters'

export const cardNotFound = () => notFound('La carta no existe')

/** A card id that is not a UUID names no letter: 404, like any other unknown id. */
export function assertCardId(cardId: string): void {
  if (!UUID_PATTERN.test(cardId)) throw cardNotFound()
}

/**
 * The letter is built by Postgres (`letterJsonSql`, the one home of its shape, which webhook
 * bodies carry too), instants already in the API's format: faster than decoding each column and
 * formatting the dates again in the gateway, twenty times per page.
 */
const l = alias(letters, 'l')
const cardColumns = {
  /** The letter as the API shows it, events aside. */
  card: sql<publicApi.CardSummary>`${letterJsonSql('l')}`,
  id: l.id,
  position: sql<Positioned['position']>`${positionSql(l.createdAt)}`,
}

type CardEvent = publicApi.Card['events'][number]

/**
 * A letter with its history, and the account it belongs to. `'any'`: ops, who see every
 * account's letters of both modes; a key's scope: another account's letter, or a letter of the
 * other mode, does not exist.
 */
async function readCard(ex: Executor, scope: KeyScope | 'any', cardId: string): Promise<{ accountId: string; card: publicApi.Card }> {
  assertCardId(cardId)
  const [row] = await ex
    .select({
      ...cardColumns,
      accountId: l.accountId,
      // Built by Postgres too, one round trip for the letter and its history. `l.id` spelt out:
      // drizzle writes a column of the only table unqualified, which inside this subquery would be e.id.
      events: sql<CardEvent[]>`COALESCE((SELECT json_agg(json_build_object('status', e.status, 'at', e.at, 'detail', e.detail) ORDER BY e.id)
                FROM letter_events e WHERE e.letter_id = l.id), '[]')`,
    })
    .from(l)
    .where(and(eq(l.id, cardId), scope === 'any' ? undefined : and(eq(l.accountId, scope.accountId), eq(l.livemode, scope.livemode))))
  if (!row) throw cardNotFound()
  return { accountId: row.accountId, card: { ...row.card, events: row.events.map((event) => ({ ...event, at: new Date(event.at).toISOString() })) } }
}

/** One letter of the key's account and mode with its history. */
export async function getCard(ex: Executor, scope: KeyScope, cardId: string): Promise<publicApi.Card> {
  return (await readCard(ex, scope, cardId)).card
}

/** For ops: any letter, of any account and either mode, with its history and its account. */
export async function getAnyCard(ex: Executor, cardId: string): Promise<admin.Card> {
  const { accountId, card } = await readCard(ex, 'any', cardId)
  return { accountId, ...card }
}

/** A `from` or `to` of GET /cards as an instant; a 400 naming the parameter when it is none. */
function createdBound(name: 'from' | 'to', value: string | undefined): Date | undefined {
  if (value === undefined) return undefined
  const instant = parseDateTime(queryDateTime(value)!)
  if (!instant) throw badRequest(`El parámetro '${name}' debe ser una fecha y hora ISO 8601 con zona horaria; '${value}' no lo es`)
  return instant
}

/** `search` as an ILIKE pattern that finds it anywhere, its own % _ and \ taken as themselves. */
const containing = (text: string) => `%${text.replace(/[\\%_]/g, (character) => `\\${character}`)}%`

/** Whose letters a list reads: a key's (its account and mode), or for ops any account's, of either mode unless told. */
interface ListScope {
  accountId?: string | undefined
  livemode?: boolean | undefined
}

/**
 * The query of a page of the letters of `scope` that `query` filters (one row more than the page, to
 * tell whether another follows), newest first, each with its account. keysetPage spells the order
 * NULLS LAST, like letters_account_mode_created_idx and letters_created_idx: a bare DESC means
 * NULLS FIRST, which those indexes cannot serve, and Postgres would then read and sort every
 * letter in reach for each page.
 */
export function listPageQuery(ex: Executor, scope: ListScope, query: publicApi.CardListQuery) {
  const limit = query.limit ?? 20
  const keyset = keysetPage({ instant: l.createdAt, id: l.id }, query.cursor ? decodeCursor(query.cursor) : undefined, 'newest first', limit)
  const from = createdBound('from', query.from)
  const to = createdBound('to', query.to)
  const pattern = query.search === undefined ? undefined : containing(query.search)
  return ex
    .select({ ...cardColumns, accountId: l.accountId })
    .from(l)
    .where(
      and(
        scope.accountId === undefined ? undefined : eq(l.accountId, scope.accountId),
        scope.livemode === undefined ? undefined : eq(l.livemode, scope.livemode),
        query.status ? eq(l.status, query.status) : undefined,
        query.campaignId ? eq(l.campaignId, query.campaignId) : undefined,
        from ? sql`${l.createdAt} >= ${from.toISOString()}::timestamptz` : undefined,
        to ? sql`${l.createdAt} < ${to.toISOString()}::timestamptz` : undefined,
        pattern === undefined
          ? undefined
          : sql`(${l.recipient}->>'name' ILIKE ${pattern} OR ${l.recipient}->>'surname' ILIKE ${pattern} OR ${l.recipient}->>'city' ILIKE ${pattern})`,
        keyset.after,
      ),
    )
    .orderBy(keyset.orderBy)
    .limit(keyset.limit)
}

async function listPage(ex: Executor, scope: ListScope, query: publicApi.CardListQuery) {
  return pageOf(await listPageQuery(ex, scope, query), query.limit ?? 20)
}

/** The key's letters (its account's, of its mode), newest first, a page at a time. */
export async function listCards(ex: Executor, scope: KeyScope, query: publicApi.CardListQuery) {
  const page = await listPage(ex, scope, query)
  return { data: page.rows.map((row) => row.card), nextCursor: page.nextCursor }
}

/** For ops: the letters of every account and both modes, or of the account and mode asked, with their account. */
export async function listAnyCards(ex: Executor, query: admin.CardListQuery): Promise<admin.CardList> {
  const { accountId, mode, ...filters } = query
  // One account's letters of both modes: each mode read in order through
  // letters_account_mode_created_idx, then merged. One query over both would sort every letter
  // of the account for each page.
  const modes = accountId !== undefined && mode === undefined ? [true, false] : [mode === undefined ? undefined : mode === 'live']
  const reads = await Promise.all(modes.map((livemode) => listPageQuery(ex, { accountId, livemode }, filters)))
  const limit = filters.limit ?? 20
  const page = pageOf(
    reads
      .flat()
      .sort(newestFirst)
      .slice(0, limit + 1),
    limit,
  )
  return { data: page.rows.map((row) => ({ accountId: row.accountId, ...row.card })), nextCursor: page.nextCursor }
}

/** The lists' order, newest first and then by id, as their SQL sorts them: a position is UTC text of one fixed width. */
function newestFirst(a: Positioned, b: Positioned): number {
  if (a.position !== b.position) return a.position < b.position ? 1 : -1
  return a.id === b.id ? 0 : a.id < b.id ? 1 : -1
}

/** How far back GET /cards/stats counts unless told. */
const STATS_DEFAULT_SPAN_MS = 30 * 86_400_000

/** The letters created in [from, to) (the last 30 days by default), counted by status; every status is listed. */
export async function cardStats(ex: Executor, scope: KeyScope, query: publicApi.CardStatsQuery): Promise<publicApi.CardStats> {
  const to = createdBound('to', query.to) ?? new Date()
  const from = createdBound('from', query.from) ?? new Date(to.getTime() - STATS_DEFAULT_SPAN_MS)
  if (from > to) throw badRequest(`El parámetro 'from' (${from.toISOString()}) debe ser anterior a 'to' (${to.toISOString()})`)
  const rows = await ex
    .select({ status: l.status, count: sql<number>`count(*)::int` })
    .from(l)
    .where(
      and(
        eq(l.accountId, scope.accountId),
        eq(l.livemode, scope.livemode),
        sql`${l.createdAt} >= ${from.toISOString()}::timestamptz`,
        sql`${l.createdAt} < ${to.toISOString()}::timestamptz`,
      ),
    )
    .groupBy(l.status)
  const byStatus = Object.fromEntries(letterStatuses.map((status) => [status, 0])) as publicApi.CardStats['byStatus']
  for (const row of rows) byStatus[row.status] = row.count
  return { from: from.toISOString(), to: to.toISOString(), total: rows.reduce((sum, row) => sum + row.count, 0), byStatus }
}
