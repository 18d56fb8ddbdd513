/**
 * An 18-month history for a benchmark database: accounts, their designs and campaigns, letters at
 * every stage of their lives, and everything the pipeline writes beside them (letter_events, the
 * ledger, the outbox, print handoffs and batches, webhook deliveries, GET /events, Idempotency-Keys),
 * as the service itself would have left them. Written with set-based SQL only (INSERT … SELECT over
 * generate_series), so that a million letters take minutes, not hours.
 *
 * Deterministic: every choice is a hash of a row's number (`history_fill.u`), and every id an md5
 * of its kind and number (`history_fill.hid`), so two fills of the same size have the same shape;
 * only the dates move with the clock. The database must be empty and fully migrated. The big
 * statements are split in two, one part on each of two connections: a 2-core machine uses both.
 *
 * This module runs the fill; plan.ts plans it, staging.ts holds its schema and its connections, and
 * each other module writes its tables.
 */
import type postgres from 'postgres'
import { accountsAndDesigns } from './accounts.js'
import { eventBodies, events } from './events.js'
import { idempotencyKeys } from './idempotency.js'
import { ledger } from './ledger.js'
import { letterEvents, letters } from './letters.js'
import { outboxJobs, webhookDeliveryJobs } from './outbox.js'
import { type AccountPlan, type HistoryShape, MONTHS, RECIPIENT_POOL, historyShape, planAccounts } from './plan.js'
import { printBatches, printHandoffs } from './printing.js'
import { recipientPool } from './recipients.js'
import { type Fill, Lanes, STAGING, type Task, stagingSchema } from './staging.js'
import { letterTimelines } from './timelines.js'
import { webhookAttempts, webhookEvents } from './webhooks.js'

export { historyShape, type HistoryShape } from './plan.js'

/**
 * Fills the empty, migrated database of `sql` with `letters` letters' 18 months of history, and
 * ANALYZEs it. Uses two of the pool's connections when it may (one otherwise). `progress` hears of
 * each table as it is written. Returns the shape it made.
 */
export async function fillHistory(sql: postgres.Sql, letters: number, progress: (text: string) => void): Promise<HistoryShape> {
  const shape = historyShape(letters)
  const plans = planAccounts(letters)
  const connections = [await sql.reserve()]
  try {
    if (sql.options.max >= 2) connections.push(await sql.reserve())
    const [existing] = await connections[0]!<Array<{ accounts: number; letters: number }>>`
      SELECT (SELECT count(*) FROM accounts)::int AS accounts, (SELECT count(*) FROM letters)::int AS letters`
    if (!existing || existing.accounts > 0 || existing.letters > 0) throw new Error('fillHistory needs an empty database: it has accounts or letters already')
    const [clock] = await connections[0]!<Array<{ now: string; span: number }>>`
      SELECT to_char(date_trunc('second', now()) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS+00') AS now,
        extract(epoch FROM date_trunc('second', now()) - (date_trunc('second', now()) - make_interval(months => ${MONTHS})))::float8 AS span`
    await fill(new Lanes(connections, progress), plans, shape, clock!.now, clock!.span)
  } finally {
    await connections[0]!.unsafe(`DROP SCHEMA IF EXISTS ${STAGING} CASCADE`).catch(() => {})
    for (const connection of connections) {
      await connection.unsafe('RESET ALL').catch(() => {})
      connection.release()
    }
  }
  return shape
}

async function fill(lanes: Lanes, plans: AccountPlan[], shape: HistoryShape, now: string, span: number): Promise<void> {
  const NOW = `'${now}'::timestamptz`
  const f: Fill = {
    plans,
    N: shape.letters,
    B: shape.bigAccountLetters,
    POOL: Math.min(shape.letters, RECIPIENT_POOL),
    NOW,
    START: `(${NOW} - interval '${MONTHS} months')`,
    SPAN: span,
  }

  await lanes.everywhere(
    `SET TimeZone = 'UTC'; SET work_mem = '512MB'; SET synchronous_commit = off; SET jit = off; SET max_parallel_workers_per_gather = 0; SET search_path = ${STAGING}, public`,
  )
  // Every row is made to hold (each id is one the fill made, of a row it wrote): the foreign keys'
  // per-row checks are skipped where the role may (a superuser's session_replication_role), and
  // each key is checked over its whole table at the end instead (foreignKeyChecks). Elsewhere the
  // steps' order keeps each row's parents written before it.
  const unchecked = await lanes
    .everywhere('SET session_replication_role = replica')
    .then(() => true)
    .catch(() => false)
  // Gigabytes of index pages, each written whole after every checkpoint: compressed where the role may.
  await lanes.everywhere('SET wal_compression = on').catch(() => {})
  await lanes.run({ label: 'staging schema', sql: stagingSchema(), counted: false })

  await lanes.all([accountsAndDesigns(f), recipientPool(f)])
  await letterTimelines(lanes, f)
  await lanes.all(lanes.split('letters', (where) => letters(where)))
  await lanes.run({ label: 'letter events (table)', sql: `CREATE UNLOGGED TABLE ev AS ${eventBodies(f, () => 'false')}`, counted: false })
  await lanes.all([
    ...lanes.split('letter events (bodies)', (where) => `INSERT INTO ev ${eventBodies(f, where)}`),
    ...lanes.split('letter_events', (where) => letterEvents(where)),
    ...lanes.split('outbox (letters)', (where) => outboxJobs(f, where)),
    ...lanes.split('ledger_entries', (where) => ledger(f, where)),
    [{ label: 'print_handoffs', sql: printHandoffs() }],
    printBatches(),
    [{ label: 'idempotency_keys', sql: idempotencyKeys(f) }],
  ])
  await lanes.run([
    { label: 'letter events (analyzed)', sql: 'ANALYZE ev', counted: false },
    // The ids were given explicitly (each letter's in the order of its changes): the sequence goes on after them.
    {
      label: 'letter_events (sequence)',
      sql: `SELECT setval(pg_get_serial_sequence('letter_events', 'id'), (SELECT max(id) FROM letter_events))`,
      counted: false,
    },
  ])
  await lanes.all([
    ...lanes.split('webhook_events', (where) => webhookEvents(f, where)),
    [{ label: 'events', sql: events(f) }],
    [
      {
        label: 'accounts (balances)',
        sql: `UPDATE accounts a SET balance = l.total FROM (SELECT account_id, sum(amount)::int AS total FROM ledger_entries GROUP BY 1) l WHERE l.account_id = a.id`,
      },
    ],
  ])
  await lanes.all(lanes.split('webhook_attempts', (where) => webhookAttempts(where)))
  await lanes.all(lanes.split('outbox (webhook deliveries)', (where) => webhookDeliveryJobs(where)))
  if (unchecked) await lanes.all(await foreignKeyChecks(lanes), 'foreign keys checked')
  // The largest first: the two connections share them out.
  const tables = await lanes.query<{ name: string }>(
    `SELECT quote_ident(relname) AS name FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind = 'r' ORDER BY pg_relation_size(oid) DESC`,
  )
  await lanes.all(
    tables.map((table) => [{ label: `ANALYZE ${table.name}`, sql: `ANALYZE public.${table.name}`, counted: false }]),
    'ANALYZE (tables)',
  )
}

/** Every foreign key of the schema, checked over its whole table at once: the rows written without the per-row checks must all hold. */
async function foreignKeyChecks(lanes: Lanes): Promise<Task[]> {
  const keys = await lanes.query<{ name: string; child: string; column: string; parent: string; key: string }>(`
    SELECT c.conname AS name, quote_ident(r.relname) AS child, quote_ident(a.attname) AS column, quote_ident(pr.relname) AS parent, quote_ident(f.attname) AS key
    FROM pg_constraint c
    JOIN pg_class r ON r.oid = c.conrelid
    JOIN pg_class pr ON pr.oid = c.confrelid
    JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
    JOIN pg_attribute f ON f.attrelid = c.confrelid AND f.attnum = c.confkey[1]
    WHERE c.contype = 'f' AND c.connamespace = 'public'::regnamespace AND cardinality(c.conkey) = 1
    ORDER BY pg_relation_size(c.conrelid) DESC, c.conname`)
  return keys.map((key) => [
    {
      label: `foreign key ${key.name}`,
      counted: false,
      sql: `DO $$ BEGIN
        IF EXISTS (SELECT 1 FROM public.${key.child} t WHERE t.${key.column} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM public.${key.parent} p WHERE p.${key.key} = t.${key.column}))
        THEN RAISE EXCEPTION 'fillHistory wrote rows of ${key.child} that break ${key.name}';
        END IF;
      END $$`,
    },
  ])
}
