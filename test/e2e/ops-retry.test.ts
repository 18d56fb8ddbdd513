import { describe, expect } from 'vitest'
import { and, eq, sql } from 'drizzle-orm'
import { outbox } from '@letters/db'
import type { Printer } from '@letters/production-worker/printer'
import { SpoolPrinter } from '@letters/production-worker/printer'
import { ADMIN_TOKEN } from '../support/context.js'
import { metricSamples } from '../support/metrics.js'
import { it as base } from '../support/fixtures.js'
import { reachStatus, type Pipeline } from '../support/pipeline.js'
import { RETRIED_DETAIL } from '@letters/letters'

/** The floor's printer, out of paper until the test refills it; it counts what it printed. */
interface Floor {
  outOfPaper: boolean
  prints: Map<string, number>
}

/** The pipeline's production worker, printing with the floor's printer. */
const it = base.extend('floor', { scope: 'file' }, ({ pipeline }): Floor => {
  const spool = new SpoolPrinter(pipeline.spoolDir)
  const floor: Floor = { outOfPaper: true, prints: new Map() }
  const printer: Printer = {
    name: 'floor-1',
    async print(file) {
      if (floor.outOfPaper) throw new Error('floor-1: out of paper')
      // Slow enough for a second run to catch up with this one.
      await new Promise((resolve) => setTimeout(resolve, 100))
      await spool.print(file)
      floor.prints.set(file.name, (floor.prints.get(file.name) ?? 0) + 1)
    },
  }
  pipeline.startProductionWorker({ printer })
  return floor
})
it.override({ pipelineOptions: { label: 'opsretry', production: false } })

const productionJobs = (pipeline: Pipeline, id: string) =>
  pipeline.app.db
    .select()
    .from(outbox)
    .where(and(eq(outbox.jobName, 'produce-letter'), sql`${outbox.payload}->>'letterId' = ${id}`))

/**
 * A letter the floor gave up on while the printer was out of paper: its production job (the one
 * the outbox sent) queued again with a single attempt, so it fails at once instead of after the
 * queue's backoff. Returns the letter and that job, kept as failed in BullMQ.
 */
async function failedLetter(pipeline: Pipeline, floor: Floor) {
  floor.outOfPaper = true
  await pipeline.productionWorker!.worker.pause()
  const id = await pipeline.send()
  await reachStatus(pipeline, id, 'ready_for_print')
  const [row] = await productionJobs(pipeline, id)
  await expect
    .poll(async () => (await pipeline.app.db.select({ sentAt: outbox.sentAt }).from(outbox).where(eq(outbox.id, row!.id)))[0]?.sentAt, {
      timeout: 5000,
      interval: 20,
    })
    .not.toBeNull()
  const queue = pipeline.app.queues.production
  await queue.remove(row!.id)
  await queue.add('produce-letter', { letterId: id }, { jobId: row!.id, attempts: 1 })
  await pipeline.productionWorker!.worker.resume()
  await reachStatus(pipeline, id, 'failed')
  await expect.poll(async () => (await queue.getJob(row!.id))?.getState(), { timeout: 5000, interval: 20 }).toBe('failed')
  floor.outOfPaper = false
  return { id, jobId: row!.id }
}

/** Once no production job is waiting or running: whatever a retry queued has run. */
async function floorIdle(pipeline: Pipeline) {
  await expect
    .poll(async () => pipeline.app.queues.production.getJobCountByTypes('waiting', 'active', 'delayed', 'prioritized'), { timeout: 15_000, interval: 50 })
    .toBe(0)
  await expect
    .poll(
      async () =>
        (
          await pipeline.app.db
            .select()
            .from(outbox)
            .where(sql`${outbox.sentAt} IS NULL`)
        ).length,
      { timeout: 5000, interval: 50 },
    )
    .toBe(0)
}

/** letters_queue_jobs{queue="production",state="failed"}, as Prometheus scrapes it from the gateway. */
async function failedGauge(pipeline: Pipeline): Promise<number> {
  return Number((await metricSamples(pipeline.app, 'letters_queue_jobs'))['letters_queue_jobs{queue="production",state="failed"}'])
}

const printsOf = (floor: Floor, id: string) => [floor.prints.get(`${id}.card.pdf`) ?? 0, floor.prints.get(`${id}.envelope.pdf`) ?? 0]
const spooledOf = async (pipeline: Pipeline, id: string) => (await pipeline.spooled()).filter((name) => name.startsWith(id))

describe('POST /admin/cards/{id}/retry on the running pipeline', () => {
  it('prints a failed letter once it is retried, one set of files, without charging again; the failed-jobs gauge (ProductionJobsFailed) falls back to 0', async ({
    pipeline,
    floor,
  }) => {
    const { id } = await failedLetter(pipeline, floor)
    expect(await failedGauge(pipeline)).toBe(1)
    const balance = await pipeline.balance()
    const retried = await pipeline.admin('POST', `/admin/cards/${id}/retry`)
    expect(retried.statusCode, retried.body).toBe(200)
    // The answer is the letter as it stands once its new job is queued: the running production
    // worker may already have taken it (on a loaded machine, before the answer is read).
    expect(retried.json()).toMatchObject({ id, accountId: pipeline.account.id })
    expect(['ready_for_print', 'printing', 'printed']).toContain(retried.json<{ status: string }>().status)

    const printed = await reachStatus(pipeline, id, 'printed')
    expect(printed.events.slice(-4).map((event) => [event.status, event.detail])).toEqual([
      ['failed', 'La producción falló; operaciones revisará la carta'],
      ['ready_for_print', RETRIED_DETAIL],
      ['printing', 'En producción'],
      ['printed', 'Entregada a la impresora (floor-1): tarjeta y sobre'],
    ])
    await floorIdle(pipeline)
    expect(await spooledOf(pipeline, id)).toEqual([`${id}.card.pdf`, `${id}.envelope.pdf`])
    expect(printsOf(floor, id)).toEqual([1, 1])
    expect(await pipeline.balance()).toBe(balance)
    // The alert reads this gauge: the failed job the retry replaced no longer counts.
    expect(await failedGauge(pipeline)).toBe(0)
  })

  it('prints once when two retries arrive at once: one is taken, the other answers 409', async ({ pipeline, floor }) => {
    const { id } = await failedLetter(pipeline, floor)
    const answers = await Promise.all([pipeline.admin('POST', `/admin/cards/${id}/retry`), pipeline.admin('POST', `/admin/cards/${id}/retry`)])
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([200, 409])
    const printed = await reachStatus(pipeline, id, 'printed')
    await floorIdle(pipeline)
    expect(await productionJobs(pipeline, id)).toHaveLength(2)
    expect((await pipeline.card(id)).events).toEqual(printed.events)
    expect(printed.events.filter((event) => event.status === 'printed')).toHaveLength(1)
    expect(await spooledOf(pipeline, id)).toEqual([`${id}.card.pdf`, `${id}.envelope.pdf`])
    expect(printsOf(floor, id)).toEqual([1, 1])
  })

  it('prints once when ops retry through the API and the dashboard’s retry button at once', async ({ pipeline, floor }) => {
    const { id, jobId } = await failedLetter(pipeline, floor)
    const [api, dashboard] = await Promise.all([
      pipeline.admin('POST', `/admin/cards/${id}/retry`),
      pipeline.app.inject({ method: 'PUT', url: `/ops/queues/api/queues/production/${jobId}/retry`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }),
    ])
    expect(dashboard.statusCode, dashboard.body).toBe(204)
    // The API's retry finds the letter failed (200) or already back in production (409): either way one print.
    expect([200, 409]).toContain(api.statusCode)
    await reachStatus(pipeline, id, 'printed')
    await floorIdle(pipeline)
    expect((await pipeline.card(id)).events.filter((event) => event.status === 'printed')).toHaveLength(1)
    expect(await spooledOf(pipeline, id)).toEqual([`${id}.card.pdf`, `${id}.envelope.pdf`])
    expect(printsOf(floor, id)).toEqual([1, 1])
  })
})
