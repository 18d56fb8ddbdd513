/** webhook_events and webhook_attempts: each endpoint's deliveries, and the attempts each took. */
import { type Fill, STAGING, hid, u } from './staging.js'

/**
 * Each subscribed endpoint's copy of an event: delivered at the first attempt; or after one that
 * failed; or failed at each of the 8. A recent one (the last two days) was delivered at once: none
 * is still pending. Every draw is a hash of the copy's id (w), so its attempts agree with it.
 */
export function webhookEvents({ NOW }: Fill, where: (number: string) => string): string {
  return `
    INSERT INTO webhook_events (id, endpoint_id, type, body, state, attempts, created_at, finished_at)
    SELECT x.id, x.endpoint_id, x.type, x.body, CASE WHEN x.mode = 'failed' THEN 'failed' ELSE 'delivered' END, x.attempts, x.created_at,
      ${STAGING}.attempt_at(x.created_at, x.w, x.attempts) + ${STAGING}.attempt_ms(x.w, x.attempts, x.mode <> 'failed') * interval '1 millisecond'
    FROM (
      SELECT y.*, CASE y.mode WHEN 'failed' THEN 8 WHEN 'retried' THEN 2 ELSE 1 END AS attempts
      FROM (
        SELECT z.*, CASE WHEN z.created_at >= ${NOW} - interval '2 days' THEN 'ok' WHEN ${u('z.w', 1)} < z.fail_rate THEN 'failed'
                         WHEN ${u('z.w', 1)} < z.fail_rate + 0.015 THEN 'retried' ELSE 'ok' END AS mode
        FROM (
          SELECT s.*, hashtextextended(s.id::text, 0) AS w
          FROM (
            SELECT ${hid("'webhook-event'", 'e.key * 4 + p.e')} AS id, p.id AS endpoint_id, p.fail_rate, e.type, e.body, e.at + interval '2 milliseconds' AS created_at
            FROM ev e JOIN hep p ON p.a = e.a AND e.livemode AND e.type = ANY(p.events)
            WHERE ${where('e.key / 16')}
          ) s
          -- Computed once per row, not once per use.
          OFFSET 0
        ) z
      ) y
    ) x`
}

/** Every attempt of every delivery: the last of a delivered one a 2xx, the others a timeout, a refused connection or a 5xx. */
export function webhookAttempts(where: (number: string) => string): string {
  return `
    INSERT INTO webhook_attempts (event_id, endpoint_id, attempt, status_code, error, duration_ms, at, next_attempt_at, outcome)
    SELECT w.id, w.endpoint_id, i,
      CASE WHEN ok THEN CASE WHEN ${u('w.w', 400)} < 0.9 THEN 200 ELSE 204 END
           WHEN ${u('w.w', '300 + i')} >= 0.5 THEN (ARRAY[500, 502, 503])[1 + floor(3 * ${u('w.w', '500 + i')})::int] END,
      CASE WHEN ok THEN NULL WHEN ${u('w.w', '300 + i')} < 0.3 THEN 'timeout' WHEN ${u('w.w', '300 + i')} < 0.5 THEN 'connection' END,
      ${STAGING}.attempt_ms(w.w, i, ok), ${STAGING}.attempt_at(w.created_at, w.w, i),
      CASE WHEN i < w.attempts THEN ${STAGING}.attempt_at(w.created_at, w.w, i + 1) - interval '200 milliseconds' END,
      CASE WHEN ok THEN 'delivered' WHEN i < w.attempts THEN 'retrying' ELSE 'failed' END
    FROM (SELECT id, endpoint_id, attempts, state, created_at, hashtextextended(id::text, 0) AS w FROM webhook_events OFFSET 0) w
    CROSS JOIN LATERAL generate_series(1, w.attempts) AS i
    CROSS JOIN LATERAL (SELECT w.state = 'delivered' AND i = w.attempts AS ok) o
    WHERE ${where('w.w & 1023')}`
}
