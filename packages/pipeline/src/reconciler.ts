import { sql } from 'drizzle-orm'
import type { PrintJournal } from '@letters/artifacts'
import { queueOfJob, type QueueName } from '@letters/contracts'
import { keyset, type Db, type KeysetPosition, type Tx } from '@letters/db'
import {
  jobOfStatus,
  markRestoresReconciled,
  moveLetter,
  onPaperPerJournal,
  pendingRestores,
  resumableStatuses,
  resumeLetter,
  watchForRestore,
  withoutProgressSql,
  type ResumableStatus,
} from '@letters/letters'
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
  /**
   * The print journal (in the artifact store the floor writes to): a letter it has on paper is
   * marked printed instead of being produced again, and its watermark tells a restored database.
   */
  journal?: PrintJournal
}

/** What a reconciliation did: letters whose job was queued again, and letters the print journal had on paper. */
export interface Reconciled {
  resumed: number
  printedFromJournal: number
}

type Candidate = { id: string; status: ResumableStatus; livemode: boolean; updatedAt: string; jobId: string | null; jobSent: boolean | null }

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

  /** Looks at every letter without progress, a page at a time; returns how many it moved on (queued again, or printed per the journal). */
  async reconcileOnce(): Promise<number> {
    const done = await this.reconcile()
    return done.resumed + done.printedFromJournal
  }

  /**
   * One reconciliation: first a look for a restore (the watermark), then every letter without
   * progress, those left waiting by a restore not yet reconciled among them. Once all were looked
   * at, such restores count as reconciled.
   */
  async reconcile(): Promise<Reconciled> {
    const { journal } = this.options
    if (journal) {
      // A store that does not answer must not stop the reconciliation itself.
      await watchForRestore(this.db, journal, this.log).catch((err: unknown) =>
        this.log.warn({ err }, 'could not compare the database with the print journal; the next round tries again'),
      )
    }
    const restores = await pendingRestores(this.db)
    const done: Reconciled = { resumed: 0, printedFromJournal: 0 }
    for (let after: KeysetPosition | undefined, page; ; after = page.last) {
      page = await this.reconcilePage(after)
      for (const letter of page.lost) metrics.lettersReconciled.inc({ status: letter.status })
      if (page.lost.length > 0) this.log.warn({ letters: page.lost }, 'queued again the jobs Redis no longer had')
      if (page.printed.length > 0) this.log.warn({ letters: page.printed }, 'marked printed the letters the print journal had on paper')
      done.resumed += page.lost.length
      done.printedFromJournal += page.printed.length
      if (!page.last) break
    }
    if (restores.length > 0) {
      await markRestoresReconciled(this.db, restores)
      this.log.info({ restores, ...done }, 'reconciled every letter a restore left waiting')
    }
    return done
  }

  /**
   * One transaction over at most `batchSize` letters, after `after` in (updated_at, id) order:
   * letters whose job is still runnable stay as they are, so the next page must start past them.
   */
  private reconcilePage(after: KeysetPosition | undefined) {
    const queueOfStatus = sql.join(
      resumableStatuses.map((status) => sql`WHEN ${status} THEN ${this.queueOf(status)}`),
      sql` `,
    )
    const page = keyset({ instant: sql`l.updated_at`, id: sql`l.id` }, after, 'oldest first')
    return this.db.transaction(async (tx) => {
      // Raw SQL kept: FOR UPDATE OF l SKIP LOCKED over a LATERAL join (each letter's latest job on its status's queue), one statement read as written.
      const candidates = await tx.execute<Candidate>(sql`
        SELECT l.id, l.status, l.livemode, l.updated_at::text AS "updatedAt", job.id AS "jobId", job.sent_at IS NOT NULL AS "jobSent"
        FROM letters l
        LEFT JOIN LATERAL (
          SELECT o.id, o.sent_at FROM outbox o
          WHERE o.payload ->> 'letterId' = l.id::text AND o.queue = CASE l.status ${queueOfStatus} END
          ORDER BY o.created_at DESC
          LIMIT 1
        ) job ON true
        WHERE ${withoutProgressSql('l', this.options.afterMs)}
          ${page.after ? sql`AND ${page.after}` : sql``}
        ORDER BY ${page.orderBy}
        LIMIT ${this.batchSize}
        FOR UPDATE OF l SKIP LOCKED`)
      const lastCandidate = candidates.length === this.batchSize ? candidates[candidates.length - 1] : undefined
      const last: KeysetPosition | undefined = lastCandidate && { position: lastCandidate.updatedAt, id: lastCandidate.id }
      // An unsent row is still the dispatcher's to deliver.
      const dispatched = candidates.filter((letter) => letter.jobId === null || letter.jobSent)
      const states = await withTimeout(
        Promise.all(
          dispatched.map((letter) => (letter.jobId ? this.queues[this.queueOf(letter.status)].getJobState(letter.jobId) : Promise.resolve('unknown' as const))),
        ),
        this.redisTimeoutMs,
        `reading ${dispatched.length} job states`,
      )
      const stopped = dispatched
        .map((letter, index) => ({ id: letter.id, status: letter.status, livemode: letter.livemode, lostJobId: letter.jobId, jobState: states[index]! }))
        .filter((letter) => !runnableStates.has(letter.jobState))
      const lost: typeof stopped = []
      const printed: typeof stopped = []
      for (const letter of stopped) {
        if (await this.settledFromJournal(tx, letter)) printed.push(letter)
        else {
          await resumeLetter(tx, letter.id, letter.status)
          lost.push(letter)
        }
      }
      return { lost, printed, last }
    })
  }

  /**
   * A live letter on the floor's side (ready_for_print, printing) that the print journal has on
   * paper is marked printed, with the journal's event, instead of being produced again: the
   * database was restored from before its print.
   */
  private async settledFromJournal(tx: Tx, letter: { id: string; status: ResumableStatus; livemode: boolean }): Promise<boolean> {
    const { journal } = this.options
    if (!journal || !letter.livemode || letter.status === 'received') return false
    // A store that does not answer leaves the letter to be resumed: its production job reads the
    // journal again before it prints, and fails (to be retried) while the store is away.
    const onPaper = await onPaperPerJournal(journal, letter.id).catch((err: unknown) => {
      this.log.warn({ err, letterId: letter.id }, 'could not read the print journal; the letter is resumed')
      return undefined
    })
    if (!onPaper) return false
    const { moved } = await moveLetter(tx, letter.id, { from: letter.status, to: 'printed', detail: onPaper.detail })
    if (moved) metrics.lettersSettledFromJournal.inc({ status: letter.status })
    return moved
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
