import { count, isNull, sql } from 'drizzle-orm'
import { letters, outbox as outboxTable, type Db } from '@letters/db'
import { metrics } from '@letters/observability'
import { overdueLetters, type LetterClockOptions } from './letter-clock.js'
import type { Logger, Queues } from './queues.js'
import { resumableStatuses, withoutProgressSql } from '@letters/letters'

const CONNECTION_STATES = ['active', 'idle', 'idle in transaction', 'other'] as const

const jobStates = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'completed', 'failed'] as const

/**
 * Reads the pipeline's state into the scrape-time gauges: jobs per queue and state, the outbox
 * backlog and its age, the letters stuck for longer than `stuckAfterMs` by status and mode, and
 * the Postgres server's connections against its max_connections. Postgres
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
  // Raw SQL kept: Postgres's own statistics view and setting, which the schema does not describe.
  const connections = await db.execute<{ state: string; n: number }>(
    sql`SELECT CASE WHEN state IN ('active', 'idle', 'idle in transaction') THEN state ELSE 'other' END AS state, count(*)::int AS n
        FROM pg_stat_activity WHERE backend_type = 'client backend' GROUP BY 1`,
  )
  const [limit] = await db.execute<{ max: number }>(sql`SELECT current_setting('max_connections')::int AS max`)
  for (const state of CONNECTION_STATES) metrics.postgresConnections.set({ state }, connections.find((row) => row.state === state)?.n ?? 0)
  metrics.postgresMaxConnections.set(limit?.max ?? 0)
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
