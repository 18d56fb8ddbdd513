import { sql, type SQL } from 'drizzle-orm'
import { PgDialect } from 'drizzle-orm/pg-core'
import { QR_SCANNED_EVENT, QR_SCAN_EVENT_WINDOW_MS, QR_SCANS_COUNTED_PER_MINUTE, type QrScanKind } from '@letters/contracts'
import type { Db } from '@letters/db'
import { eventFanOutSql, latestStatusCtes, letterEventBodySql } from './events.js'

/** What a request for a QR link looks like before it is counted: a scan, or a prefetch or link preview, which never count. */
export type QrRequest = 'scan' | 'prefetch' | 'preview'

/**
 * Commits the transaction that sets it without waiting for its WAL to reach the disk: a scan is
 * recorded for its counts, and a phone waits on its redirect, while a flush of the disk takes
 * milliseconds, more on a busy server. The transaction stays whole; what a crash of Postgres
 * (not of the gateway) may lose is the scans of its last fraction of a second, each with its
 * count and event, and a webhook of them already sent (wal_writer_delay). Set in a statement of
 * the transaction, so that it costs no round trip of its own.
 */
const commitWithoutFlush = sql`set_config('synchronous_commit', 'off', true)`

/** A constant of the statements below, written into their text rather than sent as a parameter. */
const literal = (value: string | number) => sql.raw(typeof value === 'number' ? String(value) : `'${value.replace(/'/g, "''")}'`)

const dialect = new PgDialect()

/**
 * The text of a statement whose parameters are `arity` values (`$1`…), rendered once: it is run
 * as a prepared statement on each connection (a batch's statement is long, and parsing it again
 * for every batch would cost more than running it).
 */
function textOf(statement: (...values: SQL[]) => SQL, arity = statement.length): string {
  const values = Array.from({ length: arity }, (_, i) => sql`${`value${i}`}`)
  const { sql: text, params } = dialect.sqlToQuery(statement(...values))
  if (params.length !== arity) throw new Error(`a QR link's statement takes ${arity} parameters, not ${params.length}`)
  return text
}

/**
 * Locks the letters of a batch's codes, in the order of their ids (so that two batches of
 * several gateways never wait on each other in a circle), and lets the transaction commit
 * without waiting for the disk (commitWithoutFlush). Taken before the batch's statement, whose
 * snapshot, taken after, then sees each locked letter as it is: its counts and its open event.
 */
const lockSql = (codes: SQL) => sql`
  SELECT id, ${commitWithoutFlush} FROM letters WHERE tracking_code = ANY(${codes}::text[]) ORDER BY id FOR NO KEY UPDATE`

/**
 * A batch of requests for QR links, one statement: `codes`, `requests` and `ats` are arrays of
 * one entry per request, in the order they came (a code no letter has, or has any longer, is left
 * out). Prefetches and previews are recorded (time and kind, nothing of who asked) and change
 * nothing else. A letter's scans are decided in their order: counted while fewer than
 * QR_SCANS_COUNTED_PER_MINUTE were counted in the minute before the batch's first scan of it
 * (read through qr_scans_letter_idx, at most the limit of them), `limited` after that. A
 * letter's counted scans add to its count and dates, and then either rewrite the body of its
 * `letter.qr_scanned` event whose window (QR_SCAN_EVENT_WINDOW_MS from that event's first scan)
 * is still open, in `events` alone (its webhook was sent at that first scan), or write a new one
 * through the fan-out of status events, with the sequence of the status the letter is in. The
 * letter's updated_at is left alone: a scan is no change of status, and the erasure's retention
 * runs from the last one. Returns each request's number (from 1) with its kind.
 */
function batchSql(codes: SQL, requests: SQL, ats: SQL): SQL {
  // Raw SQL kept: the decision, the scans, the letters' counts and their events are written
  // through data-modifying CTEs in one statement, the events' bodies by the fan-out's own helpers.
  return sql`
    WITH input AS MATERIALIZED (
      SELECT i.n, l.id AS letter_id, i.request, i.at::timestamptz AS at
      FROM unnest(${codes}::text[], ${requests}::text[], ${ats}::text[]) WITH ORDINALITY AS i(code, request, at, n)
      JOIN letters l ON l.tracking_code = i.code
    ),
    asked AS MATERIALIZED (
      SELECT n, letter_id, at, row_number() OVER (PARTITION BY letter_id ORDER BY n) AS turn FROM input WHERE request = 'scan'
    ),
    recent AS MATERIALIZED (
      SELECT a.letter_id, (SELECT count(*) FROM (
          SELECT 1 FROM qr_scans q
          WHERE q.letter_id = a.letter_id AND q.at > a.at - interval '1 minute' AND q.kind = 'counted'
          ORDER BY q.at LIMIT ${literal(QR_SCANS_COUNTED_PER_MINUTE)}) counted) AS counted
      FROM asked a WHERE a.turn = 1
    ),
    decided AS MATERIALIZED (
      SELECT a.n, a.letter_id, a.at,
        CASE WHEN r.counted + a.turn <= ${literal(QR_SCANS_COUNTED_PER_MINUTE)} THEN 'counted' ELSE 'limited' END AS kind
      FROM asked a JOIN recent r ON r.letter_id = a.letter_id
      UNION ALL
      SELECT n, letter_id, at, request FROM input WHERE request <> 'scan'
    ),
    stored AS (INSERT INTO qr_scans (letter_id, kind, at) SELECT letter_id, kind, at FROM decided),
    tally AS MATERIALIZED (
      SELECT letter_id, count(*)::int AS scans, min(at) AS first_at, max(at) AS last_at FROM decided WHERE kind = 'counted' GROUP BY letter_id
    ),
    scanned AS (
      UPDATE letters SET qr_scans = letters.qr_scans + t.scans, first_scanned_at = coalesce(letters.first_scanned_at, t.first_at),
        last_scanned_at = greatest(letters.last_scanned_at, t.last_at)
      FROM tally t WHERE letters.id = t.letter_id
      RETURNING letters.*
    ),
    open_event AS MATERIALIZED (
      SELECT DISTINCT ON (t.letter_id) e.id, e.type, e.sequence, e.occurred_at AS at, t.letter_id
      FROM tally t JOIN events e ON e.letter_id = t.letter_id
      WHERE e.type = ${literal(QR_SCANNED_EVENT)} AND e.occurred_at > t.first_at - ${literal(QR_SCAN_EVENT_WINDOW_MS)} * interval '1 millisecond'
      ORDER BY t.letter_id, e.occurred_at DESC
    ),
    rewritten AS (
      UPDATE events SET body = ${letterEventBodySql('o', 'l', 'scans')}
      FROM open_event o JOIN scanned l ON l.id = o.letter_id WHERE events.id = o.id
    ),
    ${latestStatusCtes(sql`ARRAY(SELECT letter_id FROM tally WHERE letter_id NOT IN (SELECT letter_id FROM open_event))`)},
    -- Materialized: each event's id is drawn once, for its row and its body alike.
    new_events AS MATERIALIZED (
      SELECT gen_random_uuid() AS id, t.letter_id, ${literal(QR_SCANNED_EVENT)}::text AS type, latest.sequence::int AS sequence, t.first_at AS at
      FROM tally t JOIN latest ON latest.letter_id = t.letter_id
      WHERE NOT EXISTS (SELECT 1 FROM open_event o WHERE o.letter_id = t.letter_id)
    ),
    ${eventFanOutSql('new_events', 'scanned', 'scans')}
    SELECT n::int AS n, kind FROM decided`
}

/** The letter a QR link's code leads to: its tracking URL. */
const targetSql = (code: SQL) => sql`SELECT tracking_url AS url FROM letters WHERE tracking_code = ${code}`

const TARGET = textOf(targetSql)
const LOCK = textOf(lockSql)
const BATCH = textOf(batchSql)

/** Where the QR link `code` (already checked against QR_CODE_PATTERN) sends its visitor; undefined when no letter has the code. */
export async function qrLinkTarget(db: Db, code: string): Promise<string | undefined> {
  // Raw postgres.js kept: the statement is prepared once per connection, as the scans' are.
  const [letter] = await db.$client.unsafe<Array<{ url: string }>>(TARGET, [code], { prepare: true })
  return letter?.url
}

/** A request for a QR link, to record: its code, what it was taken for, and when it came. */
export interface QrRequestRecord {
  code: string
  request: QrRequest
  at: Date
}

/**
 * Records a batch of requests for QR links in one short transaction (lockSql, then batchSql),
 * committed without waiting for the disk. Returns each request's kind, in their order, or
 * undefined for one whose code no letter has any longer (a letter the history's retention
 * deleted since its link was looked up).
 */
export async function recordQrRequests(db: Db, batch: readonly QrRequestRecord[]): Promise<Array<QrScanKind | undefined>> {
  if (batch.length === 0) return []
  const codes = batch.map((entry) => entry.code)
  const rows = await db.$client.begin(async (tx) => {
    await tx.unsafe(LOCK, [[...new Set(codes)]], { prepare: true })
    return tx.unsafe<Array<{ n: number; kind: QrScanKind }>>(
      BATCH,
      [codes, batch.map((entry) => entry.request), batch.map((entry) => entry.at.toISOString())],
      { prepare: true },
    )
  })
  const kinds: Array<QrScanKind | undefined> = batch.map(() => undefined)
  for (const row of rows) kinds[row.n - 1] = row.kind
  return kinds
}
