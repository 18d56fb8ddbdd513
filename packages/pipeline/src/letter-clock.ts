import { count, sql, type SQL } from 'drizzle-orm'
import { enqueue, letters, type Db, type LetterStatus, type Tx } from '@letters/db'
import { metrics } from '@letters/observability'
import type { Logger } from './queues.js'
import { BackgroundLoop } from './background-loop.js'
import { moveLetters } from '@letters/letters'

/** The events the clock writes: client-visible, they say what happened. */
export const RELEASED_DETAIL = 'Fecha de envío programada alcanzada: entra en producción'
export const TEST_MAILED_DETAIL = 'Carta de prueba: marcada como enviada; no se ha impreso ni enviado'

export interface LetterClockOptions {
  /** Pause between rounds (CLOCK_INTERVAL_MS): a letter is released at most this long after its sendAt, plus the round. */
  intervalMs: number
  /** A test letter is `mailed` this long after it was `printed` (TEST_MAILED_AFTER_MS). */
  testMailedAfterMs: number
  /** Letters moved per transaction. */
  batchSize?: number
}

export type ClockDutyName = 'released' | 'test_mailed'

/** What a round of one kind does: which letters are due since when, and the move they get. */
interface Duty {
  name: ClockDutyName
  from: LetterStatus
  to: LetterStatus
  detail: string
  /** Besides the status, which letters the duty is for. */
  only?: SQL
  /** The instant a letter of the duty became due; it is due once that has passed. */
  dueSince: (options: LetterClockOptions) => SQL
  /** What else the move writes in its transaction: the letters' next jobs. */
  then?: (tx: Tx, letterIds: string[]) => Promise<unknown>
}

const duties: Duty[] = [
  {
    // A scheduled letter at its sendAt enters the pipeline exactly as an unscheduled one does at creation.
    name: 'released',
    from: 'scheduled',
    to: 'received',
    detail: RELEASED_DETAIL,
    dueSince: () => sql`send_at`,
    then: (tx, letterIds) =>
      enqueue(
        tx,
        letterIds.map((letterId) => ({ name: 'normalize-address', data: { letterId } }) as const),
      ),
  },
  {
    // A test letter never reaches the floor; it is "posted" a while after it was rendered, so a client's integration sees the whole life.
    name: 'test_mailed',
    from: 'printed',
    to: 'mailed',
    detail: TEST_MAILED_DETAIL,
    only: sql`NOT livemode`,
    dueSince: (options) => sql`updated_at + make_interval(secs => ${options.testMailedAfterMs / 1000})`,
  },
]

const dutyWhere = (duty: Duty, options: LetterClockOptions, dueBefore: SQL) =>
  sql`status = ${duty.from} ${duty.only ? sql`AND ${duty.only}` : sql``} AND ${duty.dueSince(options)} <= ${dueBefore}`

/** How long past due a letter may wait before it counts as overdue: a few of the clock's rounds, at least 30 s. */
export const overdueAfterMs = (options: LetterClockOptions) => Math.max(30_000, 5 * options.intervalMs)

/**
 * Letters each duty should have moved more than overdueAfterMs ago and has not, by mode: none
 * while some gateway's clock runs. Read at scrape time (letters_clock_overdue).
 */
export async function overdueLetters(db: Db, options: LetterClockOptions): Promise<Array<{ kind: ClockDutyName; livemode: boolean; n: number }>> {
  const dueBefore = sql`now() - make_interval(secs => ${overdueAfterMs(options) / 1000})`
  const counts = await Promise.all(
    duties.map(async (duty) => {
      const rows = await db
        .select({ livemode: letters.livemode, n: count() })
        .from(letters)
        .where(dutyWhere(duty, options, dueBefore))
        .groupBy(letters.livemode)
      return rows.map((row) => ({ kind: duty.name, livemode: row.livemode, n: row.n }))
    }),
  )
  return counts.flat()
}

/**
 * The pipeline's time-driven moves, held in Postgres so a Redis that lost its data loses none:
 * scheduled letters whose sendAt has come go to `received` with their address jobs (through the
 * outbox), and test letters printed `testMailedAfterMs` ago go to `mailed`. Each round locks the
 * due letters it takes (SKIP LOCKED) and moves them with moveLetters from the status they are
 * expected in, a batch in a few statements, so any number of processes may run a clock, each
 * letter moves once, and a campaign's thousand letters due at one instant go within a second.
 */
export class LetterClock {
  private readonly loop: BackgroundLoop
  private readonly batchSize: number

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly options: LetterClockOptions,
  ) {
    this.batchSize = options.batchSize ?? 200
    // tick runs every due batch itself, so a round never asks for another at once.
    this.loop = new BackgroundLoop({ name: 'letter clock', log, tick: async () => void (await this.tick()), intervalMs: options.intervalMs })
  }

  /** One round of every duty, a batch at a time until none is due; returns how many letters moved. */
  async tick(): Promise<number> {
    let moved = 0
    for (const duty of duties) {
      for (;;) {
        const batch = await this.runBatch(duty)
        moved += batch.moved
        // A full batch says more may be due.
        if (batch.due < this.batchSize) break
      }
    }
    return moved
  }

  private runBatch(duty: Duty): Promise<{ due: number; moved: number }> {
    return this.db.transaction(async (tx) => {
      const due = await tx
        .select({ id: letters.id })
        .from(letters)
        .where(dutyWhere(duty, this.options, sql`now()`))
        .orderBy(duty.dueSince(this.options))
        .limit(this.batchSize)
        .for('update', { skipLocked: true })
      const moved = await moveLetters(
        tx,
        due.map((letter) => letter.id),
        { from: duty.from, to: duty.to, detail: duty.detail },
      )
      await duty.then?.(
        tx,
        moved.map((letter) => letter.id),
      )
      if (moved.length > 0) {
        metrics.clockMoves.inc({ kind: duty.name }, moved.length)
        this.log.info({ moved: moved.length, kind: duty.name }, 'letter clock moved letters')
      }
      return { due: due.length, moved: moved.length }
    })
  }

  start(): void {
    this.loop.start()
  }

  stop(): Promise<void> {
    return this.loop.stop()
  }
}
