import { sql, type SQL, type SQLWrapper } from 'drizzle-orm'
import { PgDialect } from 'drizzle-orm/pg-core'
import type { Tx } from '@letters/db'

/** The SQL of an instant as the API writes it: toISOString's format, UTC, milliseconds. */
export const isoInstant = (instant: SQLWrapper): SQL => sql`to_char(${instant} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

/** `alias.column`, both quoted as identifiers: a row a statement names, not one drizzle selects from. */
const columnOf = (alias: string) => (column: string) => sql`${sql.identifier(alias)}.${sql.identifier(column)}`

/**
 * What a letter event's `data` holds: the letter (`letter`), or for `letter.qr_scanned` the
 * letter and, at the top level beside its fields, its counted scans and their first and last
 * instants (`scans`).
 */
export type LetterEventData = 'letter' | 'scans'

/**
 * The letter of the `letters` row (or RETURNING row) named `alias`, as the API shows it without
 * its events: the one home of that shape, used by GET /cards, GET /cards/{id} and every
 * webhook body. Instants in toISOString's format (milliseconds cut as a JS Date cuts them);
 * `sendAt` and `personalDataErasedAt` are null when the letter was not scheduled, or not erased
 * (to_char of null is null); `tracking` is null without a tracking URL (CASE without ELSE).
 */
function buildLetterJson(alias: string, data: LetterEventData): SQL {
  const l = columnOf(alias)
  const scans =
    data === 'scans'
      ? sql`, 'scans', ${l('qr_scans')}, 'firstScannedAt', ${isoInstant(l('first_scanned_at'))}, 'lastScannedAt', ${isoInstant(l('last_scanned_at'))}`
      : sql``
  return sql`json_build_object('id', ${l('id')}, 'code', ${l('code')}, 'livemode', ${l('livemode')}, 'type', ${l('type')}, 'status', ${l('status')},
    'sendAt', ${isoInstant(l('send_at'))}, 'campaignId', ${l('campaign_id')},
    'cardDesignId', ${l('card_design_id')}, 'envelopeDesignId', ${l('envelope_design_id')}, 'senderId', ${l('sender_id')},
    'signatureId', ${l('signature_id')}, 'fontName', ${l('font_name')}, 'inkColor', ${l('ink_color')}, 'message', ${l('message')}, 'recipient', ${l('recipient')}, 'address', ${l('address')},
    'addressLines', ${l('address_lines')}, 'cost', ${l('cost')},
    'tracking', CASE WHEN ${l('tracking_url')} IS NOT NULL THEN json_build_object('url', ${l('tracking_url')}, 'scans', ${l('qr_scans')},
      'firstScannedAt', ${isoInstant(l('first_scanned_at'))}, 'lastScannedAt', ${isoInstant(l('last_scanned_at'))}) END,
    'returnedAt', ${isoInstant(l('returned_at'))}, 'returnReason', ${l('return_reason')},
    'createdAt', ${isoInstant(l('created_at'))}, 'updatedAt', ${isoInstant(l('updated_at'))},
    'personalDataErasedAt', ${isoInstant(l('personal_data_erased_at'))}${scans})`
}

const dialect = new PgDialect()

/**
 * The text of a fragment without parameters (identifiers and constants only): rendered once by
 * its caller and kept, since drizzle walks a fragment's tree on every query that holds it, and
 * the letter's shape, read by every page of GET /cards, is a large tree.
 */
function constantText(fragment: SQL): string {
  const { sql: text, params } = dialect.sqlToQuery(fragment)
  if (params.length > 0) throw new Error(`a fragment kept as text must hold no parameter: ${text}`)
  return text
}

const letterJsonByAlias = new Map<string, string>()

/** buildLetterJson for the row named `alias`: its text rendered once per alias and data, a fragment of its own for each caller. */
export function letterJsonSql(alias: string, data: LetterEventData = 'letter'): SQL {
  const key = `${data} ${alias}`
  let text = letterJsonByAlias.get(key)
  if (text === undefined) {
    text = constantText(buildLetterJson(alias, data))
    letterJsonByAlias.set(key, text)
  }
  return sql.raw(text)
}

/**
 * A body `{ type, timestamp, data }` that is no letter's event (`webhook.test`), as the text that
 * is signed and sent: fixed when written, so every retry sends the same bytes. `json`, not
 * `jsonb`, keeps the keys in this order.
 */
export function webhookBodySql(type: SQL, data: SQL): SQL {
  return sql`json_build_object('type', ${type}, 'timestamp', ${isoInstant(sql`clock_timestamp()`)}, 'data', ${data})::text`
}

/**
 * A letter event's body, `{ id, type, sequence, occurredAt, timestamp, data }`, as the text that
 * is signed and sent and that GET /events lists: fixed when the event is written, so the snapshot
 * is the letter at its change (deliveries may arrive in any order; each tells what the letter was
 * then, and its sequence where it stands) and every retry sends the same bytes. `event` names a
 * row with the event's id, type, sequence and instant (`at`); `letter` the letter's row; `data`
 * what the body's `data` holds of it.
 */
export function letterEventBodySql(event: string, letter: string, data: LetterEventData = 'letter'): SQL {
  const e = columnOf(event)
  return sql`json_build_object('id', ${e('id')}, 'type', ${e('type')}, 'sequence', ${e('sequence')}, 'occurredAt', ${isoInstant(e('at'))},
    'timestamp', ${isoInstant(sql`clock_timestamp()`)}, 'data', ${letterJsonSql(letter, data)})::text`
}

/**
 * The fan-out's tail, as CTEs a statement ends with its own SELECT: each event of `newEvents` (a
 * relation of id, letter_id, type, sequence and at) written once in `events` (what GET /events
 * lists, with or without endpoints), with its letter's row from `letters`, and copied for every
 * endpoint of the letter's account and mode subscribed to it, not disabled, into
 * `webhook_events`, where the webhook worker's admission finds it. The endpoints are locked FOR
 * KEY SHARE: one being deleted meanwhile (marked deleted and disabled under FOR UPDATE) is waited
 * for, read again and left out.
 *
 * `letters` is the letters table for letters that exist, or the RETURNING rows of the statement
 * that inserts or changes them (a statement does not see the rows its own CTEs write); `data`
 * what each body holds of its letter (letterEventBodySql).
 */
export function eventFanOutSql(newEvents: string, letters: string, data: LetterEventData = 'letter'): SQL {
  return sql`
    stored_events AS (
      INSERT INTO events (id, account_id, livemode, letter_id, type, sequence, occurred_at, body)
      SELECT ev.id, l.account_id, l.livemode, l.id, ev.type, ev.sequence, ev.at, ${letterEventBodySql('ev', 'l', data)}
      FROM ${sql.identifier(newEvents)} ev JOIN ${sql.identifier(letters)} l ON l.id = ev.letter_id
      RETURNING account_id, livemode, type, body
    ),
    subscribed AS (
      SELECT e.id, e.account_id, e.livemode, e.events FROM webhook_endpoints e
      WHERE e.account_id IN (SELECT account_id FROM stored_events) AND NOT e.disabled
      FOR KEY SHARE
    ),
    event_webhooks AS (
      INSERT INTO webhook_events (endpoint_id, type, body)
      SELECT e.id, s.type, s.body FROM stored_events s JOIN subscribed e ON e.account_id = s.account_id AND e.livemode = s.livemode AND s.type = ANY(e.events)
    )`
}

/**
 * CTEs `changes` and `latest`, for a statement to follow with its own: `latest` holds each
 * letter's latest letter_events row (letter_id, status, at) and its sequence, the letter's
 * changes of status counted in its letter_events, so that it holds however long ago the earlier
 * events were deleted; a row that repeats the status before it (a resumed letter, a failed print
 * attempt) is no change. `letterIds` is the SQL of a uuid[].
 */
export function latestStatusCtes(letterIds: SQL): SQL {
  return sql`
    changes AS (
      SELECT letter_id, id, status, at, status IS DISTINCT FROM lag(status) OVER (PARTITION BY letter_id ORDER BY id) AS changed
      FROM letter_events WHERE letter_id = ANY(${letterIds})
    ),
    latest AS (
      SELECT DISTINCT ON (letter_id) letter_id, status, at, sequence
      FROM (SELECT *, count(*) FILTER (WHERE changed) OVER (PARTITION BY letter_id ORDER BY id) AS sequence FROM changes) numbered
      ORDER BY letter_id, id DESC
    )`
}

/**
 * The fan-out of letter events, one statement: each letter's event, as its latest letter_events
 * row tells (the status it just reached, with its sequence: latestStatusCtes), through
 * eventFanOutSql. A row that repeats the status before it has no event. The ids go as one array
 * parameter, so the statement's text is the same for any number of letters.
 */
function letterEventsSql(letterIds: readonly string[]): SQL {
  // Raw SQL kept: window functions and INSERT … SELECT through data-modifying CTEs, in one statement.
  return sql`
    WITH ${latestStatusCtes(sql`${sql.param([...letterIds])}::uuid[]`)},
    -- Materialized: each event's id is drawn once, for its row and its body alike.
    new_events AS MATERIALIZED (
      SELECT gen_random_uuid() AS id, letter_id, 'letter.' || status AS type, sequence::int AS sequence, at FROM latest
    ),
    ${eventFanOutSql('new_events', 'letters')}
    SELECT count(*)::int AS events FROM stored_events`
}

/**
 * The first events of letters a statement inserts (the intake's write), as CTEs to follow the
 * statement's own: each letter's first letter_events row is its first event, sequence 1.
 * `firstRows` names the CTE that inserts those letter_events rows, `RETURNING letter_id, status,
 * at`; `letters` the one that inserts the letters, `RETURNING *` (the event's body is the letter
 * as the API shows it). Constant text, without parameters, so that a statement of postgres.js's
 * own (the intake's pipelined transaction) can hold it.
 */
export function firstLetterEventsCtes(firstRows: string, letters: string): string {
  return constantText(sql`
    first_letter_events AS MATERIALIZED (
      SELECT gen_random_uuid() AS id, letter_id, 'letter.' || status AS type, 1 AS sequence, at FROM ${sql.identifier(firstRows)}
    ),
    ${eventFanOutSql('first_letter_events', letters)}`)
}

/**
 * Writes the letters' events (letterEventsSql) in the transaction of their change: moveLetter
 * and moveLetters call it once the letters' rows and letter_events show the new status.
 */
export async function recordLetterEvents(tx: Tx, letterIds: readonly string[]): Promise<void> {
  if (letterIds.length === 0) return
  await tx.execute(letterEventsSql(letterIds))
}
