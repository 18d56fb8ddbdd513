import { sql } from 'drizzle-orm'
import type { publicApi } from '@letters/contracts'
import { letterJsonSql, type Executor } from '@letters/db'
import { badRequest, notFound } from '../errors.js'
import type { KeyScope } from '../plugins/app/api-key-auth.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export const cardNotFound = () => notFound('La carta no existe')

/** A card id that is not a UUID names no letter: 404, like any other unknown id. */
export function assertCardId(cardId: string): void {
  if (!UUID.test(cardId)) throw cardNotFound()
}

type CardRow = {
  /** The letter as the API shows it, events aside. */
  card: publicApi.CardSummary
  id: string
  /** `created_at` in UTC to the microsecond (a JS Date keeps only milliseconds), for the next page's cursor. */
  position: string
}

/**
 * The letter is built by Postgres (`letterJsonSql`, the one home of its shape, which webhook
 * bodies carry too), instants already in the API's format: faster than decoding each column and
 * formatting the dates again in the gateway, twenty times per page.
 */
const cardColumns = sql`${sql.raw(letterJsonSql('l'))} AS card, l.id,
  to_char(l.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS position`

/** One letter of the key's account and mode with its history; another account's letter, or a letter of the other mode, does not exist. */
export async function getCard(ex: Executor, scope: KeyScope, cardId: string): Promise<publicApi.Card> {
  assertCardId(cardId)
  const [row] = await ex.execute<CardRow & { events: Array<{ status: publicApi.Card['status']; at: string; detail: string | null }> }>(sql`
    SELECT ${cardColumns},
      COALESCE((SELECT json_agg(json_build_object('status', e.status, 'at', e.at, 'detail', e.detail) ORDER BY e.id)
                FROM letter_events e WHERE e.letter_id = l.id), '[]') AS events
    FROM letters l WHERE l.id = ${cardId}::uuid AND l.account_id = ${scope.accountId}::uuid AND l.livemode = ${scope.livemode}`)
  if (!row) throw cardNotFound()
  return { ...row.card, events: row.events.map((event) => ({ ...event, at: new Date(event.at).toISOString() })) }
}

const CURSOR_POSITION = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/

const encodeCursor = (row: CardRow) => Buffer.from(`${row.position}|${row.id}`).toString('base64url')

function decodeCursor(cursor: string): { position: string; id: string } {
  const [position, id, ...rest] = Buffer.from(cursor, 'base64url').toString('utf8').split('|')
  // The position must be a real instant Postgres can hold too: it fails on "9999-99-99" and on
  // year 0, which JavaScript takes for 1 BC.
  const instant = position && CURSOR_POSITION.test(position) ? new Date(`${position.slice(0, 23)}Z`) : undefined
  const real = instant && !Number.isNaN(instant.getTime()) && instant.getUTCFullYear() >= 1 && instant.toISOString().slice(0, 23) === position!.slice(0, 23)
  if (!position || !id || rest.length > 0 || !UUID.test(id) || !real) {
    throw badRequest("El parámetro 'cursor' no es válido: usa el 'nextCursor' de la página anterior")
  }
  return { position, id }
}

/**
 * The key's letters (its account's, of its mode), newest first, a page at a time. The order is
 * spelt NULLS LAST, like letters_account_mode_created_idx (both columns are NOT NULL, so it changes nothing else): a bare
 * DESC means NULLS FIRST, which that index cannot serve, and Postgres would then read and sort
 * every letter of the account for each page.
 */
export async function listCards(ex: Executor, scope: KeyScope, query: publicApi.CardListQuery) {
  const limit = query.limit ?? 20
  const after = query.cursor ? decodeCursor(query.cursor) : undefined
  const rows = await ex.execute<CardRow>(sql`
    SELECT ${cardColumns} FROM letters l
    WHERE l.account_id = ${scope.accountId}::uuid AND l.livemode = ${scope.livemode}
      ${query.status ? sql`AND l.status = ${query.status}` : sql``}
      ${query.campaignId ? sql`AND l.campaign_id = ${query.campaignId}::uuid` : sql``}
      ${after ? sql`AND (l.created_at, l.id) < (${after.position}::timestamptz, ${after.id}::uuid)` : sql``}
    ORDER BY l.created_at DESC NULLS LAST, l.id DESC NULLS LAST
    LIMIT ${limit + 1}`)
  const page = rows.slice(0, limit)
  const last = page.at(-1)
  return { data: page.map((row) => row.card), nextCursor: rows.length > limit && last ? encodeCursor(last) : null }
}
