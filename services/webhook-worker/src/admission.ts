import { QUEUED_LEASE_MS } from '@letters/config'
import { sql } from 'drizzle-orm'
import { enqueue, type Db } from '@letters/db'
import { BackgroundLoop, type Logger } from '@letters/pipeline'

export interface AdmissionOptions {
  /** Deliveries of one endpoint queued or being sent at once (WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT). */
  maxInFlightPerEndpoint: number
  /**
   * Deliveries of one account, over all its endpoints, queued or being sent at once
   * (WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT): an account with many dead endpoints cannot take every slot.
   */
  maxInFlightPerAccount: number
  /** Pause between rounds when nothing asked for one sooner. */
  intervalMs?: number
  /** Deliveries admitted per round at most. */
  batchSize?: number
  /**
   * How long an admitted delivery keeps its slot before a worker starts it (the config's
   * QUEUED_LEASE_MS, a minute, unless told otherwise: WEBHOOK_QUEUED_LEASE_MS). Once it passes (the job was lost with Redis, or its worker died before starting
   * it), the slot is given again, and the job, if it ever runs, finds its lease gone and sends nothing.
   */
  queuedLeaseMs?: number
  /** Called after a round that queued jobs (the worker pokes its outbox dispatcher, so they reach BullMQ at once). */
  onAdmitted?: (count: number) => void
}

/** One round never waits on another: admission rounds of every worker replica take turns on this lock. */
const ADMISSION_LOCK = 'webhook-admission'

/**
 * Hands webhook deliveries to the `webhooks` queue no faster than their endpoints take them: an
 * endpoint has at most `maxInFlightPerEndpoint` deliveries admitted (queued or being sent) at
 * once, and an account at most `maxInFlightPerAccount` over all its endpoints. The rest wait in
 * Postgres, where they cost nothing, so the queue never holds more than that many of a dead
 * receiver's (or a dead account's) events ahead of anyone else's, and the workers' slots go round
 * every endpoint with work.
 *
 * Each admitted delivery gets a lease (`leased_until`) and a lease id, which is its job's id. The
 * worker extends the lease once, as it starts the attempt, to the send's timeout plus the time to
 * record it (a send never outlasts its timeout, so once is enough), and clears it when it records
 * the attempt. A worker that died lets go when the lease passes. A job whose lease went to
 * another job, or was taken back by a retry asked for once it had passed, sends nothing, or, if
 * it was sending already, records nothing.
 * A round takes the rounds of other replicas' turns (an advisory lock), so two of them never
 * both fill the same free slot.
 */
export class DeliveryAdmission {
  private readonly loop: BackgroundLoop
  private readonly batchSize: number
  private readonly queuedLeaseMs: number

  constructor(
    private readonly db: Db,
    log: Logger,
    private readonly options: AdmissionOptions,
  ) {
    this.batchSize = options.batchSize ?? 500
    this.queuedLeaseMs = options.queuedLeaseMs ?? QUEUED_LEASE_MS
    this.loop = new BackgroundLoop({
      name: 'webhook admission',
      log,
      // A full batch: more deliveries may be waiting for a slot that is free.
      tick: async () => (await this.admitOnce()) === this.batchSize,
      // New events (written by any process) are found by the next round: this is their longest wait.
      intervalMs: options.intervalMs ?? 200,
      failureMessage: 'webhook admission failed; deliveries wait in Postgres for the next round',
    })
  }

  /** One round: returns how many deliveries it admitted. */
  async admitOnce(): Promise<number> {
    const admitted = await this.db.transaction(async (tx) => {
      // Raw SQL kept: an advisory lock, which drizzle has no builder for.
      await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtextextended(${ADMISSION_LOCK}, 0))`)
      // Raw SQL kept: a recursive skip scan, LATERAL limits per endpoint and windows, in one statement.
      // Postgres has no skip scan: `pending_endpoints` finds each endpoint with pending deliveries
      // with one probe of webhook_events_due_idx, however long its backlog. Every delivery in flight
      // is pending, so these endpoints hold every slot taken: per endpoint, `busy` counts them
      // (webhook_events_leased_idx), and `accounts` adds them up per account. `due` takes the oldest
      // due deliveries that fit in the rest of both caps. When the batch or an account's cap cannot
      // take them all, each endpoint's first free slot goes before anyone's second.
      const rows = await tx.execute<{ id: string; leaseId: string }>(sql`
        WITH RECURSIVE pending_endpoints AS (
          (SELECT endpoint_id FROM webhook_events WHERE state = 'pending' ORDER BY endpoint_id LIMIT 1)
          UNION ALL
          SELECT (SELECT ev.endpoint_id FROM webhook_events ev WHERE ev.state = 'pending' AND ev.endpoint_id > p.endpoint_id ORDER BY ev.endpoint_id LIMIT 1)
          FROM pending_endpoints p WHERE p.endpoint_id IS NOT NULL
        ),
        endpoints AS (
          SELECT p.endpoint_id, e.account_id, busy.n
          FROM pending_endpoints p
          -- A deleted endpoint's deliveries wait, unsent, for the history retention to remove them.
          JOIN webhook_endpoints e ON e.id = p.endpoint_id AND e.deleted_at IS NULL
          CROSS JOIN LATERAL (
            SELECT count(*)::int AS n FROM webhook_events
            WHERE endpoint_id = p.endpoint_id AND state = 'pending' AND leased_until IS NOT NULL AND leased_until > now()
          ) busy
        ),
        accounts AS (SELECT account_id, sum(n)::int AS n FROM endpoints GROUP BY account_id),
        candidates AS (
          SELECT en.endpoint_id, en.account_id, en.n, a.n AS account_n, due.id, due.due_at
          FROM endpoints en
          JOIN accounts a ON a.account_id = en.account_id
          CROSS JOIN LATERAL (
            SELECT ev.id, coalesce(ev.next_attempt_at, ev.created_at) AS due_at FROM webhook_events ev
            WHERE ev.endpoint_id = en.endpoint_id AND ev.state = 'pending' AND coalesce(ev.next_attempt_at, ev.created_at) <= now()
              AND (ev.leased_until IS NULL OR ev.leased_until <= now())
            ORDER BY coalesce(ev.next_attempt_at, ev.created_at), ev.id
            LIMIT greatest(least(${this.options.maxInFlightPerEndpoint} - en.n, ${this.options.maxInFlightPerAccount} - a.n), 0)
          ) due
        ),
        slotted AS (
          SELECT id, account_id, account_n, due_at, n + row_number() OVER (PARTITION BY endpoint_id ORDER BY due_at, id) AS slot FROM candidates
        ),
        chosen AS (
          SELECT id FROM (
            SELECT id, due_at, slot, account_n + row_number() OVER (PARTITION BY account_id ORDER BY slot, due_at, id) AS account_slot FROM slotted
          ) c
          WHERE account_slot <= ${this.options.maxInFlightPerAccount}
          ORDER BY slot, due_at
          LIMIT ${this.batchSize}
        )
        UPDATE webhook_events ev SET leased_until = now() + ${this.queuedLeaseMs} * interval '1 millisecond', lease_id = gen_random_uuid()
        FROM chosen
        -- Checked again under the row's lock: a worker may have recorded the delivery meanwhile.
        WHERE ev.id = chosen.id AND ev.state = 'pending' AND (ev.leased_until IS NULL OR ev.leased_until <= now())
        RETURNING ev.id::text AS id, ev.lease_id::text AS "leaseId"`)
      await enqueue(
        tx,
        rows.map((row) => ({ name: 'deliver-webhook', id: row.leaseId, data: { eventId: row.id } }) as const),
      )
      return rows.length
    })
    if (admitted > 0) this.options.onAdmitted?.(admitted)
    return admitted
  }

  start(): void {
    this.loop.start()
  }

  /** A slot may have come free (a delivery ended): the next round runs now. */
  poke(): void {
    this.loop.poke()
  }

  stop(): Promise<void> {
    return this.loop.stop()
  }
}
