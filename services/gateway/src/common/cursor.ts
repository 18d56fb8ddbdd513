import { sql, type SQL, type SQLWrapper } from 'drizzle-orm'
import { UUID_PATTERN } from '@letters/contracts'
import { badRequest } from './errors.js'

const CURSOR_POSITION = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/

/**
 * Keyset pages over (instant, id), the shape of every cursor of the API (GET /cards, the admin
 * lists): a page's cursor names its last row, and the next page starts past it.
 */
export type Positioned = {
  id: string
  /** The row's instant in UTC to the microsecond (a JS Date keeps only milliseconds), from `positionSql`. */
  position: string
}

/** The column `column` as a cursor position: text, UTC, to the microsecond. */
export const positionSql = (column: SQLWrapper): SQL => sql`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`

const encodeCursor = (row: Positioned) => Buffer.from(`${row.position}|${row.id}`).toString('base64url')

/** The position and id a cursor names; a cursor this API did not hand out is a 400. */
export function decodeCursor(cursor: string): Positioned {
  const [position, id, ...rest] = Buffer.from(cursor, 'base64url').toString('utf8').split('|')
  // The position must be a real instant Postgres can hold too: it fails on "9999-99-99" and on
  // year 0, which JavaScript takes for 1 BC.
  const instant = position && CURSOR_POSITION.test(position) ? new Date(`${position.slice(0, 23)}Z`) : undefined
  const real = instant && !Number.isNaN(instant.getTime()) && instant.getUTCFullYear() >= 1 && instant.toISOString().slice(0, 23) === position!.slice(0, 23)
  if (!position || !id || rest.length > 0 || !UUID_PATTERN.test(id) || !real) {
    throw badRequest("El parámetro 'cursor' no es válido: usa el 'nextCursor' de la página anterior")
  }
  return { position, id }
}

/** The page of rows read with `LIMIT limit + 1`, and the cursor of the next one (null on the last page). */
export function pageOf<Row extends Positioned>(rows: Row[], limit: number): { rows: Row[]; nextCursor: string | null } {
  const page = rows.slice(0, limit)
  const last = page.at(-1)
  return { rows: page, nextCursor: rows.length > limit && last ? encodeCursor(last) : null }
}
