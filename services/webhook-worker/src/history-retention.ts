import { sql, type SQL } from 'drizzle-orm'
import { EVENT_RETENTION_DAYS } from '@letters/contracts'
import type { Db } from '@letters/db'
import { metrics } from '@letters/observability'
import { BackgroundLoop, type Logger } from '@letters/pipeline'
import { resumableStatuses } from '@letters/letters'

const DAY_MS = 86_400_000

/** How long an outbox row is kept once its job was handed to Redis: long enough to look into an incident. */
export const OUTBOX_RETENTION_DAYS = 7

export interface HistoryRetentionOptions {
  /** How long the events of GET /events and webhook deliveries are kept (EVENT_RETENTION_DAYS, as GET /events promises). */
  eventRetentionMs?: number
  /** How long a done outbox row is kept. */
  outboxRetentionMs?: number
  /** Pause between rounds once nothing is left to delete. */
  intervalMs?: number
  /** Rows deleted per statement: short statements, so the deletes never hold up the writes of new rows. */
  batchSize?: number
}

/**
 * One kind of history trimmed: a statement deleting at most `limit` rows, oldest first, by an
 * index that holds only what is trimmed or orders it by age, so that a batch costs the same
 * however long the history is.
 */
interface TrimRule {
  /** The metric label and the log's name for it. */
  what: string
  statement: (limit: number) => SQL
}

// Raw SQL kept in each rule: DELETE … LIMIT is not SQL, so each batch is chosen by a subquery.
function trimRules(eventRetentionMs: number, outboxRetentionMs: number): TrimRule[] {
  const olderThan = (ms: number) => sql`now() - ${ms} * interval '1 millisecond'`
  return [
    {
      // What GET /events no longer shows (events_occurred_idx).
      what: 'events',
      statement: (limit) => sql`DELETE FROM events WHERE id IN (
        SELECT id FROM events WHERE occurred_at < ${olderThan(eventRetentionMs)} ORDER BY occurred_at LIMIT ${limit})`,
    },
    {
      // Requests for QR links as old as the events they could have made, a batch of the oldest
      // by the primary key: ids grow as the rows are written, each with its time, so the lowest
      // ids are the oldest rows, and a round that finds none old reads one batch of the index.
      what: 'qr_scans',
      statement: (limit) => sql`DELETE FROM qr_scans WHERE id IN (SELECT id FROM qr_scans ORDER BY id LIMIT ${limit}) AND at < ${olderThan(eventRetentionMs)}`,
    },
    {
      // Webhook deliveries finished as long ago (webhook_events_finished_idx); their attempts go with them (ON DELETE CASCADE, webhook_attempts_event_idx).
      what: 'webhook_events',
      // The condition again outside: a delivery sent again meanwhile (pending once more) stays.
      statement: (limit) => sql`DELETE FROM webhook_events WHERE id IN (
        SELECT id FROM webhook_events WHERE state <> 'pending' AND finished_at < ${olderThan(eventRetentionMs)} ORDER BY finished_at LIMIT ${limit})
        AND state <> 'pending' AND finished_at < ${olderThan(eventRetentionMs)}`,
    },
    {
      // Every delivery of an endpoint the client deleted, whatever its age (webhook_events_endpoint_state_idx).
      what: 'deleted_endpoint_events',
      statement: (limit) => sql`DELETE FROM webhook_events WHERE id IN (
        SELECT ev.id FROM webhook_endpoints e
        CROSS JOIN LATERAL (SELECT id FROM webhook_events WHERE endpoint_id = e.id LIMIT ${limit}) ev
        WHERE e.deleted_at IS NOT NULL LIMIT ${limit})`,
    },
    {
      // A deleted endpoint once nothing of it is left.
      what: 'deleted_endpoints',
      statement: (limit) => sql`DELETE FROM webhook_endpoints WHERE id IN (
        SELECT e.id FROM webhook_endpoints e
        WHERE e.deleted_at IS NOT NULL AND NOT EXISTS (SELECT 1 FROM webhook_events WHERE endpoint_id = e.id)
        LIMIT ${limit})`,
    },
    {
      // Outbox rows whose job Redis took long ago (outbox_sent_idx); an unsent row is never
      // trimmed, nor the row of a letter still waiting in a pipeline status: the reconciler
      // reads it to tell a job still queued from a lost one (each a look-up by primary key).
      what: 'outbox',
      statement: (limit) => sql`DELETE FROM outbox WHERE id IN (
        SELECT o.id FROM outbox o WHERE o.sent_at < ${olderThan(outboxRetentionMs)}
          AND NOT EXISTS (SELECT 1 FROM letters l WHERE l.id = (o.payload ->> 'letterId')::uuid AND l.status IN ${resumableStatuses})
        ORDER BY o.sent_at LIMIT ${limit})`,
    },
  ]
}

/**
 * Trims the history that would otherwise grow with every letter ever sent: the events GET
 * /events no longer shows, the requests for QR links as old, webhook deliveries past the same window, the deliveries and then the
 * row of an endpoint the client deleted, and outbox rows done long ago. Each round deletes a
 * batch of each kind; a full batch asks for the next round at once. Any number of workers may
 * run it: a batch another one deleted first is simply not found.
 *
 * Not here: the ledger, which is append-only (a trigger refuses any UPDATE or DELETE); letter
 * events, which are each letter's history; print handoffs and batches, removed with a letter's
 * files once its personal data is erased (@letters/letters, recordLetterArtifactsRemoved).
 */
export class HistoryRetention {
  private readonly loop: BackgroundLoop
  private readonly rules: TrimRule[]
  private readonly batchSize: number

  constructor(
    private readonly db: Db,
    log: Logger,
    options: HistoryRetentionOptions = {},
  ) {
    this.rules = trimRules(options.eventRetentionMs ?? EVENT_RETENTION_DAYS * DAY_MS, options.outboxRetentionMs ?? OUTBOX_RETENTION_DAYS * DAY_MS)
    this.batchSize = options.batchSize ?? 1000
    this.loop = new BackgroundLoop({
      name: 'history retention',
      log,
      tick: async () => Object.values(await this.trimOnce()).some((deleted) => deleted === this.batchSize),
      intervalMs: options.intervalMs ?? 10 * 60_000,
    })
  }

  /** One batch of each kind, in order: returns how many rows of each it deleted. */
  async trimOnce(): Promise<Record<string, number>> {
    const deleted: Record<string, number> = {}
    for (const rule of this.rules) {
      const rows = await this.db.execute(rule.statement(this.batchSize))
      deleted[rule.what] = rows.count
      if (rows.count > 0) metrics.historyTrimmed.inc({ table: rule.what }, rows.count)
    }
    return deleted
  }

  start(): void {
    this.loop.start()
  }

  stop(): Promise<void> {
    return this.loop.stop()
  }
}
