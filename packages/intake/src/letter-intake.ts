import { SQLSTATE, sqlState, type Db } from '@letters/db'
import { metrics } from '@letters/observability'
import { DeadlineExceededError, type LetterOrder, type OrderOutcome } from './orders.js'
import { CommitUnknownError, storeOrders, type HeldOutcome } from './store-orders.js'

export interface IntakeOptions {
  /** Transactions of orders under way at once; more orders wait and go into the next one. */
  concurrentBatches: number
  /** Letters in one transaction at most (an order larger than this goes alone). */
  maxLettersPerBatch?: number
  /**
   * Longest a batch waits for an account's row, held by another transaction (an admin's
   * adjustment, another replica's batch), before its orders are stored one by one instead, so
   * that one account held up does not hold up the requests of every other account.
   */
  lockTimeoutMs?: number
  /** How long in all an order waits for its account's row before it fails (default 10 s, the statement timeout). */
  maxWaitForLockMs?: number
  /** Where a fault of the intake itself is reported (the requests it concerned get an error too). */
  log?: { error(details: object, message: string): void }
}

interface Pending {
  order: LetterOrder
  resolve: (outcome: OrderOutcome) => void
  reject: (error: unknown) => void
  /** Times it gave way alone to a lock held by another transaction. */
  heldUp: number
}

/**
 * An order abandoned by whoever answers its request, or past its time: rejected (nothing was
 * written), and not to be tried again.
 */
function expired(pending: Pending): boolean {
  const { deadline } = pending.order
  if (!deadline || !(deadline.abandoned || deadline.remaining() === 0)) return false
  deadline.abandon()
  pending.reject(new DeadlineExceededError())
  return true
}

/** How long after its row was last found held an account's orders keep going alone. */
const HELD_ACCOUNT_ASIDE_MS = 2000
const isHeldUp = (error: unknown) => sqlState(error) === SQLSTATE.lockNotAvailable

/**
 * Group commit for the letters of every request of this process. Orders that arrive while
 * earlier ones are being written wait (a millisecond or two) and are then stored together by
 * `storeOrders`, in one transaction: one lock of each account, a few round trips for dozens of
 * requests. Each order still gets its own outcome.
 *
 * A batch rolled back (a statement error, a dropped connection, a commit that failed and was
 * found rolled back, an account's row held longer than `lockTimeoutMs`) is stored again order by
 * order, outside the batch slots and at most `concurrentBatches` at a time, so one order that
 * cannot be written fails only its own request and one account held up does not stall the others. A batch whose
 * commit failed and whose outcome could not be found out is not stored again (that could charge
 * twice): its orders all fail.
 */
export class LetterIntake {
  private readonly queue: Pending[] = []
  private readonly alone: Pending[] = []
  private running = 0
  private runningAlone = 0
  private scheduled = false
  private readonly idle = new Set<() => void>()
  private readonly maxLettersPerBatch: number
  private readonly lockTimeoutMs: number
  private readonly maxHeldUp: number

  constructor(
    private readonly db: Db,
    private readonly options: IntakeOptions,
  ) {
    this.maxLettersPerBatch = options.maxLettersPerBatch ?? 1000
    this.lockTimeoutMs = options.lockTimeoutMs ?? 500
    this.maxHeldUp = Math.max(1, Math.ceil((options.maxWaitForLockMs ?? 10_000) / this.lockTimeoutMs))
  }

  /** Charges and stores an order with the others that arrive meanwhile; resolves with its own outcome. */
  submit(order: LetterOrder): Promise<OrderOutcome> {
    if (order.deadline) order.deadline.submitted = true
    return new Promise((resolve, reject) => {
      const pending: Pending = { order, resolve, reject, heldUp: 0 }
      // Abandoned while it waits its turn: answered now, not when its turn comes.
      order.deadline?.onAbandon(() => this.letGo(pending))
      this.queue.push(pending)
      this.schedule()
    })
  }

  /** An order abandoned while it waited (not in a transaction): taken out of line and rejected. */
  private letGo(pending: Pending): void {
    for (const line of [this.queue, this.alone]) {
      const at = line.indexOf(pending)
      if (at < 0) continue
      line.splice(at, 1)
      pending.reject(new DeadlineExceededError())
      this.settled()
      return
    }
  }

  /** Resolves once every order submitted so far has its outcome. */
  drained(): Promise<void> {
    if (this.isIdle()) return Promise.resolve()
    return new Promise((resolve) => this.idle.add(resolve))
  }

  private isIdle(): boolean {
    return this.queue.length === 0 && this.running === 0 && this.alone.length === 0 && this.runningAlone === 0
  }

  private settled(): void {
    if (!this.isIdle()) return
    for (const resolve of this.idle) resolve()
    this.idle.clear()
  }

  private schedule(): void {
    if (this.scheduled || this.running >= this.options.concurrentBatches || this.queue.length === 0) return
    this.scheduled = true
    // The requests whose bodies arrived in this turn of the event loop join the batch.
    setImmediate(() => {
      this.scheduled = false
      while (this.running < this.options.concurrentBatches && this.queue.length > 0) this.start(this.takeBatch())
    })
  }

  /** The oldest orders, up to the letter limit (an order above it goes alone); the abandoned ones are answered and dropped. */
  private takeBatch(): Pending[] {
    let letters = 0
    const batch: Pending[] = []
    let aside = false
    while (this.queue.length > 0) {
      const pending = this.queue[0]!
      if (batch.length > 0 && letters + pending.order.letters.length > this.maxLettersPerBatch) break
      this.queue.shift()
      if (expired(pending)) continue
      // An account found held a moment ago: its order waits alone, so the batch does not wait for it.
      if (this.isHeld(pending.order.accountId)) {
        this.alone.push(pending)
        aside = true
        continue
      }
      letters += pending.order.letters.length
      batch.push(pending)
    }
    if (aside) this.storeAlone()
    return batch
  }

  /** Accounts whose row another transaction held, until when their orders go alone rather than into a batch. */
  private readonly held = new Map<string, number>()

  private isHeld(accountId: string): boolean {
    const until = this.held.get(accountId)
    if (until === undefined) return false
    if (until > Date.now()) return true
    this.held.delete(accountId)
    return false
  }

  private start(batch: Pending[]): void {
    if (batch.length === 0) return this.settled()
    this.running++
    metrics.intakeBatchOrders.observe(batch.length)
    this.store(batch)
      .catch((error: unknown) => this.fault(batch, error))
      .finally(() => {
        this.running--
        this.schedule()
        this.settled()
      })
  }

  private async store(batch: Pending[]): Promise<void> {
    let outcomes: OrderOutcome[]
    try {
      outcomes = await storeOrders(
        this.db,
        batch.map((pending) => pending.order),
        { lockTimeoutMs: this.lockTimeoutMs },
      )
    } catch (error) {
      if (error instanceof CommitUnknownError || (batch.length === 1 && !isHeldUp(error))) {
        for (const pending of batch) pending.reject(error)
        return
      }
      // An account's row is held: the other accounts' orders are stored now, and only the held
      // account's wait, alone.
      if (isHeldUp(error) && (await this.storeSkippingHeld(batch))) return
      // Rolled back: each order again, alone.
      this.alone.push(...batch)
      this.storeAlone()
      return
    }
    batch.forEach((pending, n) => pending.resolve(outcomes[n]!))
  }

  /** The batch again, leaving out the orders of accounts whose rows are held; false if that failed too. */
  private async storeSkippingHeld(batch: Pending[]): Promise<boolean> {
    const open = batch.filter((pending) => !expired(pending))
    if (open.length === 0) return true
    let outcomes: Array<OrderOutcome | HeldOutcome>
    try {
      outcomes = await storeOrders(
        this.db,
        open.map((pending) => pending.order),
        { skipHeld: true },
      )
    } catch (error) {
      if (error instanceof CommitUnknownError) {
        for (const pending of open) pending.reject(error)
        return true
      }
      this.alone.push(...open)
      this.storeAlone()
      return true
    }
    open.forEach((pending, n) => {
      const outcome = outcomes[n]!
      if (outcome.outcome !== 'held') return pending.resolve(outcome)
      this.held.set(pending.order.accountId, Date.now() + HELD_ACCOUNT_ASIDE_MS)
      pending.heldUp++
      this.alone.push(pending)
    })
    this.storeAlone()
    return true
  }

  /**
   * The orders of rolled-back batches, one transaction each. An order whose account's row is still
   * held gives way again and goes to the back of the line, so that the orders of other accounts
   * behind it are stored meanwhile; after `maxHeldUp` times (as long as a statement may wait) it fails.
   */
  private storeAlone(): void {
    while (this.runningAlone < this.options.concurrentBatches && this.alone.length > 0) {
      const pending = this.alone.shift()!
      if (expired(pending)) {
        this.settled()
        continue
      }
      this.runningAlone++
      storeOrders(this.db, [pending.order], { lockTimeoutMs: this.lockTimeoutMs })
        .then(
          ([outcome]) => {
            // Its account's row is free again: its orders may join batches.
            this.held.delete(pending.order.accountId)
            pending.resolve(outcome!)
          },
          (error: unknown) => {
            if (isHeldUp(error)) {
              this.held.set(pending.order.accountId, Date.now() + HELD_ACCOUNT_ASIDE_MS)
              // Nothing was written (the lock was never had): past its time, the order is answered
              // as such, whichever hold-up it was; before, it is tried again up to maxHeldUp times.
              if (expired(pending)) return
              if (++pending.heldUp < this.maxHeldUp) return void this.alone.push(pending)
            }
            pending.reject(error)
          },
        )
        .finally(() => {
          this.runningAlone--
          this.storeAlone()
          this.settled()
        })
    }
  }

  /** A fault of the intake's own code: reported, and every request of the batch answered with it. */
  private fault(batch: Pending[], error: unknown): void {
    this.options.log?.error({ err: error, orders: batch.length }, 'the letter intake failed a batch')
    for (const pending of batch) pending.reject(error)
  }
}
