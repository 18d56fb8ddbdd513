import { randomBytes } from 'node:crypto'
import { readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect } from 'vitest'
import { eq, inArray, isNull } from 'drizzle-orm'
import { Redis } from 'ioredis'
import { ledgerEntries, letters, outbox } from '@letters/db'
import type { Pipeline } from '../support/pipeline.js'
import { startFloorProcess, type ServiceProcess } from '../support/processes.js'
import { RESUMED_DETAIL } from '@letters/letters'
import { it as base } from '../support/fixtures.js'

const RECONCILE_AFTER_MS = 3000

const printLog = join(tmpdir(), `letters-dataloss-prints-${randomBytes(4).toString('hex')}.log`)
const it = base.extend({
  pipelineOptions: {
    label: 'dataloss',
    production: false,
    reconcile: true,
    // Every file the printer takes is a line of the print log: a second copy would show.
    env: { RECONCILE_AFTER_MS: String(RECONCILE_AFTER_MS), RECONCILE_INTERVAL_MS: '500', PRINT_COMMAND: `echo {file} >> ${printLog}` },
  },
})

let floor: ServiceProcess | undefined
afterAll(async () => {
  await floor?.kill()
  await rm(printLog, { force: true })
})

const statusesOf = async (pipeline: Pipeline, ids: string[]) =>
  (await pipeline.app.db.select({ id: letters.id, status: letters.status }).from(letters).where(inArray(letters.id, ids))).map((row) => row.status).sort()

/** Deletes every key under the pipeline's queue prefix, as a Redis restart without persistence or a flush would. */
async function deleteQueueKeys(pipeline: Pipeline): Promise<number> {
  const redis = new Redis(pipeline.config.redisUrl)
  let deleted = 0
  try {
    for await (const keys of redis.scanStream({ match: `${pipeline.config.queuePrefix}:*`, count: 500 })) {
      if ((keys as string[]).length > 0) deleted += await redis.unlink(...(keys as string[]))
    }
  } finally {
    redis.disconnect()
  }
  return deleted
}

describe('every queue key deleted while letters are at every stage', () => {
  it(
    "prints every letter once within RECONCILE_AFTER_MS plus a minute, each with the reconciler's event",
    async ({ pipeline }) => {
      // Two letters in a floor worker's hands (printing), one waiting for the floor (ready_for_print).
      floor = await startFloorProcess(pipeline.config, { PRINT_COMMAND: 'sleep 30 && test -f {file}' })
      const onTheFloor = await Promise.all([pipeline.send(), pipeline.send(), pipeline.send()])
      await expect.poll(() => statusesOf(pipeline, onTheFloor), { timeout: 15_000, interval: 50 }).toEqual(['printing', 'printing', 'ready_for_print'])
      await floor.kill()
      floor = undefined

      // Three waiting for their address (received), their jobs handed to Redis.
      await pipeline.addressWorker.pause()
      const received = [await pipeline.send(), await pipeline.send(), await pipeline.send()]
      const ids = [...onTheFloor, ...received]
      await expect
        .poll(async () => (await pipeline.app.db.select({ id: outbox.id }).from(outbox).where(isNull(outbox.sentAt))).length, { timeout: 10_000, interval: 50 })
        .toBe(0)
      expect(await statusesOf(pipeline, received)).toEqual(['received', 'received', 'received'])

      const keysDeleted = await deleteQueueKeys(pipeline)
      expect(keysDeleted).toBeGreaterThan(0)
      const lostAt = Date.now()
      await pipeline.addressWorker.resume()
      pipeline.startProductionWorker({ stalledIntervalMs: 300 })

      await expect.poll(() => statusesOf(pipeline, ids), { timeout: RECONCILE_AFTER_MS + 60_000, interval: 200 }).toEqual(Array(6).fill('printed'))
      expect(Date.now() - lostAt).toBeLessThan(RECONCILE_AFTER_MS + 60_000)
      console.info(
        'redis data loss figures',
        JSON.stringify({ letters: ids.length, keysDeleted, reconcileAfterMs: RECONCILE_AFTER_MS, allPrintedAfterMs: Date.now() - lostAt }),
      )

      for (const id of ids) {
        const card = await pipeline.card(id)
        expect(card.events.filter((event) => event.detail === RESUMED_DETAIL)).toHaveLength(1)
        expect(card.events.filter((event) => event.status === 'printed')).toHaveLength(1)
        const entries = await pipeline.app.db.select().from(ledgerEntries).where(eq(ledgerEntries.letterId, id))
        expect(entries.map((entry) => entry.kind)).toEqual(['charge'])
      }
      // The printer is handed the artifact store's files: <letterId>/card.pdf, <letterId>/envelope.pdf.
      const printed = (await readFile(printLog, 'utf8'))
        .trim()
        .split('\n')
        .map((path) => path.split('/').slice(-2).join('/'))
        .sort()
      expect(printed).toEqual(ids.flatMap((id) => [`${id}/card.pdf`, `${id}/envelope.pdf`]).sort())
      expect(await pipeline.balance()).toBe(1000 - 6 * 3)
    },
    RECONCILE_AFTER_MS + 120_000,
  )
})
