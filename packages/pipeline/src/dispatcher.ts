import { and, eq, inArray, isNull, or, sql } from 'drizzle-orm'
import type { Logger } from './queues.js'
import { jobNames, queueNames, queueOfJob } from '@letters/contracts'
import { outbox, type Db } from '@letters/db'
import type { Queues } from './queues.js'
import { BackgroundLoop } from './background-loop.js'
import { withTimeout } from './timing.js'

export interface DispatcherOptions {
  /** Rows moved per round. */
  batchSize?: number
  /** Pause between rounds when the outbox is empty. */
  idleMs?: number
  /** Longest pause after failed rounds (Redis down), reached by doubling. */
  maxBackoffMs?: number
  /** How long one round may wait for Redis before giving up (BullMQ waits for a connection). */
  sendTimeoutMs?: number
}

/**
 * Moves outbox rows to BullMQ. Each round locks a batch of unsent rows (SKIP LOCKED, so any
 * number of dispatchers share the work), adds them as jobs whose jobId is the row's id, and
 * marks them sent in the same transaction. If Redis fails, nothing is marked and the rows go
 * out in a later round; if the commit fails after the jobs were added, the re-sent jobs carry
 * the same ids, which BullMQ ignores while it still holds them, and workers are idempotent.
 */
export class OutboxDispatcher {
  private readonly loop: BackgroundLoop
  private readonly batchSize: number
  private readonly sendTimeoutMs: number

  constructor(
    private readonly db: Db,
    private readonly queues: Queues,
    log: Logger,
    options: DispatcherOptions = {},
  ) {
    this.batchSize = options.batchSize ?? 200
    this.sendTimeoutMs = options.sendTimeoutMs ?? 5000
    const idleMs = options.idleMs ?? 200
    const maxBackoffMs = options.maxBackoffMs ?? 10_000
    this.loop = new BackgroundLoop({
      name: 'outbox dispatch',
      log,
      // A full batch: more rows are likely waiting.
      tick: async () => (await this.dispatchOnce()) === this.batchSize,
      intervalMs: idleMs,
      // Redis or Postgres down: ask again less and less often, from idleMs up to maxBackoffMs.
      backoffMs: (failures) => Math.min(maxBackoffMs, idleMs * 2 ** (failures - 1)),
      failureMessage: 'outbox dispatch failed; rows stay queued in Postgres',
    })
  }

  /** One round: returns how many rows were sent. Throws when Redis or Postgres failed. */
  async dispatchOnce(): Promise<number> {
    return this.db.transaction(async (tx) => {
      const rows = await tx
        .select({ id: outbox.id, queue: outbox.queue, jobName: outbox.jobName, payload: outbox.payload })
        .from(outbox)
        // Only rows whose job the registry knows, on the queue it gives: a stray row (written by
        // hand, by an older version) is never taken, so a batch of them cannot starve the rest;
        // it stays pending, where the outbox gauges (and the OutboxBacklog alert) show it.
        .where(and(isNull(outbox.sentAt), or(...jobNames.map((name) => and(eq(outbox.jobName, name), eq(outbox.queue, queueOfJob[name]))))))
        .orderBy(outbox.createdAt, outbox.id)
        .limit(this.batchSize)
        .for('update', { skipLocked: true })
      if (rows.length === 0) return 0
      for (const queue of queueNames) {
        const jobs = rows.filter((row) => row.queue === queue)
        if (jobs.length > 0) {
          const added = this.queues[queue].addBulk(jobs.map((row) => ({ name: row.jobName, data: row.payload, opts: { jobId: row.id } })))
          // A late add after the timeout is harmless: the rows stay unsent and go again with the same ids.
          added.catch(() => {})
          await withTimeout(added, this.sendTimeoutMs, `adding ${jobs.length} ${queue} jobs`)
        }
      }
      const sent = rows.map((row) => row.id)
      await tx
        .update(outbox)
        .set({ sentAt: sql`now()`, attempts: sql`${outbox.attempts} + 1` })
        .where(inArray(outbox.id, sent))
      return sent.length
    })
  }

  start(): void {
    this.loop.start()
  }

  /** Runs a round now instead of at the end of the pause. */
  poke(): void {
    this.loop.poke()
  }

  stop(): Promise<void> {
    return this.loop.stop()
  }
}
