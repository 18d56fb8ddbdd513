import { describe, expect } from 'vitest'
import { eq } from 'drizzle-orm'
import { letters, outbox } from '@letters/db'
import type { Printer } from '@letters/production-worker/printer'
import { SpoolPrinter } from '@letters/production-worker/printer'
import { ADMIN_TOKEN } from '../support/context.js'
import { it as base } from '../support/fixtures.js'
import { reachStatus, type Pipeline } from '../support/pipeline.js'

/**
 * The pipeline's production worker, with the floor's printer: out of paper until the test refills
 * it, its envelope feeder may jam; `prints` counts how many times each file reached it.
 */
const it = base.extend('floor', { scope: 'file' }, ({ pipeline }) => {
  const spool = new SpoolPrinter(pipeline.spoolDir)
  const floor = { outOfPaper: true, envelopeJam: false, prints: new Map<string, number>() }
  const printer: Printer = {
    name: 'floor-1',
    async print(file) {
      if (floor.outOfPaper) throw new Error('floor-1: out of paper')
      if (floor.envelopeJam && file.name.endsWith('.envelope.pdf')) throw new Error('floor-1: envelope feeder jammed')
      await spool.print(file)
      floor.prints.set(file.name, (floor.prints.get(file.name) ?? 0) + 1)
    },
  }
  pipeline.startProductionWorker({ printer })
  return floor
})
it.override({ pipelineOptions: { label: 'retries', production: false } })

/**
 * A letter whose production job is queued with three attempts 20 ms apart: the same job the
 * outbox sends, with the queue's backoff (5 s doubling) shortened for the test.
 */
async function letterWithQuickRetries(pipeline: Pipeline, prepare?: (id: string) => Promise<unknown>) {
  await pipeline.productionWorker!.worker.pause()
  const id = await pipeline.send()
  await reachStatus(pipeline, id, 'ready_for_print')
  await prepare?.(id)
  const [row] = (await pipeline.app.db.select().from(outbox).where(eq(outbox.jobName, 'produce-letter'))).filter((job) => job.payload.letterId === id)
  await expect
    .poll(async () => (await pipeline.app.db.select({ sentAt: outbox.sentAt }).from(outbox).where(eq(outbox.id, row!.id)))[0]?.sentAt, {
      timeout: 5000,
      interval: 20,
    })
    .not.toBeNull()
  const queue = pipeline.app.queues.production
  await queue.remove(row!.id)
  await queue.add('produce-letter', { letterId: id }, { jobId: row!.id, attempts: 3, backoff: { type: 'fixed', delay: 20 } })
  await pipeline.productionWorker!.worker.resume()
  return { id, jobId: row!.id }
}

describe('when the printer keeps failing', () => {
  it('retries, then marks the letter failed for ops and keeps the job; an ops retry prints it', async ({ pipeline, floor }) => {
    floor.outOfPaper = true
    const { id, jobId } = await letterWithQuickRetries(pipeline)
    const failed = await reachStatus(pipeline, id, 'failed')
    expect(failed.events.map((event) => [event.status, event.detail])).toEqual([
      ['received', null],
      ['ready_for_print', expect.stringMatching(/^Dirección corregida/)],
      ['printing', 'En producción'],
      ['printing', 'Intento 1 de 3 fallido; se reintentará'],
      ['printing', 'En producción de nuevo: el intento anterior no terminó'],
      ['printing', 'Intento 2 de 3 fallido; se reintentará'],
      ['printing', 'En producción de nuevo: el intento anterior no terminó'],
      ['failed', 'La producción falló tras 3 intentos; operaciones revisará la carta'],
    ])
    // What ops see in the queue: the job kept, with the technical reason the client is not shown.
    const job = await pipeline.app.queues.production.getJob(jobId)
    await expect.poll(() => job!.getState(), { timeout: 5000, interval: 20 }).toBe('failed')
    const kept = await pipeline.app.queues.production.getJob(jobId)
    expect(kept?.failedReason).toBe('floor-1: out of paper')
    expect(kept?.attemptsMade).toBe(3)
    expect((await pipeline.client('DELETE', `/cards/${id}`)).statusCode).toBe(409)

    // The retry button of the dashboard (/ops/queues): the same job runs again.
    floor.outOfPaper = false
    const retried = await pipeline.app.inject({
      method: 'PUT',
      url: `/ops/queues/api/queues/production/${jobId}/retry`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    })
    expect(retried.statusCode, retried.body).toBe(204)
    const printed = await reachStatus(pipeline, id, 'printed')
    expect(printed.events.slice(-2).map((event) => [event.status, event.detail])).toEqual([
      ['printing', 'En producción de nuevo: reintento pedido por operaciones'],
      ['printed', 'Entregada a la impresora (floor-1): tarjeta y sobre'],
    ])
    expect(await pipeline.spooled()).toEqual(expect.arrayContaining([`${id}.card.pdf`, `${id}.envelope.pdf`]))
  })

  it('prints only the envelope on the ops retry of a letter that failed after its card was printed', async ({ pipeline, floor }) => {
    floor.outOfPaper = false
    floor.envelopeJam = true
    const { id, jobId } = await letterWithQuickRetries(pipeline)
    const failed = await reachStatus(pipeline, id, 'failed')
    expect(failed.events.filter((event) => event.status === 'printing')).toHaveLength(5)
    // Each attempt found the card already handed over and tried only the envelope.
    expect(floor.prints.get(`${id}.card.pdf`)).toBe(1)

    floor.envelopeJam = false
    const retried = await pipeline.app.inject({
      method: 'PUT',
      url: `/ops/queues/api/queues/production/${jobId}/retry`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    })
    expect(retried.statusCode, retried.body).toBe(204)
    await reachStatus(pipeline, id, 'printed')
    expect([floor.prints.get(`${id}.card.pdf`), floor.prints.get(`${id}.envelope.pdf`)]).toEqual([1, 1])
  })

  it('fails at once, without retrying, a letter that can never be printed', async ({ pipeline, floor }) => {
    floor.outOfPaper = false
    const { id, jobId } = await letterWithQuickRetries(pipeline, (letterId) =>
      pipeline.app.db.update(letters).set({ fontName: 'gotica' }).where(eq(letters.id, letterId)),
    )
    const failed = await reachStatus(pipeline, id, 'failed')
    expect(failed.events.map((event) => event.status)).toEqual(['received', 'ready_for_print', 'printing', 'failed'])
    expect(failed.events.at(-1)?.detail).toBe('La producción falló; operaciones revisará la carta')
    await expect
      .poll(async () => (await pipeline.app.queues.production.getJob(jobId))?.failedReason, { timeout: 5000, interval: 20 })
      .toMatch(/unknown font gotica/)
    expect((await pipeline.app.queues.production.getJob(jobId))?.attemptsMade).toBe(1)
  })
})
