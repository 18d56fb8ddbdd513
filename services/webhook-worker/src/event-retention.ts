import { sql } from 'drizzle-orm'
import { EVENT_RETENTION_DAYS } from '@letters/contracts'
import type { Db } from '@letters/db'
import { BackgroundLoop, type Logger } from '@letters/pipeline'

export interface EventRetentionOptions {
  /** How long an event is kept (EVENT_RETENTION_DAYS, as GET /events promises). */
  retentionMs?: number
  /** Pause between rounds once nothing is left to delete. */
  intervalMs?: number
  /** Events deleted per statement: short statements, so the deletes never hold up the writes of new events. */
  batchSize?: number
}

/**
 * Deletes the events GET /events no longer shows, oldest first, a batch per statement. Any
 * number of workers may run it: a batch another one deleted first is simply not found.
 */
export class EventRetention {
  private readonly loop: BackgroundLoop
  private readonly retentionMs: number
  private readonly batchSize: number

  constructor(
    private readonly db: Db,
    log: Logger,
    options: EventRetentionOptions = {},
  ) {
    this.retentionMs = options.retentionMs ?? EVENT_RETENTION_DAYS * 86_400_000
    this.batchSize = options.batchSize ?? 1000
    this.loop = new BackgroundLoop({
      name: 'event retention',
      log,
      // A full batch: older events are likely still there.
      tick: async () => (await this.deleteOnce()) === this.batchSize,
      intervalMs: options.intervalMs ?? 10 * 60_000,
    })
  }

  /** One batch: returns how many events it deleted. */
  async deleteOnce(): Promise<number> {
    // Raw SQL kept: DELETE … LIMIT is not SQL; the oldest batch is chosen by a subquery (events_occurred_idx).
    const deleted = await this.db.execute<{ id: string }>(sql`
      DELETE FROM events WHERE id IN (
        SELECT id FROM events WHERE occurred_at < now() - ${this.retentionMs} * interval '1 millisecond'
        ORDER BY occurred_at LIMIT ${this.batchSize})
      RETURNING id`)
    return deleted.length
  }

  start(): void {
    this.loop.start()
  }

  stop(): Promise<void> {
    return this.loop.stop()
  }
}
