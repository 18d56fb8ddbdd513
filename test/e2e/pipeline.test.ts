import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect } from 'vitest'
import { eq } from 'drizzle-orm'
import { ledgerEntries, outbox } from '@letters/db'
import { compact, pdfText } from '../support/pdf.js'
import { reachStatus, type Pipeline } from '../support/pipeline.js'
import { it as base } from '../support/fixtures.js'

const it = base.extend({ pipelineOptions: { label: 'pipeline' } })

const ledgerOf = (pipeline: Pipeline, letterId: string) => pipeline.app.db.select().from(ledgerEntries).where(eq(ledgerEntries.letterId, letterId))
const productionJobOf = async (pipeline: Pipeline, letterId: string) => {
  const rows = await pipeline.app.db.select().from(outbox).where(eq(outbox.jobName, 'produce-letter'))
  return rows.filter((row) => row.payload.letterId === letterId)
}

describe('a letter through the whole pipeline', () => {
  it('goes received → ready_for_print → printing → printed within seconds, its PDFs in the spool, then mailed', async ({ pipeline }) => {
    const started = Date.now()
    const id = await pipeline.send()
    const printed = await reachStatus(pipeline, id, 'printed')
    const seconds = (Date.now() - started) / 1000
    expect(seconds).toBeLessThan(10)
    expect(printed.events.map((event) => event.status)).toEqual(['received', 'ready_for_print', 'printing', 'printed'])
    expect(await pipeline.spooled()).toEqual([`${id}.card.pdf`, `${id}.envelope.pdf`])

    const card = await pdfText(await readFile(join(pipeline.spoolDir, `${id}.card.pdf`)))
    expect(card.text).toBe(compact('Gracias por tu pedido, Lucía. ¡Hasta pronto! Papelería Luna'))
    // The envelope carries the normalized address, not the one sent, without a country line
    // (Spain to Spain), and the letter's code under its barcode.
    const envelope = await pdfText(await readFile(join(pipeline.spoolDir, `${id}.envelope.pdf`)))
    expect(envelope.text).toBe(
      compact(`Papelería Luna Lucía García Calle Mayor 1 28013 Madrid ${(await pipeline.client('GET', `/cards/${id}`)).json<{ code: string }>().code}`),
    )

    const mailed = await pipeline.admin('POST', `/admin/cards/${id}/mailed`)
    expect(mailed.json()).toMatchObject({ status: 'mailed' })
    expect((await ledgerOf(pipeline, id)).map((entry) => [entry.kind, entry.amount])).toEqual([['charge', -3]])
  })

  it('prints twenty letters sent at once, each exactly once', async ({ pipeline }) => {
    const ids = await Promise.all(Array.from({ length: 20 }, (_, i) => pipeline.send({ message: `Carta número ${i}` })))
    for (const id of ids) {
      const card = await reachStatus(pipeline, id, 'printed', 20_000)
      expect(card.events.map((event) => event.status)).toEqual(['received', 'ready_for_print', 'printing', 'printed'])
      expect(await productionJobOf(pipeline, id)).toHaveLength(1)
    }
    const spool = await pipeline.spooled()
    for (const id of ids) expect(spool).toEqual(expect.arrayContaining([`${id}.card.pdf`, `${id}.envelope.pdf`]))
  })

  it('changes nothing when a printed letter’s job runs again, under a new id or its own', async ({ pipeline }) => {
    const id = await pipeline.send()
    const before = await reachStatus(pipeline, id, 'printed')
    const queue = pipeline.app.queues.production
    const again = await queue.add('produce-letter', { letterId: id }, { jobId: crypto.randomUUID() })
    await expect.poll(async () => (await queue.getJob(again.id!))?.returnvalue, { timeout: 10_000, interval: 50 }).toBe('already_done')
    // The outbox sending the same row again: BullMQ still holds that job id and adds nothing.
    const [row] = await productionJobOf(pipeline, id)
    await pipeline.app.db.update(outbox).set({ sentAt: null }).where(eq(outbox.id, row!.id))
    await expect
      .poll(async () => (await pipeline.app.db.select({ sentAt: outbox.sentAt }).from(outbox).where(eq(outbox.id, row!.id)))[0]?.sentAt, {
        timeout: 5000,
        interval: 50,
      })
      .not.toBeNull()
    expect(await (await queue.getJob(row!.id))?.getState()).toBe('completed')
    expect(await pipeline.card(id)).toEqual(before)
    expect((await ledgerOf(pipeline, id)).map((entry) => entry.kind)).toEqual(['charge'])
  })

  it('rejects an undeliverable address and refunds it exactly once, printing nothing', async ({ pipeline }) => {
    const before = await pipeline.balance()
    const id = await pipeline.send({ address: '...' })
    const rejected = await reachStatus(pipeline, id, 'address_rejected')
    expect(rejected.events.map((event) => event.status)).toEqual(['received', 'address_rejected'])
    expect(await pipeline.balance()).toBe(before)
    expect((await ledgerOf(pipeline, id)).map((entry) => [entry.kind, entry.amount])).toEqual([
      ['charge', -3],
      ['refund', 3],
    ])
    expect(await productionJobOf(pipeline, id)).toEqual([])
    expect(await pipeline.spooled()).not.toContain(`${id}.card.pdf`)
  })
})

describe('cancelling', () => {
  it('skips the production job of a letter cancelled while ready for print, and refunds it once', async ({ pipeline }) => {
    const floor = pipeline.productionWorker!.worker
    await floor.pause()
    try {
      const before = await pipeline.balance()
      const id = await pipeline.send()
      await reachStatus(pipeline, id, 'ready_for_print')
      const cancelled = await pipeline.client('DELETE', `/cards/${id}`)
      expect(cancelled.statusCode, cancelled.body).toBe(200)
      expect(await pipeline.balance()).toBe(before)
      await floor.resume()
      const [row] = await productionJobOf(pipeline, id)
      await expect.poll(async () => (await pipeline.app.queues.production.getJob(row!.id))?.returnvalue, { timeout: 10_000, interval: 50 }).toBe('already_done')
      const card = await pipeline.card(id)
      expect(card.status).toBe('cancelled')
      expect(card.events.map((event) => event.status)).toEqual(['received', 'ready_for_print', 'cancelled'])
      expect(await pipeline.spooled()).not.toContain(`${id}.card.pdf`)
      expect((await ledgerOf(pipeline, id)).map((entry) => entry.kind)).toEqual(['charge', 'refund'])
    } finally {
      await floor.resume()
    }
  })

  it('answers 409 once the floor has the letter, and refunds nothing', async ({ pipeline }) => {
    const id = await pipeline.send()
    await reachStatus(pipeline, id, 'printed')
    const response = await pipeline.client('DELETE', `/cards/${id}`)
    expect(response.statusCode).toBe(409)
    expect((await ledgerOf(pipeline, id)).map((entry) => entry.kind)).toEqual(['charge'])
  })
})
