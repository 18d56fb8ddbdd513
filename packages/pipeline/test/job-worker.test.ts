import { afterAll, describe, expect, it } from 'vitest'
import { Queue } from 'bullmq'
import { pino } from 'pino'
import { sql } from 'drizzle-orm'
import { closeDb, createDb } from '@letters/db'
import { limitedRole } from '@letters/test/support/connection-budget'
import { isolatedDatabase, testConfig } from '@letters/test/support/context'
import { deleteKeys } from '@letters/test/support/redis-keys'
import { jobWorker, workerConnection } from '../src/index.js'

const log = pino({ level: 'silent' })
const prefix = `${testConfig().queuePrefix}-job-worker-${process.pid}`
const connection = workerConnection(testConfig().redisUrl, 'job-worker-test', log)

afterAll(async () => {
  await connection.quit()
  await deleteKeys(testConfig().redisUrl, `${prefix}:*`)
})

describe('jobWorker', () => {
  it('consumes the queue the registry gives its job, and fails a job of another name without running it', async () => {
    const queue = new Queue('address', { connection, prefix })
    const seen: string[] = []
    const worker = jobWorker('normalize-address', async (job) => seen.push(job.data.letterId), { connection, prefix, autorun: true })
    try {
      const stray = await queue.add('paint-letter', { letterId: 'stray' }, { attempts: 3 })
      const right = await queue.add('normalize-address', { letterId: 'right' })
      await expect.poll(async () => [await stray.getState(), await right.getState()], { timeout: 10_000, interval: 50 }).toEqual(['failed', 'completed'])
      expect(seen).toEqual(['right'])
      const failed = await queue.getJob(stray.id!)
      // Unrecoverable: failed at its first attempt, not retried.
      expect(failed?.attemptsMade).toBe(1)
      expect(failed?.failedReason).toMatch(/carries normalize-address jobs, not paint-letter/)
    } finally {
      await worker.close()
      await queue.close()
    }
  })

  it('puts back a job whose database refuses connections (53300) without spending its attempts, and runs it as soon as a slot frees', async () => {
    const isolated = await isolatedDatabase('starved')
    const role = await limitedRole(isolated.url, 1)
    const db = createDb(role.url, { max: 1 })
    const queue = new Queue('address', { connection, prefix })
    const ran: string[] = []
    const worker = jobWorker(
      'normalize-address',
      async (job) => {
        await db.execute(sql`SELECT 1`)
        ran.push(job.data.letterId)
      },
      { connection, prefix, autorun: true },
    )
    let release = await role.hold(1)
    try {
      // Two attempts, a second apart: without the put-back they are spent within ~2 s.
      const job = await queue.add('normalize-address', { letterId: 'starved' }, { attempts: 2, backoff: { type: 'fixed', delay: 1000 } })
      await new Promise((resolve) => setTimeout(resolve, 8000))
      expect(await job.getState()).toBe('delayed')
      expect((await queue.getJob(job.id!))?.attemptsMade).toBe(0)
      expect(ran).toEqual([])

      const freedAt = Date.now()
      await release()
      release = async () => {}
      await expect.poll(() => job.getState(), { timeout: 10_000, interval: 100 }).toBe('completed')
      expect(Date.now() - freedAt).toBeLessThan(5000)
      expect(ran).toEqual(['starved'])
    } finally {
      await release()
      await worker.close()
      await queue.close()
      await closeDb(db)
      await role.drop()
      await isolated.drop()
    }
  }, 40_000)
})
