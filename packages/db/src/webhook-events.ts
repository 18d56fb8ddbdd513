import { sql } from 'drizzle-orm'
import type { Tx } from './client.js'
import { letterEventType, type LetterStatus } from '@letters/contracts'
import { outboxTargetSql } from './outbox.js'

/** The SQL of an instant as the API writes it: toISOString's format, UTC, milliseconds. */
export const isoInstant = (expression: string) => `to_char(${expression} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

/**
 * The letter of the `letters` row (or RETURNING row) named `alias`, as the API shows it without
 * its events: the one home of that shape, used by GET /cards, GET /cards/{id} and every
 * webhook body. Instants in toISOString's format (milliseconds cut as a JS Date cuts them);
 * `sendAt` is null when the letter was not scheduled (to_char of null is null).
 */
export function letterJsonSql(alias: string): string {
  const l = alias
  return `json_build_object('id', ${l}.id, 'code', ${l}.code, 'livemode', ${l}.livemode, 'type', ${l}.type, 'status', ${l}.status,
    'sendAt', ${isoInstant(`${l}.send_at`)}, 'campaignId', ${l}.campaign_id,
    'cardDesignId', ${l}.card_design_id, 'envelopeDesignId', ${l}.envelope_design_id, 'senderId', ${l}.sender_id,
    'signatureId', ${l}.signature_id, 'fontName', ${l}.font_name, 'message', ${l}.message, 'recipient', ${l}.recipient, 'address', ${l}.address,
    'addressLines', ${l}.address_lines, 'cost', ${l}.cost,
    'createdAt', ${isoInstant(`${l}.created_at`)}, 'updatedAt', ${isoInstant(`${l}.updated_at`)})`
}

/**
 * A webhook's body, `{ type, timestamp, data }`, as the text that is signed and sent: fixed
 * when the event is written, so the snapshot is the letter at its change (deliveries may arrive
 * in any order; each tells what the letter was then) and every retry sends the same bytes.
 * `json`, not `jsonb`, keeps the keys in this order.
 */
export function webhookBodySql(typeExpression: string, dataExpression: string): string {
  return `json_build_object('type', ${typeExpression}, 'timestamp', ${isoInstant('clock_timestamp()')}, 'data', ${dataExpression})::text`
}

/**
 * Writes each letter's event for every endpoint of its account and mode subscribed to it (not
 * disabled), and their delivery jobs in the outbox (the job id is the event id), in the
 * transaction of the change. Called by moveLetter and moveLetters once the letters' rows show
 * the new status.
 */
export async function recordLetterWebhooks(tx: Tx, letterIds: readonly string[], status: LetterStatus): Promise<void> {
  if (letterIds.length === 0) return
  const type = letterEventType(status)
  // Raw SQL kept: INSERT … SELECT through data-modifying CTEs (the events, then their outbox rows) in one statement.
  // The endpoints are locked FOR KEY SHARE: one being deleted meanwhile is waited for and then
  // left out, instead of failing this insert (and the status change with it) on its foreign key.
  await tx.execute(sql`
    WITH subscribed AS (
      SELECT e.id AS endpoint_id, l.id AS letter_id FROM webhook_endpoints e
      JOIN letters l ON l.account_id = e.account_id AND l.livemode = e.livemode
      WHERE l.id IN ${letterIds} AND NOT e.disabled AND ${type}::text = ANY(e.events)
      FOR KEY SHARE OF e
    ),
    events AS (
      INSERT INTO webhook_events (endpoint_id, type, body)
      SELECT s.endpoint_id, t.type, ${sql.raw(webhookBodySql('t.type', letterJsonSql('l')))}
      FROM subscribed s CROSS JOIN (SELECT ${type}::text AS type) t JOIN letters l ON l.id = s.letter_id
      RETURNING id
    )
    INSERT INTO outbox (id, queue, job_name, payload)
    SELECT id, ${sql.raw(outboxTargetSql('deliver-webhook'))}, jsonb_build_object('eventId', id) FROM events`)
}
