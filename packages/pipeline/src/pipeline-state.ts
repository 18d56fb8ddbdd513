import { count, isNull, sql } from 'drizzle-orm'
import { letters, outbox as outboxTable, type Db } from '@letters/db'
import { metrics } from '@letters/observability'
import { overdueLetters, type LetterClockOptions } from './letter-clock.js'
import type { Logger, Queues } from './queues.js'
import { resumableStatuses, withoutProgressSql } from '@letters/letters'

const jobStates = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'completed', 'failed'] as const

/**
 * Reads the pipeline's state into the scrape-time gauges: jobs per queue and state, the outbox
 * backlog and its age, and the letters stuck for longer than `stuckAfterMs` by status and mode. Postgres
 * or Redis down leaves its gauges as they were (and is logged): the scrape still serves the
 * rest, which is when ops need it most.
 */
export async function refreshPipelineGauges(db: Db, queues: Queues, options: { stuckAfterMs: number; clock: LetterClockOptions }, log: Logger): Promise<void> {
  await Promise.all([
    refreshFromPostgres(db, options).catch((err: unknown) => log.warn({ err }, 'pipeline gauges: Postgres did not answer')),
    refreshFromRedis(queues),
  ])
}

async function refreshFromPostgres(db: Db, { stuckAfterMs, clock }: { stuckAfterMs: number; clock: LetterClockOptions }): Promise<void> {
  const [outbox] = await db
    .select({ pending: count(), oldestSeconds: sql<number>`COALESCE(EXTRACT(EPOCH FROM now() - min(${outboxTable.createdAt})), 0)::float8` })
    .from(outboxTable)
    .where(isNull(outboxTable.sentAt))
  const stuck = await db
    .select({ status: letters.status, livemode: letters.livemode, n: count() })
    .from(letters)
    .where(withoutProgressSql('letters', stuckAfterMs))
    .groupBy(letters.status, letters.livemode)
  const overdue = await overdueLetters(db, clock)
  for (const kind of ['released', 'test_mailed'] as const) {
    for (const livemode of [true, false]) {
      metrics.clockOverdue.set({ kind, mode: livemode ? 'live' : 'test' }, overdue.find((row) => row.kind === kind && row.livemode === livemode)?.n ?? 0)
    }
  }
  metrics.outboxPending.set(outbox?.pending ?? 0)
  metrics.outboxOldestSeconds.set(outbox?.oldestSeconds ?? 0)
  for (const status of resumableStatuses) {
    for (const livemode of [true, false]) {
      metrics.lettersStuck.set({ status, mode: livemode ? 'live' : 'test' }, stuck.find((row) => row.status === status && row.livemode === livemode)?.n ?? 0)
    }
  }
}

async function refreshFromRedis(queues: Queues): Promise<void> {
  await Promise.all(
    Object.entries(queues).map(async ([queue, handle]) => {
      const counts = await handle.getJobCounts(...jobStates).catch(() => undefined)
      if (!counts) return
      for (const state of jobStates) metrics.queueJobs.set({ queue, state }, counts[state] ?? 0)
    }),
  )
}
