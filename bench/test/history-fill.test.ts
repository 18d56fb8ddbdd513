import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isolatedDatabase } from '@letters/test/support/context'
import { fillHistory, historyShape, type HistoryShape } from '../src/history-fill/index.js'

const LETTERS = 5000

let database: { url: string; drop: () => Promise<void> } | undefined
let sql: postgres.Sql
let shape: HistoryShape
const progress: string[] = []

beforeAll(async () => {
  database = await isolatedDatabase('history')
  sql = postgres(database.url, { max: 2, onnotice: () => {} })
  shape = await fillHistory(sql, LETTERS, (text) => progress.push(text))
}, 120_000)

afterAll(async () => {
  await sql?.end({ timeout: 2 })
  await database?.drop()
})

/** One number of the filled database. */
async function count(query: postgres.PendingQuery<postgres.Row[]>): Promise<number> {
  const [row] = await query
  return Number(row?.n)
}

describe('an 18-month history of 5,000 letters', () => {
  it('has the shape it announced, and each table in its range', async () => {
    expect(shape).toEqual(historyShape(LETTERS))
    expect(shape).toMatchObject({ letters: LETTERS, accounts: 50, bigAccountLetters: 485, months: 18 })
    // Reported per table (a big one in parts, one per connection): rows and seconds.
    const written = (table: string) =>
      progress
        .map((line) => new RegExp(`^${table}(?: \\(part \\d of \\d\\))?: ([\\d,]+) rows in [\\d.]+ s$`).exec(line)?.[1])
        .reduce((sum, rows) => sum + (rows === undefined ? 0 : Number(rows.replaceAll(',', ''))), 0)
    expect(written('letters')).toBe(LETTERS)
    expect(written('letter_events')).toBeGreaterThan(4.5 * LETTERS)

    const tables = (await sql<Array<{ name: string }>>`SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'`).map((row) => row.name)
    const counts = Object.fromEntries(
      await Promise.all(tables.map(async (table) => [table, await count(sql`SELECT count(*)::int AS n FROM ${sql(table)}`)] as const)),
    ) as Record<string, number>
    expect(counts.accounts).toBe(shape.accounts)
    expect(counts.api_keys).toBe(2 * shape.accounts)
    expect(await count(sql`SELECT count(DISTINCT account_id)::int AS n FROM api_keys WHERE livemode AND revoked_at IS NULL`)).toBe(shape.accounts)
    expect(counts.senders).toBeGreaterThanOrEqual(shape.accounts)
    expect(counts.signatures).toBe(shape.accounts)
    expect(counts.campaigns).toBe(shape.campaigns)
    expect(counts.campaign_variables).toBe(shape.campaigns)
    expect(counts.webhook_endpoints).toBe(shape.webhookEndpoints)
    expect(counts.letters).toBe(LETTERS)
    expect(counts.letter_events).toBeGreaterThan(4.5 * LETTERS)
    expect(counts.letter_events).toBeLessThan(6 * LETTERS)
    // A charge per live letter, a refund per one cancelled or rejected, top-ups.
    const kinds = Object.fromEntries(
      (await sql<Array<{ kind: string; n: number }>>`SELECT kind, count(*)::int AS n FROM ledger_entries GROUP BY 1`).map((row) => [row.kind, row.n]),
    )
    expect(kinds.charge).toBe(await count(sql`SELECT count(*)::int AS n FROM letters WHERE livemode`))
    expect(kinds.refund).toBe(await count(sql`SELECT count(*)::int AS n FROM letters WHERE livemode AND status IN ('cancelled', 'address_rejected')`))
    expect(kinds.top_up).toBeGreaterThanOrEqual(shape.accounts)
    expect(kinds.top_up).toBeLessThanOrEqual(shape.accounts * shape.months)
    expect(counts.ledger_entries).toBe(kinds.charge! + kinds.refund! + kinds.top_up! + (kinds.adjustment ?? 0))
    // An address job per letter received, a production job per letter checked, a job per delivery attempt.
    expect(counts.outbox).toBe(
      (await count(sql`SELECT count(*)::int AS n FROM letter_events WHERE status = 'received'`)) +
        (await count(sql`SELECT count(*)::int AS n FROM letter_events WHERE status = 'ready_for_print'`)) +
        counts.webhook_attempts!,
    )
    expect(await count(sql`SELECT count(*)::int AS n FROM outbox WHERE sent_at IS NULL`)).toBe(0)
    // Printed letters not erased yet (the last 90 days or so): most printed alone, about a fifth in batches.
    const kept = await count(sql`SELECT count(*)::int AS n FROM letters WHERE livemode AND status IN ('printed', 'mailed') AND personal_data_erased_at IS NULL`)
    expect(kept).toBeGreaterThan(0.1 * LETTERS)
    expect(counts.print_handoffs).toBeGreaterThan(2 * 0.7 * kept)
    expect(counts.print_batch_letters).toBeGreaterThan(0.1 * kept)
    expect(counts.print_batch_letters).toBeLessThan(0.4 * kept)
    expect(counts.print_batch_handoffs).toBe(3 * counts.print_batches!)
    expect(await count(sql`SELECT max(letter_count)::int AS n FROM print_batches`)).toBeLessThanOrEqual(100)
    expect(await count(sql`SELECT count(*)::int AS n FROM print_batches WHERE status <> 'handed'`)).toBe(0)
    // The last 30 days of status changes: about 30/548 of the letters, five changes each.
    expect(counts.events).toBeGreaterThan(0.15 * LETTERS)
    expect(counts.events).toBeLessThan(0.5 * LETTERS)
    expect(await count(sql`SELECT count(*)::int AS n FROM events WHERE occurred_at < now() - interval '30 days 1 hour'`)).toBe(0)
    expect(counts.webhook_events).toBeGreaterThan(LETTERS)
    expect(counts.webhook_attempts).toBeGreaterThanOrEqual(counts.webhook_events!)
    expect(counts.idempotency_keys).toBeGreaterThan(0)
    expect(counts.idempotency_keys).toBeLessThan(0.01 * LETTERS)

    // Statuses: mostly mailed, a few percent test letters, a few failed.
    const statuses = Object.fromEntries(
      (await sql<Array<{ status: string; n: number }>>`SELECT status, count(*)::int AS n FROM letters GROUP BY 1`).map((row) => [row.status, row.n]),
    )
    expect(statuses.mailed).toBeGreaterThan(0.9 * LETTERS)
    expect(statuses.failed ?? 0).toBeLessThan(0.01 * LETTERS)
    const test = await count(sql`SELECT count(*)::int AS n FROM letters WHERE NOT livemode`)
    expect(test).toBeGreaterThan(0.01 * LETTERS)
    expect(test).toBeLessThan(0.05 * LETTERS)
  })

  it('keeps every foreign key', async () => {
    const keys = await sql<Array<{ name: string; child: string; column: string; parent: string; key: string }>>`
      SELECT c.conname AS name, r.relname AS child, a.attname AS column, p.relname AS parent, f.attname AS key
      FROM pg_constraint c JOIN pg_class r ON r.oid = c.conrelid JOIN pg_class p ON p.oid = c.confrelid
      JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1] JOIN pg_attribute f ON f.attrelid = c.confrelid AND f.attnum = c.confkey[1]
      WHERE c.contype = 'f' AND c.connamespace = 'public'::regnamespace`
    expect(keys.length).toBeGreaterThan(25)
    for (const key of keys) {
      const orphans = await count(sql`
        SELECT count(*)::int AS n FROM ${sql(key.child)} t
        WHERE t.${sql(key.column)} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ${sql(key.parent)} p WHERE p.${sql(key.key)} = t.${sql(key.column)})`)
      expect({ key: key.name, orphans }).toEqual({ key: key.name, orphans: 0 })
    }
  })

  it('keeps every balance equal to its ledger, entry by entry', async () => {
    expect(
      await count(sql`
        SELECT count(*)::int AS n FROM accounts a
        LEFT JOIN (SELECT account_id, sum(amount) AS total FROM ledger_entries GROUP BY 1) l ON l.account_id = a.id
        WHERE a.balance <> coalesce(l.total, 0)`),
    ).toBe(0)
    expect(
      await count(sql`
        SELECT count(*)::int AS n FROM (
          SELECT balance_after, sum(amount) OVER (PARTITION BY account_id ORDER BY id) AS running FROM ledger_entries
        ) x WHERE balance_after <> running`),
    ).toBe(0)
    expect(
      await count(sql`SELECT count(*)::int AS n FROM letters l WHERE livemode AND NOT EXISTS (
      SELECT 1 FROM ledger_entries e WHERE e.letter_id = l.id AND e.kind = 'charge' AND e.amount = -l.cost)`),
    ).toBe(0)
    expect(
      await count(sql`SELECT count(*)::int AS n FROM letters l WHERE livemode AND status IN ('cancelled', 'address_rejected') AND NOT EXISTS (
      SELECT 1 FROM ledger_entries e WHERE e.letter_id = l.id AND e.kind = 'refund' AND e.amount = l.cost)`),
    ).toBe(0)
  })

  it('gives every letter events, the latest its status, each after the letter was made', async () => {
    expect(
      await count(sql`
        SELECT count(*)::int AS n FROM letters l
        LEFT JOIN LATERAL (SELECT status FROM letter_events e WHERE e.letter_id = l.id ORDER BY e.id DESC LIMIT 1) e ON true
        WHERE e.status IS DISTINCT FROM l.status`),
    ).toBe(0)
    expect(
      await count(sql`SELECT count(*)::int AS n FROM letter_events e JOIN letters l ON l.id = e.letter_id WHERE e.at < l.created_at OR e.at > now()`),
    ).toBe(0)
    // In id order, a letter's events are in time order, and its updated_at is its latest one's.
    expect(
      await count(sql`
        SELECT count(*)::int AS n FROM (SELECT at, lag(at) OVER (PARTITION BY letter_id ORDER BY id) AS before FROM letter_events) x WHERE at < before`),
    ).toBe(0)
    expect(await count(sql`SELECT count(*)::int AS n FROM letters l WHERE updated_at <> (SELECT max(at) FROM letter_events e WHERE e.letter_id = l.id)`)).toBe(
      0,
    )
  })

  it('prints each live letter once: two handoffs of its own, or a batch; an erased one keeps neither, but in a batch not wholly erased', async () => {
    expect(
      await count(sql`
        SELECT count(*)::int AS n FROM letters l
        CROSS JOIN LATERAL (SELECT count(*) AS files FROM print_handoffs h WHERE h.letter_id = l.id) h
        CROSS JOIN LATERAL (SELECT count(*) AS batches FROM print_batch_letters b WHERE b.letter_id = l.id) b
        WHERE l.livemode AND l.status IN ('printed', 'mailed') AND l.personal_data_erased_at IS NULL
          AND NOT ((h.files = 2 AND b.batches = 0) OR (h.files = 0 AND b.batches = 1))`),
    ).toBe(0)
    expect(
      await count(sql`SELECT count(*)::int AS n FROM letters l WHERE (NOT livemode OR status NOT IN ('printed', 'mailed') OR personal_data_erased_at IS NOT NULL)
        AND EXISTS (SELECT 1 FROM print_handoffs h WHERE h.letter_id = l.id)`),
    ).toBe(0)
    expect(
      await count(sql`SELECT count(*)::int AS n FROM letters l WHERE (NOT livemode OR status NOT IN ('printed', 'mailed'))
        AND EXISTS (SELECT 1 FROM print_batch_letters b WHERE b.letter_id = l.id)`),
    ).toBe(0)
    // A batch is kept while a letter of it is not erased, and then counts all its letters.
    expect(
      await count(sql`SELECT count(*)::int AS n FROM print_batches b WHERE b.artifacts_removed_at IS NOT NULL
        OR b.letter_count <> (SELECT count(*) FROM print_batch_letters m WHERE m.batch_id = b.id)
        OR NOT EXISTS (SELECT 1 FROM print_batch_letters m JOIN letters l ON l.id = m.letter_id WHERE m.batch_id = b.id AND l.personal_data_erased_at IS NULL)`),
    ).toBe(0)
  })

  it('gives the big account a campaign of a handful of letters, and one endpoint with most of its webhook events', async () => {
    const [big] = await sql<Array<{ id: string; n: number }>>`SELECT account_id AS id, count(*)::int AS n FROM letters GROUP BY 1 ORDER BY 2 DESC LIMIT 1`
    expect(big!.n).toBe(shape.bigAccountLetters)
    expect(await count(sql`SELECT count(*)::int AS n FROM campaigns WHERE account_id = ${big!.id}`)).toBe(50)
    const sizes = await sql<
      Array<{ n: number }>
    >`SELECT count(*)::int AS n FROM letters WHERE account_id = ${big!.id} AND campaign_id IS NOT NULL GROUP BY campaign_id`
    expect(Math.min(...sizes.map((row) => row.n))).toBeLessThanOrEqual(10)
    const perEndpoint = await sql<Array<{ n: number }>>`
      SELECT count(w.id)::int AS n FROM webhook_endpoints p LEFT JOIN webhook_events w ON w.endpoint_id = p.id WHERE p.account_id = ${big!.id} GROUP BY p.id ORDER BY 1 DESC`
    expect(perEndpoint).toHaveLength(3)
    const total = perEndpoint.reduce((sum, row) => sum + row.n, 0)
    expect(perEndpoint[0]!.n).toBeGreaterThan(total / 2)
    // Every copy is of a letter of the endpoint's account, of a type it subscribed to; every delivered one has an attempt that delivered it.
    expect(
      await count(sql`
        SELECT count(*)::int AS n FROM webhook_events w JOIN webhook_endpoints p ON p.id = w.endpoint_id
        JOIN letters l ON l.id::text = (w.body::json -> 'data') ->> 'id'
        WHERE l.account_id <> p.account_id OR NOT l.livemode OR NOT (w.type = ANY(p.events)) OR w.finished_at IS NULL`),
    ).toBe(0)
    expect(
      await count(sql`SELECT count(*)::int AS n FROM webhook_events w WHERE w.attempts <> (SELECT count(*) FROM webhook_attempts a WHERE a.event_id = w.id)
        OR (w.state = 'delivered') <> EXISTS (SELECT 1 FROM webhook_attempts a WHERE a.event_id = w.id AND a.outcome = 'delivered')`),
    ).toBe(0)
  })

  it('erases the personal data of letters older than 90 days, and of no letter changed since', async () => {
    expect(
      await count(sql`SELECT count(*)::int AS n FROM letters WHERE created_at < now() - interval '100 days'
        AND (personal_data_erased_at IS NULL OR message <> '' OR recipient ->> 'name' <> '' OR address_lines IS NOT NULL OR artifacts_removed_at IS NULL)`),
    ).toBe(0)
    expect(await count(sql`SELECT count(*)::int AS n FROM letters WHERE created_at < now() - interval '100 days'`)).toBeGreaterThan(0.75 * LETTERS)
    expect(await count(sql`SELECT count(*)::int AS n FROM letters WHERE updated_at > now() - interval '90 days' AND personal_data_erased_at IS NOT NULL`)).toBe(
      0,
    )
    // Their event bodies were rewritten too.
    expect(
      await count(sql`SELECT count(*)::int AS n FROM webhook_events w JOIN letters l ON l.id::text = (w.body::json -> 'data') ->> 'id'
        WHERE l.personal_data_erased_at IS NOT NULL AND (w.body::jsonb -> 'data' ->> 'message' <> '' OR w.body::jsonb -> 'data' -> 'recipient' ->> 'name' <> '')`),
    ).toBe(0)
  })
})
