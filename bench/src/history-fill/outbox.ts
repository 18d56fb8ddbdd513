/** outbox: the jobs each letter's changes and each webhook delivery queued, all sent. */
import { outboxTargetSql } from '@letters/db'
import { type Fill, hid } from './staging.js'

/** The pipeline's jobs: an address check per letter received, a production job per letter ready for print, all dispatched. */
export function outboxJobs({ NOW }: Fill, where: (number: string) => string): string {
  return `
    INSERT INTO outbox (id, queue, job_name, payload, created_at, sent_at, attempts)
    SELECT ${hid('j.kind', 'h.n')}, j.queue, j.job_name, jsonb_build_object('letterId', h.id), j.at, least(j.at + interval '15 milliseconds', ${NOW}), 1
    FROM hl h CROSS JOIN LATERAL (VALUES ('job-address', ${outboxTargetSql('normalize-address')}, h.t_recv), ('job-production', ${outboxTargetSql('produce-letter')}, h.t_rfp))
      AS j(kind, queue, job_name, at)
    WHERE j.at IS NOT NULL AND ${where('h.n')}`
}

/** The webhook worker's admission queued a job per attempt, named after the lease it gave (deliver-webhook). */
export function webhookDeliveryJobs(where: (number: string) => string): string {
  return `
    INSERT INTO outbox (id, queue, job_name, payload, created_at, sent_at, attempts)
    SELECT ${hid("'lease:' || a.event_id", 'a.attempt')}, ${outboxTargetSql('deliver-webhook')}, jsonb_build_object('eventId', a.event_id),
      a.at - interval '40 milliseconds', a.at - interval '35 milliseconds', 1
    FROM webhook_attempts a
    WHERE ${where('a.id')}`
}
