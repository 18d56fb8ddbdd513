import { BullMQAdapter } from '@bull-board/api/bullMQAdapter'
import type { Job, Queue } from 'bullmq'
import type { FastifyBaseLogger } from 'fastify'
import type { Db } from '@letters/db'
import { testModeSubjects } from './test-mode-jobs.js'

/** What the dashboard adds to the name of a test mode's job. */
const TEST_JOB_MARK = ' (prueba)'

const subjectOf = (job: Job): string | undefined => {
  const data = job.data as { letterId?: unknown; eventId?: unknown } | null
  const id = data?.letterId ?? data?.eventId
  return typeof id === 'string' ? id : undefined
}

/**
 * Bull Board's view of one of our queues, with test mode's jobs named apart: a test letter's
 * address and production jobs, and deliveries to a test webhook endpoint, show as
 * `produce-letter (prueba)`. Only the copy read for the page is renamed, never the job in Redis.
 * One query per page; when Postgres does not answer, the jobs are shown unmarked rather than not
 * at all.
 */
export class TestModeAwareAdapter extends BullMQAdapter {
  constructor(
    queue: Queue,
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
  ) {
    super(queue, {
      description: `Los trabajos de cartas de prueba (y de webhooks de prueba) llevan «${TEST_JOB_MARK.trim()}» en el nombre: nunca llegan a la impresora`,
    })
  }

  override async getJob(id: string): Promise<Job | undefined> {
    const job = await super.getJob(id)
    if (job) await this.markTestJobs([job])
    return job
  }

  override async getJobs(...range: Parameters<BullMQAdapter['getJobs']>): Promise<Job[]> {
    const jobs = await super.getJobs(...range)
    await this.markTestJobs(jobs)
    return jobs
  }

  private async markTestJobs(jobs: Job[]): Promise<void> {
    try {
      const test = await testModeSubjects(
        this.db,
        jobs.map(subjectOf).filter((id) => id !== undefined),
      )
      for (const job of jobs) if (test.has(subjectOf(job) ?? '')) job.name += TEST_JOB_MARK
    } catch (err) {
      this.log.warn({ err }, 'queue dashboard: could not tell test jobs apart; shown unmarked')
    }
  }
}
