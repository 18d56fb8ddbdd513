/** Every letter's timeline (staging table hl), and the print batches it went through (hb, hbb): what the tables of letters are written from. */
import {
  BATCHED_SHARE,
  BATCH_MAX_LETTERS,
  CAMPAIGN_SHARE,
  CANCELLED_SHARE,
  FAILED_SHARE,
  PERSONAL_DATA_RETENTION_DAYS,
  REPRINTED_SHARE,
  SCHEDULED_SHARE,
  TEST_SHARE,
  TINY_CAMPAIGNS,
} from './plan.js'
import { type Fill, Lanes, hid, secs, u } from './staging.js'

/**
 * Every letter's life, as instants (staging table hl): when it was made, scheduled, checked,
 * cancelled or rejected, claimed by the floor, batched, printed, mailed and erased, and so its
 * status now. Planned first (hl0), then batched (hb, hbb), then cut at now: a stage still to come
 * has no instant.
 */
export async function letterTimelines(lanes: Lanes, f: Fill): Promise<void> {
  const { plans, N, B, POOL, NOW, START, SPAN } = f
  // The other accounts share the letters the big one does not hold, by a Zipf-like law (weights
  // 1/(i+4), i from 1): at 200 accounts the largest of them holds about half the big one's, the smallest about 1/40 of that.
  const weights = plans.slice(1).map((_, index) => 1 / (index + 5))
  const total = weights.reduce((sum, weight) => sum + weight, 0)
  const thresholds: number[] = []
  let cumulative = 0
  for (const weight of weights) {
    thresholds.push(cumulative / total)
    cumulative += weight
  }
  const big = plans[0]!
  const tiny = TINY_CAMPAIGNS.map((campaign, index) => {
    const first = Math.max(1, Math.floor(B * campaign.at))
    return `WHEN j >= ${first} AND j < ${first + campaign.letters} THEN ${big.campaigns + index + 1}`
  }).join(' ')
  const planned = (where: (number: string) => string) => `
    WITH b AS (
      SELECT n, (n * ${B}) / ${N} - ((n - 1) * ${B}) / ${N} = 1 AS big, (n * ${B}) / ${N} AS j,
        ${START} + ${secs(`(n - 1 + ${u('n', 3)}) * ${SPAN} / ${N}`)} AS c,
        ${u('n', 4)} >= ${TEST_SHARE} AS livemode, ${u('n', 5)} < ${SCHEDULED_SHARE} AS scheduled, ${u('n', 9)} AS outcome,
        1 + floor(${POOL} * ${u('n', 8)})::int AS k
      FROM generate_series(1::bigint, ${N}::bigint) AS n
      WHERE ${where('n')}
    ),
    owned AS (
      SELECT b.*, CASE WHEN big THEN 1 ELSE 1 + width_bucket(${u('n', 2)}, '{${thresholds.join(',')}}'::float8[]) END AS a,
        CASE WHEN big THEN CASE ${tiny} END END AS tiny
      FROM b
    ),
    made AS (
      SELECT x.*, r.kind = 'undeliverable' AS bad,
        CASE WHEN tiny IS NOT NULL THEN tiny
             WHEN ${u('n', 7)} < ${CAMPAIGN_SHARE} THEN 1 + floor(ha.campaigns * ${u('n', 11)} ^ 2)::int
             ELSE 1001 + floor(ha.singles * ${u('n', 11)})::int END AS choice,
        CASE WHEN scheduled THEN c + ${secs(`3600 + 14 * 86400 * ${u('n', 6)}`)} END AS send_at
      FROM owned x JOIN ha ON ha.a = x.a JOIN hr r ON r.k = x.k
    ),
    checked AS (
      -- The address check takes seconds; one in fifty waits minutes for the verifier's retries.
      SELECT made.*, coalesce(send_at, c) + ${secs(`CASE WHEN ${u('n', 19)} < 0.02 THEN 60 + 1740 * ${u('n', 13)} ELSE 3 + 57 * ${u('n', 13)} END`)} AS t_check,
        outcome < ${CANCELLED_SHARE} AS cancel,
        livemode AND outcome >= ${CANCELLED_SHARE} AND outcome < ${CANCELLED_SHARE + FAILED_SHARE} AS fail,
        livemode AND outcome >= ${CANCELLED_SHARE + FAILED_SHARE} AND outcome < ${CANCELLED_SHARE + FAILED_SHARE + REPRINTED_SHARE} AS reprint
      FROM made
    ),
    planned AS (
      SELECT checked.*,
        -- One by one: the floor claims it minutes to hours later (a test letter at once).
        t_check + ${secs(`CASE WHEN livemode THEN 60 + 14400 * ${u('n', 14)} ^ 2 ELSE 2 + 20 * ${u('n', 14)} END`)} AS t_single,
        -- In a batch: the floor's morning run (08:00 UTC) after it was checked claims it.
        date_trunc('day', t_check - interval '8 hours') + interval '32 hours' AS run
      FROM checked
    )
    SELECT n, ${hid("'letter'", 'n')} AS id, a, choice, k, livemode, c, send_at, fail, reprint, run, batched,
      CASE WHEN scheduled THEN c END AS t_sched,
      CASE WHEN cancel AND scheduled THEN c + (send_at - c) * ${u('n', 12)}
           WHEN cancel AND NOT bad THEN t_check + (t_single - t_check) * ${u('n', 12)} END AS t_cancel,
      CASE WHEN NOT (cancel AND scheduled) THEN coalesce(send_at, c) END AS t_recv,
      CASE WHEN bad AND NOT (cancel AND scheduled) THEN t_check END AS t_rej,
      CASE WHEN NOT bad AND NOT (cancel AND scheduled) THEN t_check END AS t_rfp,
      CASE WHEN NOT cancel AND NOT bad THEN CASE WHEN batched THEN run + ${secs(`1200 * ${u('n', 14)}`)} ELSE t_single END END AS t_printing
    FROM (
      SELECT planned.*, livemode AND ${u('n', 10)} < ${BATCHED_SHARE} AND NOT cancel AND NOT bad AND NOT fail AND NOT reprint
        AND run + interval '1 hour' <= ${NOW} AS batched
      FROM planned
    ) x`
  await lanes.run({ label: 'letter timelines (table)', sql: `CREATE UNLOGGED TABLE hl0 AS ${planned(() => 'false')}`, counted: false })
  await lanes.all(lanes.split('letter timelines (planned)', (where) => `INSERT INTO hl0 ${planned(where)}`))
  // Batches: a morning run's letters of one pair of stocks, in the order the floor claimed them, 100 at most each.
  await lanes.run([
    { label: 'letter timelines (analyzed)', sql: 'ANALYZE hl0', counted: false },
    {
      label: 'print batches (planned)',
      sql: [
        `CREATE UNLOGGED TABLE hb AS
        SELECT n, dense_rank() OVER (ORDER BY run, card_stock, envelope_stock, (rn - 1) / ${BATCH_MAX_LETTERS}) AS b,
          ((rn - 1) % ${BATCH_MAX_LETTERS} + 1)::int AS seq, t_printing, card_stock, envelope_stock
        FROM (
          SELECT h.n, h.run, h.t_printing, c.card_stock, c.envelope_stock,
            row_number() OVER (PARTITION BY h.run, c.card_stock, c.envelope_stock ORDER BY h.t_printing, h.n) AS rn
          FROM hl0 h JOIN hc c ON c.a = h.a AND c.choice = h.choice
          WHERE h.batched
        ) x`,
        'ANALYZE hb',
      ],
    },
    {
      label: 'print batches (closed)',
      sql: [
        `CREATE UNLOGGED TABLE hbb AS
        SELECT b, count(*)::int AS cnt, min(t_printing) + interval '5 seconds' AS opened_at, max(t_printing) + interval '7 seconds' AS closed_at,
          max(t_printing) + ${secs(`27 + 40 * ${u('b', 51)}`)} AS handed_at, min(card_stock) AS card_stock, min(envelope_stock) AS envelope_stock
        FROM hb GROUP BY b`,
        'ANALYZE hbb',
      ],
    },
  ])
  const cut = (column: string) => `CASE WHEN ${column} <= ${NOW} THEN ${column} END AS ${column}`
  const stages = [
    't_sched',
    't_cancel',
    't_recv',
    't_rej',
    't_rfp',
    't_printing',
    't_f1',
    't_f2',
    't_f3',
    't_f4',
    't_failed',
    't_reclaim',
    't_printed',
    't_mailed',
  ]
  const final = (where: (number: string) => string) => `
    SELECT y.*, CASE WHEN y.status IN ('printed', 'mailed', 'cancelled', 'address_rejected', 'failed') AND y.erase_at <= ${NOW} THEN y.erase_at END AS erased_at
    FROM (
      SELECT x.*,
        CASE WHEN t_mailed IS NOT NULL THEN 'mailed' WHEN t_printed IS NOT NULL THEN 'printed' WHEN t_failed IS NOT NULL THEN 'failed'
             WHEN t_cancel IS NOT NULL THEN 'cancelled' WHEN t_rej IS NOT NULL THEN 'address_rejected' WHEN t_printing IS NOT NULL THEN 'printing'
             WHEN t_rfp IS NOT NULL THEN 'ready_for_print' WHEN t_recv IS NOT NULL THEN 'received' ELSE 'scheduled' END AS status,
        greatest(${stages.join(', ')}) AS updated_at,
        greatest(${stages.join(', ')}) + interval '${PERSONAL_DATA_RETENTION_DAYS} days' + ${secs(`60 + 900 * ${u('n', 17)}`)} AS erase_at,
        (t_printing IS NOT NULL)::int + (t_reclaim IS NOT NULL)::int + (t_f2 IS NOT NULL)::int + (t_f4 IS NOT NULL)::int AS print_claim
      FROM (
        SELECT n, id, a, choice, k, livemode, c, send_at, b, seq, cnt, ${stages.map(cut).join(', ')}
        FROM (
          SELECT q.*, q.t_printed + ${secs(`CASE WHEN q.livemode THEN 72000 + 172800 * ${u('q.n', 16)} ELSE 60 + 5 * ${u('q.n', 16)} END`)} AS t_mailed
          FROM (
            SELECT h.*, hb.b, hb.seq, hbb.cnt,
              h.t_printing + CASE WHEN h.reprint THEN interval '10 minutes' END AS t_reclaim,
              h.t_printing + CASE WHEN h.fail THEN interval '30 seconds' END AS t_f1,
              h.t_printing + CASE WHEN h.fail THEN interval '60 seconds' END AS t_f2,
              h.t_printing + CASE WHEN h.fail THEN interval '120 seconds' END AS t_f3,
              h.t_printing + CASE WHEN h.fail THEN interval '180 seconds' END AS t_f4,
              h.t_printing + CASE WHEN h.fail THEN interval '240 seconds' END AS t_failed,
              CASE WHEN hb.b IS NOT NULL THEN hbb.handed_at + interval '1 second'
                   WHEN NOT h.fail THEN h.t_printing + CASE WHEN h.reprint THEN interval '10 minutes' ELSE interval '0 seconds' END
                     -- Rendered and handed over in a minute; one in ten waits minutes for a busy printer.
                     + ${secs(`CASE WHEN NOT h.livemode THEN 3 + 6 * ${u('h.n', 15)} WHEN ${u('h.n', 20)} < 0.1 THEN 120 + 1080 * ${u('h.n', 15)}
                                    ELSE 15 + 60 * ${u('h.n', 15)} END`)} END AS t_printed
            FROM hl0 h LEFT JOIN hb ON hb.n = h.n LEFT JOIN hbb ON hbb.b = hb.b
            WHERE ${where('h.n')}
          ) q
        ) p
      ) x
    ) y`
  await lanes.run({ label: 'letter timelines (final table)', sql: `CREATE UNLOGGED TABLE hl AS ${final(() => 'false')}`, counted: false })
  await lanes.all(lanes.split('letter timelines', (where) => `INSERT INTO hl ${final(where)}`))
  await lanes.run({ label: 'letter timelines (analyzed)', sql: 'ANALYZE hl', counted: false })
}
