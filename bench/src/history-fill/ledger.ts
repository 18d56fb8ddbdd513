/** ledger_entries: each account's credits, charges and refunds, with the balance after each. */
import { ledgerReasons } from '@letters/contracts'
import { MONTHS } from './plan.js'
import { type Fill, secs, u } from './staging.js'

/** Credits: a top-up before each month an account sent letters in, a charge per live letter, a refund per live letter cancelled or rejected; split by account. */
export function ledger({ START, SPAN }: Fill, where: (number: string) => string): string {
  const month = `least(${MONTHS - 1}, floor(extract(epoch FROM h.c - ${START}) * ${MONTHS} / ${SPAN}))::int`
  return `
    INSERT INTO ledger_entries (account_id, kind, amount, balance_after, letter_id, reason, created_at)
    SELECT ha.id, m.kind, m.amount, sum(m.amount) OVER (PARTITION BY m.a ORDER BY m.at, m.ord, m.n ROWS UNBOUNDED PRECEDING)::int, m.letter_id, m.reason, m.at
    FROM (
      SELECT h.a, 'charge' AS kind, -r.cost AS amount, h.id AS letter_id, NULL::text AS reason, h.c AS at, 1 AS ord, h.n
      FROM hl h JOIN hr r ON r.k = h.k WHERE h.livemode
      UNION ALL
      SELECT h.a, 'refund', r.cost, h.id, CASE WHEN h.t_cancel IS NOT NULL THEN '${ledgerReasons.cancelledByClient}' ELSE '${ledgerReasons.addressRejected}' END, coalesce(h.t_cancel, h.t_rej), 1, h.n
      FROM hl h JOIN hr r ON r.k = h.k WHERE h.livemode AND (h.t_cancel IS NOT NULL OR h.t_rej IS NOT NULL)
      UNION ALL
      -- The month's credits bought an hour before it starts: what its letters cost and a fifth more, in hundreds.
      SELECT t.a, 'top_up', (ceil(t.cost * 1.2 / 100) * 100)::int, NULL, 'Compra de créditos',
        ${START} + ${secs(`t.month * ${SPAN} / ${MONTHS}`)} - interval '1 hour' - ${secs(`600 * ${u('t.a * 100 + t.month', 60)}`)}, 0, 0
      FROM (SELECT h.a, ${month} AS month, sum(r.cost) AS cost FROM hl h JOIN hr r ON r.k = h.k WHERE h.livemode GROUP BY 1, 2) t
      UNION ALL
      SELECT ha.a, 'adjustment', 250, NULL, 'Compensación por una incidencia de impresión', ${START} + ${secs(`${SPAN} / 2`)}, 2, 0
      FROM ha WHERE ha.a % 7 = 3
    ) m JOIN ha ON ha.a = m.a
    WHERE ${where('m.a')}
    ORDER BY m.at, m.ord, m.n`
}
