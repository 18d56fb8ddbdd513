import { sql, type SQL } from 'drizzle-orm'
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
 * A prefetch or a preview, one statement: recorded against the code's letter (its time and kind,
 * nothing of who asked), which changes nothing else and so locks nothing.
 */
function uncountedSql(code: string, kind: Exclude<QrScanKind, 'counted' | 'limited'>): SQL {
  return sql`
    WITH letter AS (SELECT id, tracking_url FROM letters WHERE tracking_code = ${code}),
    stored AS (INSERT INTO qr_scans (letter_id, kind) SELECT id, ${kind} FROM letter)
    SELECT tracking_url AS url FROM letter`
}

/**
 * A scan of the letter, whose row the transaction already holds (FOR NO KEY UPDATE), so the
 * scans of one code are taken one at a time and this statement, whose snapshot is taken after
 * the lock, sees every scan before it: counted, unless QR_SCANS_COUNTED_PER_MINUTE were counted
 * in the last minute (then `limited`, recorded and nothing else). A counted scan adds one to the
 * letter's count and dates, and then either rewrites the body of the letter's `letter.qr_scanned`
 * event whose window (QR_SCAN_EVENT_WINDOW_MS from its first scan) is still open, in `events`
 * alone (its webhook was sent at that first scan), or writes a new one through the fan-out of
 * status events, with the sequence of the status the letter is in. The letter's updated_at is
 * left alone: a scan is no change of status, and the erasure's retention runs from the last one.
 *
 * The recent counted scans are read through qr_scans_letter_idx from the minute's start, and at
 * most the limit of them: the first of a minute's scans are the counted ones, so a burst of
 * limited ones after them is not read again by every scan.
 */
function countedSql(letterId: string): SQL {
  // Raw SQL kept: the decision, the letter's count and its event are written through
  // data-modifying CTEs in one statement, the event's body by the fan-out's own helpers.
  return sql`
    WITH scan AS MATERIALIZED (
      SELECT statement_timestamp() AS at,
        CASE WHEN (SELECT count(*) FROM (
                    SELECT 1 FROM qr_scans
                    WHERE letter_id = ${letterId}::uuid AND at > statement_timestamp() - interval '1 minute' AND kind = 'counted'
                    ORDER BY at LIMIT ${QR_SCANS_COUNTED_PER_MINUTE}) recent) >= ${QR_SCANS_COUNTED_PER_MINUTE}
          THEN 'limited' ELSE 'counted' END AS kind
    ),
    stored AS (INSERT INTO qr_scans (letter_id, kind, at) SELECT ${letterId}::uuid, kind, at FROM scan),
    scanned AS (
      UPDATE letters SET qr_scans = letters.qr_scans + 1, first_scanned_at = coalesce(letters.first_scanned_at, scan.at), last_scanned_at = scan.at
      FROM scan WHERE letters.id = ${letterId}::uuid AND scan.kind = 'counted'
      RETURNING letters.*
    ),
    open_event AS MATERIALIZED (
      SELECT e.id, e.type, e.sequence, e.occurred_at AS at FROM events e
      WHERE e.letter_id = ${letterId}::uuid AND e.type = ${QR_SCANNED_EVENT}
        AND e.occurred_at > (SELECT at FROM scan) - ${QR_SCAN_EVENT_WINDOW_MS} * interval '1 millisecond'
      ORDER BY e.occurred_at DESC LIMIT 1
    ),
    rewritten AS (
      UPDATE events SET body = ${letterEventBodySql('o', 'l', 'scans')}
      FROM open_event o, scanned l WHERE events.id = o.id
    ),
    ${latestStatusCtes(sql`ARRAY[${letterId}]::uuid[]`)},
    -- Materialized: the event's id is drawn once, for its row and its body alike.
    new_events AS MATERIALIZED (
      SELECT gen_random_uuid() AS id, l.id AS letter_id, ${QR_SCANNED_EVENT}::text AS type, latest.sequence::int AS sequence, scan.at
      FROM scanned l JOIN latest ON latest.letter_id = l.id CROSS JOIN scan
      WHERE NOT EXISTS (SELECT 1 FROM open_event)
    ),
    ${eventFanOutSql('new_events', 'scanned', 'scans')}
    SELECT kind FROM scan`
}

/**
 * Records a request for the QR link `code` (already checked against QR_CODE_PATTERN) and returns
 * where to send it, or undefined when no letter has that code. A prefetch or preview is one
 * statement; a scan is one short transaction: the letter's row locked, then countedSql.
 */
export async function recordQrScan(db: Db, code: string, request: QrRequest): Promise<QrScan | undefined> {
  if (request !== 'scan') {
    const [letter] = await db.execute<{ url: string }>(uncountedSql(code, request))
    return letter && { url: letter.url, kind: request }
  }
  return db.transaction(async (tx) => {
    const [letter] = await tx.execute<{ id: string; url: string }>(
      sql`SELECT id, tracking_url AS url FROM letters WHERE tracking_code = ${code} FOR NO KEY UPDATE`,
    )
    if (!letter) return undefined
    const [scan] = await tx.execute<{ kind: QrScanKind }>(countedSql(letter.id))
    return { url: letter.url, kind: scan!.kind }
  })
}
