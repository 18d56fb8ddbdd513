import { sql } from 'drizzle-orm'
import { enqueue, type Db } from '@letters/db'
import { BackgroundLoop, type Logger } from '@letters/queues'

export interface AdmissionOptions {
  /** Deliveries of one endpoint queued or being sent at once (WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT). */
  maxInFlightPerEndpoint: number
  /** Pause between rounds when nothing asked for one sooner. */
  intervalMs?: number
  /** Deliveries admitted per round at most. */
  batchSize?: number
  /**
   * How long an admitted delivery keeps its slot before a worker starts it. Long enough to wait
   * its turn in a busy queue; once it passes (the job was lost with Redis, or failed for good), the
   * slot is given again, and the job, if it ever runs, finds its lease gone and sends nothing.
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
 * once. The rest wait in Postgres, where they cost nothing, so the queue never holds more than
 * that many of a dead receiver's events ahead of anyone else's, and the workers' slots go round
 * every endpoint with work.
 *
 * Each admitted delivery gets a lease (`leased_until`) and a lease id, which is its job's id: the
 * worker renews the lease while it sends and clears it when it records the attempt. A worker
 * that died lets go when the lease passes; a job whose lease was given to another sends nothing.
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
    this.queuedLeaseMs = options.queuedLeaseMs ?? 5 * 60_000
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
      // Raw SQL kept: a recursive skip scan, LATERAL limits per endpoint and a window, in one statement.
      // Postgres has no skip scan: `pending_endpoints` finds each endpoint with pending deliveries
      // with one probe of webhook_events_due_idx, however long its backlog. Per endpoint, `busy`
      // counts the slots held (webhook_events_leased_idx) and `due` takes the oldest due deliveries
      // that fit in the rest. When the batch cannot take them all, each endpoint's first free slot
      // goes before anyone's second.
      const rows = await tx.execute<{ id: string; leaseId: string }>(sql`
        WITH RECURSIVE pending_endpoints AS (
          (SELECT endpoint_id FROM webhook_events WHERE state = 'pending' ORDER BY endpoint_id LIMIT 1)
          UNION ALL
          SELECT (SELECT ev.endpoint_id FROM webhook_events ev WHERE ev.state = 'pending' AND ev.endpoint_id > p.endpoint_id ORDER BY ev.endpoint_id LIMIT 1)
          FROM pending_endpoints p WHERE p.endpoint_id IS NOT NULL
        ),
        candidates AS (
          SELECT p.endpoint_id, busy.n, due.id, due.due_at
          FROM pending_endpoints p
          CROSS JOIN LATERAL (
            SELECT count(*)::int AS n FROM webhook_events
            WHERE endpoint_id = p.endpoint_id AND state = 'pending' AND leased_until IS NOT NULL AND leased_until > now()
          ) busy
          CROSS JOIN LATERAL (
            SELECT ev.id, coalesce(ev.next_attempt_at, ev.created_at) AS due_at FROM webhook_events ev
            WHERE ev.endpoint_id = p.endpoint_id AND ev.state = 'pending' AND coalesce(ev.next_attempt_at, ev.created_at) <= now()
              AND (ev.leased_until IS NULL OR ev.leased_until <= now())
            ORDER BY coalesce(ev.next_attempt_at, ev.created_at), ev.id
            LIMIT greatest(${this.options.maxInFlightPerEndpoint} - busy.n, 0)
          ) due
          WHERE p.endpoint_id IS NOT NULL
        ),
        chosen AS (
          SELECT id FROM (SELECT id, due_at, n + row_number() OVER (PARTITION BY endpoint_id ORDER BY due_at, id) AS slot FROM candidates) c
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
