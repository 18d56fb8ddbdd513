import { isConnectionError, sqlState, SQLSTATE, type Db } from '@letters/db'
import { metrics } from '@letters/observability'
import type { QrRequest, QrRequestRecord } from './qr-scans.js'
import { recordQrRequests } from './qr-scans.js'

export interface QrScanJournalOptions {
  /** Requests waiting to be written at most; past it, a request waits for room (nothing is dropped). */
  maxPending?: number
  /** Requests written in one transaction at most. */
  maxBatch?: number
  /** The pause before a batch that failed for a passing reason is written again; it doubles up to ten times this. */
  retryMs?: number
  log: { warn(details: object, message: string): void; error(details: object, message: string): void }
}

/** Failures that pass: the connection, a lock that timed out or a deadlock Postgres broke, a statement cancelled under load. */
function passing(error: unknown): boolean {
  const state = sqlState(error)
  return (
    isConnectionError(error) ||
    state === SQLSTATE.deadlockDetected ||
    state === SQLSTATE.lockNotAvailable ||
    state === SQLSTATE.queryCanceled ||
    state === SQLSTATE.tooManyConnections
  )
}

/**
 * The requests for QR links of this process, written behind their answers: the redirect waits
 * only for the lookup of its link (qrLinkTarget), and the requests that arrive meanwhile are
 * written together, a batch at a time, by recordQrRequests, which decides each scan's kind (the
 * per-minute limit holds however the requests were batched, and across processes). What it
 * costs: the scans of a process that is killed outright (not stopped) in the few milliseconds
 * between their answer and their batch's commit are not counted. A stop writes them first
 * (close).
 *
 * A batch that fails for a passing reason (a dropped connection, a deadlock) is written again,
 * first in line; requests keep queueing behind it up to `maxPending`, past which each new one
 * waits for room before it is answered, so a long outage slows the links rather than losing
 * their counts. A batch that fails otherwise would fail again: it is reported and dropped.
 */
export class QrScanJournal {
  private pending: QrRequestRecord[] = []
  private writing: Promise<void> | undefined
  private readonly roomWaiters: Array<() => void> = []
  private readonly idleWaiters: Array<() => void> = []
  private stopped = false
  private readonly maxPending: number
  private readonly maxBatch: number
  private readonly retryMs: number

  constructor(
    private readonly db: Db,
    private readonly options: QrScanJournalOptions,
  ) {
    this.maxPending = options.maxPending ?? 20_000
    this.maxBatch = options.maxBatch ?? 500
    this.retryMs = options.retryMs ?? 100
  }

  /** Queues a request for the link `code`; resolves at once, or once there is room when the journal is full. */
  async record(code: string, request: QrRequest, at = new Date()): Promise<void> {
    while (this.pending.length >= this.maxPending) await new Promise<void>((resolve) => this.roomWaiters.push(resolve))
    this.pending.push({ code, request, at })
    this.writing ??= this.writeAll()
  }

  /** Requests queued and not yet written. */
  get size(): number {
    return this.pending.length
  }

  /** Resolves once every request queued so far is written (or dropped as unwritable). */
  drained(): Promise<void> {
    if (!this.writing) return Promise.resolve()
    return new Promise((resolve) => this.idleWaiters.push(resolve))
  }

  /** Writes what is queued, for at most `withinMs`, then stops; what is still unwritten then is reported and left. */
  async close(withinMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), withinMs)))
    const outcome = await Promise.race([this.drained(), late])
    clearTimeout(timer)
    this.stopped = true
    if (outcome === 'late')
      this.options.log.error({ unwritten: this.pending.length }, 'QR link requests left unwritten at the stop: their scans are not counted')
  }

  private async writeAll(): Promise<void> {
    // The requests of this turn of the event loop join the first batch.
    await new Promise((resolve) => setImmediate(resolve))
    let pauseMs = this.retryMs
    while (this.pending.length > 0 && !this.stopped) {
      const batch = this.pending.slice(0, this.maxBatch)
      try {
        const kinds = await recordQrRequests(this.db, batch)
        for (const kind of kinds) if (kind) metrics.qrScans.inc({ kind })
        pauseMs = this.retryMs
      } catch (error) {
        if (passing(error) && !this.stopped) {
          this.options.log.warn({ err: error, requests: batch.length }, 'QR link requests not written yet; trying again')
          await new Promise((resolve) => setTimeout(resolve, pauseMs))
          pauseMs = Math.min(pauseMs * 2, this.retryMs * 10)
          continue
        }
        this.options.log.error({ err: error, requests: batch.length }, 'QR link requests that cannot be written, dropped: their scans are not counted')
      }
      this.pending.splice(0, batch.length)
      for (const wake of this.roomWaiters.splice(0, batch.length)) wake()
    }
    this.writing = undefined
    for (const resolve of this.idleWaiters.splice(0)) resolve()
  }
}
