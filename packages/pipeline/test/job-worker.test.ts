import { afterAll, describe, expect, it } from 'vitest'
import { Queue } from 'bullmq'
import { pino } from 'pino'
import { testConfig } from '@letters/test/support/context'
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
})
