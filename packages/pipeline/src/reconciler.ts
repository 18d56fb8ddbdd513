import { sql } from 'drizzle-orm'
import { queueOfJob, type QueueName } from '@letters/contracts'
import type { Db } from '@letters/db'
import { jobOfStatus, resumableStatuses, resumeLetter, withoutProgressSql, type ResumableStatus } from '@letters/letters'
import { metrics } from '@letters/observability'
import type { Logger, Queues } from './queues.js'
import { BackgroundLoop } from './background-loop.js'
import { withTimeout } from './timing.js'

/** BullMQ states of a job that will still run; any other (completed, failed, unknown) runs no more. */
const runnableStates = new Set(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children'])

export interface ReconcilerOptions {
  /** A letter without progress for this long is looked at (RECONCILE_AFTER_MS). */
  afterMs: number
  /** Pause between rounds (RECONCILE_INTERVAL_MS). */
  intervalMs: number
  /** Letters looked at per transaction. */
  batchSize?: number
  /** How long a round may wait for Redis before giving up. */
  redisTimeoutMs?: number
}

type Candidate = { id: string; status: ResumableStatus; updatedAt: string; jobId: string | null; jobSent: boolean | null }
type Cursor = { updatedAt: string; id: string }

/**
 * Rebuilds from Postgres the jobs Redis lost (a restart without persistence, a flush, a clean
 * button): a letter in received, ready_for_print or printing whose last change is older than
 * `afterMs`, and whose latest job for that status is neither waiting in the outbox nor
 * runnable in BullMQ, gets a new job through the outbox and the event RESUMED_DETAIL.
 *
 * A job BullMQ holds as failed while its letter still waits for it is queued again too: the
 * worker could not record the outcome (a letter the floor gave up on is `failed`, not
 * `printing`; an address job fails only when the database was away through all its attempts),
 * so the new job decides again, with the worker's own rules, at most once per `afterMs`.
 *
 * Safe with any number of replicas: each round locks the letters it looks at (SKIP LOCKED)
 * and, before it commits, writes their new job and moves their `updated_at`, so no other
 * round takes them again. If Redis does not answer, the round changes nothing.
 */
export class Reconciler {
  private readonly loop: BackgroundLoop
  private readonly batchSize: number
  private readonly redisTimeoutMs: number

  constructor(
    private readonly db: Db,
    private readonly queues: Queues,
    private readonly log: Logger,
    private readonly options: ReconcilerOptions,
  ) {
    this.batchSize = options.batchSize ?? 100
    this.redisTimeoutMs = options.redisTimeoutMs ?? 5000
    this.loop = new BackgroundLoop({
      name: 'reconciliation',
      log,
      // A full page: more letters are likely waiting.
      tick: async () => (await this.reconcileOnce()) === this.batchSize,
      intervalMs: options.intervalMs,
    })
  }

  /** Looks at every letter without progress, a page at a time; returns how many were queued again. */
  async reconcileOnce(): Promise<number> {
    let requeued = 0
    for (let after: Cursor | undefined, page; ; after = page.last) {
      page = await this.reconcilePage(after)
      for (const letter of page.lost) metrics.lettersReconciled.inc({ status: letter.status })
      if (page.lost.length > 0) this.log.warn({ letters: page.lost }, 'queued again the jobs Redis no longer had')
      requeued += page.lost.length
      if (!page.last) return requeued
    }
  }

  /**
   * One transaction over at most `batchSize` letters, after `after` in (updated_at, id) order:
   * letters whose job is still runnable stay as they are, so the next page must start past them.
   */
  private reconcilePage(after: Cursor | undefined) {
    const queueOfStatus = sql.join(
      resumableStatuses.map((status) => sql`WHEN ${status} THEN ${this.queueOf(status)}`),
      sql` `,
    )
    return this.db.transaction(async (tx) => {
      // Raw SQL kept: FOR UPDATE OF l SKIP LOCKED over a LATERAL join (each letter's latest job on its status's queue), one statement read as written.
      const candidates = await tx.execute<Candidate>(sql`
        SELECT l.id, l.status, l.updated_at::text AS "updatedAt", job.id AS "jobId", job.sent_at IS NOT NULL AS "jobSent"
        FROM letters l
        LEFT JOIN LATERAL (
          SELECT o.id, o.sent_at FROM outbox o
          WHERE o.payload ->> 'letterId' = l.id::text AND o.queue = CASE l.status ${queueOfStatus} END
          ORDER BY o.created_at DESC
          LIMIT 1
        ) job ON true
        WHERE ${withoutProgressSql('l', this.options.afterMs)}
          ${after ? sql`AND (l.updated_at, l.id) > (${after.updatedAt}::timestamptz, ${after.id}::uuid)` : sql``}
        ORDER BY l.updated_at, l.id
        LIMIT ${this.batchSize}
        FOR UPDATE OF l SKIP LOCKED`)
      const lastCandidate = candidates.length === this.batchSize ? candidates[candidates.length - 1] : undefined
      const last: Cursor | undefined = lastCandidate && { updatedAt: lastCandidate.updatedAt, id: lastCandidate.id }
      // An unsent row is still the dispatcher's to deliver.
      const dispatched = candidates.filter((letter) => letter.jobId === null || letter.jobSent)
      const states = await withTimeout(
        Promise.all(
          dispatched.map((letter) => (letter.jobId ? this.queues[this.queueOf(letter.status)].getJobState(letter.jobId) : Promise.resolve('unknown' as const))),
        ),
        this.redisTimeoutMs,
        `reading ${dispatched.length} job states`,
      )
      const lost = dispatched
        .map((letter, index) => ({ id: letter.id, status: letter.status, lostJobId: letter.jobId, jobState: states[index]! }))
        .filter((letter) => !runnableStates.has(letter.jobState))
      for (const letter of lost) await resumeLetter(tx, letter.id, letter.status)
      return { lost, last }
    })
  }

  start(): void {
    this.loop.start()
  }

  stop(): Promise<void> {
    return this.loop.stop()
  }

  private queueOf(status: ResumableStatus): QueueName {
    return queueOfJob[jobOfStatus[status]]
  }
}
