import { sql, type SQL } from 'drizzle-orm'
import { PgDialect } from 'drizzle-orm/pg-core'
import { QR_SCANNED_EVENT, QR_SCAN_EVENT_WINDOW_MS, QR_SCANS_COUNTED_PER_MINUTE, type QrScanKind } from '@letters/contracts'
import type { Db } from '@letters/db'
import { eventFanOutSql, latestStatusCtes, letterEventBodySql } from './events.js'

/** What a request for a QR link looks like before it is counted: a scan, or a prefetch or link preview, which never count. */
export type QrRequest = 'scan' | 'prefetch' | 'preview'

/** A request for a letter's QR link, recorded: where it is sent, and what it was taken for. */
export interface QrScan {
  url: string
  kind: QrScanKind
}

/**
 * Commits the transaction that sets it without waiting for its WAL to reach the disk: a scan is
 * recorded for its counts, and a phone waits on its redirect, while a flush of the disk takes
 * milliseconds, more on a busy server. The transaction stays whole; what a crash of Postgres
 * (not of the gateway) may lose is the scans of its last fraction of a second, each with its
 * count and event, and a webhook of them already sent (wal_writer_delay). Set in a statement of
 * the transaction, so that it costs no round trip of its own.
 */
const commitWithoutFlush = sql`set_config('synchronous_commit', 'off', true)`

/** A constant of the statements below, written into their text: their one parameter is the code. */
const literal = (value: string | number) => sql.raw(typeof value === 'number' ? String(value) : `'${value.replace(/'/g, "''")}'`)

const dialect = new PgDialect()

/**
 * The text of a statement whose one parameter is the code (`$1`), rendered once: it is run as a
 * prepared statement on each connection (a scan's statement is long, and parsing it again for
 * every scan would cost more than running it).
 */
function textOf(statement: (code: SQL) => SQL): string {
  const { sql: text, params } = dialect.sqlToQuery(statement(sql`${'code'}`))
  if (params.length !== 1) throw new Error(`a QR link's statement takes the code alone: ${params.length} parameters`)
  return text
}

/**
 * A prefetch or a preview, one statement: recorded against the code's letter (its time and kind,
 * nothing of who asked), which changes nothing else, so it neither waits for a scan of the code
 * nor holds one up (its foreign key's KEY SHARE lock does not conflict with a scan's).
 */
const uncountedSql = (kind: Exclude<QrScanKind, 'counted' | 'limited'>) => (code: SQL) => sql`
  WITH letter AS (SELECT id, tracking_url FROM letters WHERE tracking_code = ${code}),
  stored AS (INSERT INTO qr_scans (letter_id, kind) SELECT id, ${literal(kind)} FROM letter)
  SELECT tracking_url AS url, ${commitWithoutFlush} FROM letter`

/**
 * A scan of the code's letter, one statement. The letter's row is locked (FOR NO KEY UPDATE), so
 * the scans of one code are taken one at a time, and every scan that counts changes that row. A
 * statement's snapshot is taken as it starts, before it waits for the lock: when the version it
 * locked is not the one its snapshot holds, another scan (or a change of status, an erasure)
 * changed the letter in between, what this statement read of its scans and events may be
 * stale, and it writes nothing: its `kind` comes back null, for recordQrScan to take the scan
 * again in a transaction that holds the row first. Otherwise nothing that counts has changed
 * since the snapshot, nor can before the end, and the statement decides: counted, unless
 * QR_SCANS_COUNTED_PER_MINUTE were counted in the last minute (then `limited`, recorded and
 * nothing else). A counted scan adds one to the letter's count and dates, and then either
 * rewrites the body of the letter's `letter.qr_scanned` event whose window
 * (QR_SCAN_EVENT_WINDOW_MS from its first scan) is still open, in `events` alone (its webhook was
 * sent at that first scan), or writes a new one through the fan-out of status events, with the
 * sequence of the status the letter is in. The letter's updated_at is left alone: a scan is no
 * change of status, and the erasure's retention runs from the last one.
 *
 * The recent counted scans are read through qr_scans_letter_idx from the minute's start, and at
 * most the limit of them: the first of a minute's scans are the counted ones, so a burst of
 * limited ones after them is not read again by every scan. No row: no letter has the code.
 */
function scanSql(code: SQL): SQL {
  // Raw SQL kept: the lock, the decision, the letter's count and its event are written through
  // data-modifying CTEs in one statement, the event's body by the fan-out's own helpers; every
  // write reads `scan`, so none happens before the row is locked, nor when it was stale.
  return sql`
    WITH locked AS MATERIALIZED (
      SELECT id, tracking_url, xmin AS version, ${commitWithoutFlush} FROM letters WHERE tracking_code = ${code} FOR NO KEY UPDATE
    ),
    scan AS MATERIALIZED (
      SELECT locked.id AS letter_id, statement_timestamp() AS at,
        CASE WHEN (SELECT count(*) FROM (
                    SELECT 1 FROM qr_scans q
                    WHERE q.letter_id = locked.id AND q.at > statement_timestamp() - interval '1 minute' AND q.kind = 'counted'
                    ORDER BY q.at LIMIT ${literal(QR_SCANS_COUNTED_PER_MINUTE)}) recent) >= ${literal(QR_SCANS_COUNTED_PER_MINUTE)}
          THEN 'limited' ELSE 'counted' END AS kind
      -- The row as the snapshot holds it, read without a lock: the version locked, or stale.
      FROM locked JOIN letters seen ON seen.id = locked.id AND seen.xmin = locked.version
    ),
    stored AS (INSERT INTO qr_scans (letter_id, kind, at) SELECT letter_id, kind, at FROM scan),
    scanned AS (
      UPDATE letters SET qr_scans = letters.qr_scans + 1, first_scanned_at = coalesce(letters.first_scanned_at, scan.at), last_scanned_at = scan.at
      FROM scan WHERE letters.id = scan.letter_id AND scan.kind = 'counted'
      RETURNING letters.*
    ),
    open_event AS MATERIALIZED (
      SELECT e.id, e.type, e.sequence, e.occurred_at AS at FROM scanned l JOIN events e ON e.letter_id = l.id
      WHERE e.type = ${literal(QR_SCANNED_EVENT)} AND e.occurred_at > l.last_scanned_at - ${literal(QR_SCAN_EVENT_WINDOW_MS)} * interval '1 millisecond'
      ORDER BY e.occurred_at DESC LIMIT 1
    ),
    rewritten AS (
      UPDATE events SET body = ${letterEventBodySql('o', 'l', 'scans')}
      FROM open_event o, scanned l WHERE events.id = o.id
    ),
    ${latestStatusCtes(sql`ARRAY(SELECT id FROM scanned)`)},
    -- Materialized: the event's id is drawn once, for its row and its body alike.
    new_events AS MATERIALIZED (
      SELECT gen_random_uuid() AS id, l.id AS letter_id, ${literal(QR_SCANNED_EVENT)}::text AS type, latest.sequence::int AS sequence, l.last_scanned_at AS at
      FROM scanned l JOIN latest ON latest.letter_id = l.id
      WHERE NOT EXISTS (SELECT 1 FROM open_event)
    ),
    ${eventFanOutSql('new_events', 'scanned', 'scans')}
    SELECT locked.tracking_url AS url, scan.kind FROM locked LEFT JOIN scan ON true`
}

const PREFETCH = textOf(uncountedSql('prefetch'))
const PREVIEW = textOf(uncountedSql('preview'))
const SCAN = textOf(scanSql)

/**
 * Records a request for the QR link `code` (already checked against QR_CODE_PATTERN) and returns
 * where to send it, or undefined when no letter has that code. A prefetch or preview is one
 * statement (uncountedSql); a scan is one statement too (scanSql), unless another scan of the
 * code changed its letter while it waited: then it is taken again in a transaction that locks
 * the row before the statement's snapshot is taken, where the version locked is always the one
 * seen. Each commits without waiting for the disk (commitWithoutFlush).
 */
export async function recordQrScan(db: Db, code: string, request: QrRequest): Promise<QrScan | undefined> {
  // Raw postgres.js kept: each statement's text is rendered once (textOf) and run as a prepared
  // statement, where drizzle would render the long scan statement again for every scan.
  if (request !== 'scan') {
    const [letter] = await db.$client.unsafe<Array<{ url: string }>>(request === 'prefetch' ? PREFETCH : PREVIEW, [code], { prepare: true })
    return letter && { url: letter.url, kind: request }
  }
  type Scanned = { url: string; kind: QrScanKind | null }
  const [scanned] = await db.$client.unsafe<Scanned[]>(SCAN, [code], { prepare: true })
  if (!scanned) return undefined
  if (scanned.kind !== null) return { url: scanned.url, kind: scanned.kind }
  return db.$client.begin(async (tx) => {
    await tx`SELECT 1 FROM letters WHERE tracking_code = ${code} FOR NO KEY UPDATE`
    const [again] = await tx.unsafe<Scanned[]>(SCAN, [code], { prepare: true })
    if (!again?.kind) throw new Error(`the scan of a letter whose row this transaction holds came back ${again ? 'stale' : 'without its letter'}`)
    return { url: again.url, kind: again.kind }
  })
}
