import { sql } from 'drizzle-orm'
import { enqueue, moveLetter, type Db, type LetterStatus, type Tx } from '@letters/db'
import { metrics } from '@letters/observability'
import type { Logger } from './queues.js'
import { Pause } from './timing.js'

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

/** What a round of one kind does: which letters are due, and the move each gets. */
interface Duty {
  name: 'released' | 'test_mailed'
  from: LetterStatus
  to: LetterStatus
  detail: string
  due: (options: LetterClockOptions) => ReturnType<typeof sql>
  /** What else the move writes in its transaction: the next job. */
  then?: (tx: Tx, letterId: string) => Promise<unknown>
}

const duties: Duty[] = [
  {
    // A scheduled letter at its sendAt enters the pipeline exactly as an unscheduled one does at creation.
    name: 'released',
    from: 'scheduled',
    to: 'received',
    detail: RELEASED_DETAIL,
    due: () => sql`status = 'scheduled' AND send_at <= now() ORDER BY send_at`,
    then: (tx, letterId) => enqueue(tx, { name: 'normalize-address', data: { letterId } }),
  },
  {
    // A test letter never reaches the floor; it is "posted" a while after it was rendered, so a client's integration sees the whole life.
    name: 'test_mailed',
    from: 'printed',
    to: 'mailed',
    detail: TEST_MAILED_DETAIL,
    due: (options) => sql`status = 'printed' AND NOT livemode AND updated_at <= now() - make_interval(secs => ${options.testMailedAfterMs / 1000}) ORDER BY updated_at`,
  },
]

/**
 * The pipeline's time-driven moves, held in Postgres so a Redis that lost its data loses none:
 * scheduled letters whose sendAt has come go to `received` with their address job (through the
 * outbox), and test letters printed `testMailedAfterMs` ago go to `mailed`. Each round locks the
 * due letters it takes (SKIP LOCKED) and moves them with moveLetter from the status they are
 * expected in, so any number of processes may run a clock and each letter moves once.
 */
export class LetterClock {
  private running = false
  private loop: Promise<void> | undefined
  private readonly pause = new Pause()
  private readonly batchSize: number

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly options: LetterClockOptions,
  ) {
    this.batchSize = options.batchSize ?? 200
  }

  /** One round of every duty, a batch at a time until none is due; returns how many letters moved. */
  async tick(): Promise<number> {
    let moved = 0
    for (const duty of duties) {
      for (;;) {
        const batch = await this.runBatch(duty)
        moved += batch
        if (batch < this.batchSize) break
      }
    }
    return moved
  }

  private runBatch(duty: Duty): Promise<number> {
    return this.db.transaction(async (tx) => {
      const due = await tx.execute<{ id: string }>(sql`
        SELECT id FROM letters WHERE ${duty.due(this.options)}
        LIMIT ${this.batchSize}
        FOR UPDATE SKIP LOCKED`)
      let moved = 0
      for (const { id } of due) {
        const move = await moveLetter(tx, id, { from: [duty.from], to: duty.to, detail: duty.detail })
        if (!move.moved) continue
        await duty.then?.(tx, id)
        moved++
      }
      if (moved > 0) {
        metrics.clockMoves.inc({ kind: duty.name }, moved)
        this.log.info({ moved, kind: duty.name }, 'letter clock moved letters')
      }
      return moved
    })
  }

  start(): void {
    if (this.running) return
    this.running = true
    this.loop = this.run()
  }

  async stop(): Promise<void> {
    this.running = false
    this.pause.end()
    await this.loop
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        await this.tick()
      } catch (error) {
        this.log.warn({ err: error }, 'letter clock round failed; the next one tries again')
      }
      if (this.running) await this.pause.for(this.options.intervalMs)
    }
  }
}
