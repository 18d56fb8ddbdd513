/** The bodies of the letters' events (staging table ev) and GET /events' table, events. */
import { EVENT_RETENTION_DAYS } from '@letters/contracts'
import { type Fill, hid, iso } from './staging.js'

/**
 * The bodies of the status changes someone keeps (staging table ev: those of the last 30 days, and
 * those an endpoint subscribed to), each written once as buildLetterJson (packages/letters) writes it, or as the
 * erasure rewrote it for a letter erased since (through jsonb).
 */
export function eventBodies({ NOW }: Fill, where: (number: string) => string): string {
  const data = (build: string) => `${build}('id', l.id, 'code', l.code, 'livemode', l.livemode, 'type', l.type, 'status', v.status,
      'sendAt', ${iso('l.send_at')}, 'campaignId', l.campaign_id, 'cardDesignId', l.card_design_id, 'envelopeDesignId', l.envelope_design_id, 'senderId', l.sender_id,
      'signatureId', l.signature_id, 'fontName', l.font_name, 'inkColor', l.ink_color, 'message', l.message, 'recipient', l.recipient,
      'address', CASE WHEN v.checked THEN l.address END, 'addressLines', CASE WHEN v.checked THEN l.address_lines END, 'cost', l.cost,
      'tracking', CASE WHEN l.tracking_url IS NOT NULL THEN ${build}('url', l.tracking_url, 'scans', l.qr_scans,
        'firstScannedAt', ${iso('l.first_scanned_at')}, 'lastScannedAt', ${iso('l.last_scanned_at')}) END,
      'returnedAt', ${iso('l.returned_at')}, 'returnReason', l.return_reason,
      'createdAt', ${iso('l.created_at')}, 'updatedAt', ${iso('v.at')}, 'personalDataErasedAt', ${iso('l.personal_data_erased_at')})`
  const body = (build: string) =>
    `${build}('id', ${hid("'event'", 'h.n * 16 + v.k')}, 'type', 'letter.' || v.status, 'sequence', v.seq, 'occurredAt', ${iso('v.at')},
      'timestamp', ${iso("v.at + interval '3 milliseconds'")}, 'data', ${data(build)})::text`
  const cutoff = `${NOW} - interval '${EVENT_RETENTION_DAYS} days'`
  return `
    SELECT h.n * 16 + v.k AS key, ${hid("'event'", 'h.n * 16 + v.k')} AS id, h.a, h.livemode, h.id AS letter_id, 'letter.' || v.status AS type, v.seq, v.at,
      CASE WHEN l.personal_data_erased_at IS NULL THEN ${body('json_build_object')} ELSE ${body('jsonb_build_object')} END AS body
    FROM (
      SELECT h.*, ha.subscribed, (h.t_sched IS NOT NULL)::int AS o FROM hl h JOIN ha ON ha.a = h.a
      WHERE ((h.livemode AND cardinality(ha.subscribed) > 0) OR h.updated_at >= ${cutoff}) AND ${where('h.n')}
    ) h
    JOIN letters l ON l.id = h.id
    CROSS JOIN LATERAL (VALUES
      (0, 'scheduled', h.t_sched, 1, false),
      (1, 'cancelled', CASE WHEN h.t_recv IS NULL THEN h.t_cancel END, 2, false),
      (2, 'received', h.t_recv, h.o + 1, false),
      (3, 'address_rejected', h.t_rej, h.o + 2, true),
      (4, 'ready_for_print', h.t_rfp, h.o + 2, true),
      (5, 'cancelled', CASE WHEN h.t_recv IS NOT NULL THEN h.t_cancel END, h.o + 3, true),
      (6, 'printing', h.t_printing, h.o + 3, true),
      (11, 'failed', h.t_failed, h.o + 4, true),
      (12, 'printed', h.t_printed, h.o + 4, true),
      (13, 'mailed', h.t_mailed, h.o + 5, true)
    ) AS v(k, status, at, seq, checked)
    WHERE v.at IS NOT NULL AND (v.at >= ${cutoff} OR (h.livemode AND 'letter.' || v.status = ANY(h.subscribed)))`
}

/** What GET /events lists: the last 30 days of events; the older ones the retention deleted. */
export function events({ NOW }: Fill): string {
  return `
    INSERT INTO events (id, account_id, livemode, letter_id, type, sequence, occurred_at, body)
    SELECT e.id, ha.id, e.livemode, e.letter_id, e.type, e.seq, e.at, e.body FROM ev e JOIN ha ON ha.a = e.a
    WHERE e.at >= ${NOW} - interval '${EVENT_RETENTION_DAYS} days'`
}
