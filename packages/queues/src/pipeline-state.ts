import { sql } from 'drizzle-orm'
import type { Db } from '@letters/db'
import { metrics } from '@letters/observability'
import type { Queues } from './queues.js'

/** The statuses a letter passes through on its own; one that stays in them too long is stuck. */
export const inPipelineStatuses = ['received', 'ready_for_print', 'printing'] as const

const jobStates = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'completed', 'failed'] as const

/**
 * Reads the pipeline's state into the scrape-time gauges: jobs per queue and state, the outbox
 * backlog and its age, and the letters stuck for longer than `stuckAfterMs` by status. Redis
 * being down leaves the queue gauges as they were and still reads Postgres.
 */
export async function refreshPipelineGauges(db: Db, queues: Queues, stuckAfterMs: number): Promise<void> {
  const [outbox] = await db.execute<{ pending: number; oldest_seconds: number }>(sql`
    SELECT count(*)::int AS pending, COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8 AS oldest_seconds
    FROM outbox WHERE sent_at IS NULL`)
  metrics.outboxPending.set(outbox?.pending ?? 0)
  metrics.outboxOldestSeconds.set(outbox?.oldest_seconds ?? 0)

  const stuck = await db.execute<{ status: string; n: number }>(sql`
    SELECT status, count(*)::int AS n FROM letters
    WHERE status IN ('received', 'ready_for_print', 'printing') AND updated_at < now() - make_interval(secs => ${stuckAfterMs / 1000})
    GROUP BY status`)
  for (const status of inPipelineStatuses) metrics.lettersStuck.set({ status }, stuck.find((row) => row.status === status)?.n ?? 0)

  await Promise.all(
    Object.entries(queues).map(async ([queue, handle]) => {
      const counts = await handle.getJobCounts(...jobStates).catch(() => undefined)
      if (!counts) return
      for (const state of jobStates) metrics.queueJobs.set({ queue, state }, counts[state] ?? 0)
    }),
  )
}
