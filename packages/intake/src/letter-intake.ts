import type { Db } from '@letters/db'
import { metrics } from '@letters/observability'
import type { LetterOrder, OrderOutcome } from './orders.js'
import { CommitUnknownError, storeOrders } from './store-orders.js'

export interface IntakeOptions {
  /** Transactions of orders under way at once; more orders wait and go into the next one. */
  concurrentBatches?: number
  /** Letters in one transaction at most (an order larger than this goes alone). */
  maxLettersPerBatch?: number
}

interface Pending {
  order: LetterOrder
  resolve: (outcome: OrderOutcome) => void
  reject: (error: unknown) => void
}

/**
 * Group commit for the letters of every request of this process. Orders that arrive while
 * earlier ones are being written wait (a millisecond or two) and are then stored together by
 * `storeOrders`, in one transaction: one lock of each account, a few round trips for dozens of
 * requests. Each order still gets its own outcome.
 *
 * A batch whose transaction fails before committing (a statement error, a dropped connection)
 * is rolled back whole; each of its orders is then stored again alone, so one order that
 * cannot be written fails only its own request. A batch that fails while committing may have
 * committed: its orders are not stored again (that could charge twice) and all fail.
 */
export class LetterIntake {
  private readonly queue: Pending[] = []
  private running = 0
  private scheduled = false
  private readonly idle = new Set<() => void>()
  private readonly concurrentBatches: number
  private readonly maxLettersPerBatch: number

  constructor(
    private readonly db: Db,
    options: IntakeOptions = {},
  ) {
    this.concurrentBatches = options.concurrentBatches ?? 2
    this.maxLettersPerBatch = options.maxLettersPerBatch ?? 1000
  }

  /** Charges and stores an order with the others that arrive meanwhile; resolves with its own outcome. */
  submit(order: LetterOrder): Promise<OrderOutcome> {
    return new Promise((resolve, reject) => {
      this.queue.push({ order, resolve, reject })
      this.schedule()
    })
  }

  /** Resolves once every order submitted so far has its outcome. */
  drained(): Promise<void> {
    if (this.queue.length === 0 && this.running === 0) return Promise.resolve()
    return new Promise((resolve) => this.idle.add(resolve))
  }

  private schedule(): void {
    if (this.scheduled || this.running >= this.concurrentBatches || this.queue.length === 0) return
    this.scheduled = true
    // The requests whose bodies arrived in this turn of the event loop join the batch.
    setImmediate(() => {
      this.scheduled = false
      while (this.running < this.concurrentBatches && this.queue.length > 0) this.start(this.takeBatch())
    })
  }

  /** The oldest orders, up to the letter limit (an order above it goes alone). */
  private takeBatch(): Pending[] {
    let letters = 0
    let count = 0
    for (const pending of this.queue) {
      if (count > 0 && letters + pending.order.letters.length > this.maxLettersPerBatch) break
      letters += pending.order.letters.length
      count++
    }
    return this.queue.splice(0, count)
  }

  private start(batch: Pending[]): void {
    this.running++
    metrics.intakeBatchOrders.observe(batch.length)
    this.store(batch)
      .catch(() => {})
      .finally(() => {
        this.running--
        this.schedule()
        if (this.running > 0 || this.queue.length > 0) return
        for (const resolve of this.idle) resolve()
        this.idle.clear()
      })
  }

  private async store(batch: Pending[]): Promise<void> {
    let outcomes: OrderOutcome[]
    try {
      outcomes = await storeOrders(
        this.db,
        batch.map((pending) => pending.order),
      )
    } catch (error) {
      if (batch.length === 1 || error instanceof CommitUnknownError) {
        for (const pending of batch) pending.reject(error)
        return
      }
      // Rolled back: each order again, alone, so that only the one at fault fails.
      await Promise.all(
        batch.map((pending) =>
          storeOrders(this.db, [pending.order]).then(
            ([outcome]) => pending.resolve(outcome!),
            (alone: unknown) => pending.reject(alone),
          ),
        ),
      )
      return
    }
    batch.forEach((pending, n) => pending.resolve(outcomes[n]!))
  }
}
