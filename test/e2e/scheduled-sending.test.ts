import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { and, eq, inArray, sql } from 'drizzle-orm'
import { letterEvents, letters } from '@letters/db'
import { RELEASED_DETAIL } from '@letters/queues'
import { deleteKeys } from '../support/redis-keys.js'
import { reachStatus, startPipeline, type Pipeline } from '../support/pipeline.js'

let pipeline: Pipeline
beforeAll(async () => {
  // The clock's default round: every second.
  pipeline = await startPipeline('scheduled')
})
afterAll(() => pipeline.close())

const DAY = 86_400_000

describe('a scheduled letter on the running stack', () => {
  it('enters the pipeline within 5 seconds of its sendAt (a real minute and a second ahead), and is printed', { timeout: 120_000 }, async () => {
    const sendAt = new Date(Date.now() + 61_000)
    const id = await pipeline.send({ sendAt: sendAt.toISOString() })
    expect((await pipeline.card(id)).status).toBe('scheduled')
    await reachStatus(pipeline, id, 'printed', 90_000)
    const [released] = await pipeline.app.db
      .select({ at: letterEvents.at })
      .from(letterEvents)
      .where(and(eq(letterEvents.letterId, id), eq(letterEvents.status, 'received')))
    const lagMs = released!.at.getTime() - sendAt.getTime()
    expect(lagMs).toBeGreaterThanOrEqual(0)
    expect(lagMs).toBeLessThan(5000)
    expect(await pipeline.spooled()).toEqual(expect.arrayContaining([`${id}.card.pdf`, `${id}.envelope.pdf`]))
  })

  it('survives a Redis that lost every key: the schedule is in Postgres, and each letter is printed once', { timeout: 60_000 }, async () => {
    const ids = await Promise.all(Array.from({ length: 6 }, () => pipeline.send({ sendAt: new Date(Date.now() + DAY).toISOString() })))
    await deleteKeys(pipeline.config.redisUrl, `${pipeline.config.queuePrefix}:*`)
    // Their sendAt comes (moved forward in the database rather than waited for).
    await pipeline.app.db.update(letters).set({ sendAt: sql`now()` }).where(inArray(letters.id, ids))
    for (const id of ids) await reachStatus(pipeline, id, 'printed', 30_000)
    const spooled = await pipeline.spooled()
    for (const id of ids) expect(spooled.filter((file) => file.startsWith(id))).toEqual([`${id}.card.pdf`, `${id}.envelope.pdf`])
    const releases = await pipeline.app.db.select().from(letterEvents).where(and(inArray(letterEvents.letterId, ids), eq(letterEvents.detail, RELEASED_DETAIL)))
    expect(releases).toHaveLength(ids.length)
  })
})
