import { randomBytes } from 'node:crypto'
import { rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect } from 'vitest'
import { and, eq, inArray, sql } from 'drizzle-orm'
import { letterEvents, letters } from '@letters/db'
import { RELEASED_DETAIL } from '@letters/pipeline'
import { loggingCommand, printsIn } from '../support/floor-processes.js'
import { deleteKeys } from '../support/redis-keys.js'
import { reachStatus } from '../support/pipeline.js'
import { it as base } from '../support/fixtures.js'

// Every file the printer takes is a line of this log: a reprint shows as a second line, where a
// spool file of the same name would just be written over.
const printLog = join(tmpdir(), `letters-scheduled-prints-${randomBytes(4).toString('hex')}.log`)
afterAll(() => rm(printLog, { force: true }))

// The clock's default round: every second.
const it = base.extend({ pipelineOptions: { label: 'scheduled', env: { PRINT_COMMAND: loggingCommand(printLog) } } })

const DAY = 86_400_000

/**
 * How many times the printer took each file, by the end of its path: the artifact store's
 * `<letterId>/card.pdf` and `<letterId>/envelope.pdf`.
 */
async function printsByLetterFile(): Promise<Map<string, number>> {
  const counts = new Map<string, number>()
  for (const [path, n] of await printsIn(printLog)) {
    const file = path.split('/').slice(-2).join('/')
    counts.set(file, (counts.get(file) ?? 0) + n)
  }
  return counts
}

describe('a scheduled letter on the running stack', () => {
  it('enters the pipeline within 5 seconds of its sendAt (a real minute and a second ahead), and is printed', { timeout: 120_000 }, async ({ pipeline }) => {
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
    const prints = await printsByLetterFile()
    expect([prints.get(`${id}/card.pdf`), prints.get(`${id}/envelope.pdf`)]).toEqual([1, 1])
  })

  it('survives a Redis that lost every key: the schedule is in Postgres, and each letter is printed once', { timeout: 60_000 }, async ({ pipeline }) => {
    const ids = await Promise.all(Array.from({ length: 6 }, () => pipeline.send({ sendAt: new Date(Date.now() + DAY).toISOString() })))
    await deleteKeys(pipeline.config.redisUrl, `${pipeline.config.queuePrefix}:*`)
    // Their sendAt comes (moved forward in the database rather than waited for).
    await pipeline.app.db
      .update(letters)
      .set({ sendAt: sql`now()` })
      .where(inArray(letters.id, ids))
    for (const id of ids) await reachStatus(pipeline, id, 'printed', 30_000)
    // Each of its two files taken by the printer exactly once: none missing, none printed again.
    const prints = [...(await printsByLetterFile())]
    for (const id of ids)
      expect(prints.filter(([file]) => file.startsWith(`${id}/`)).sort()).toEqual([
        [`${id}/card.pdf`, 1],
        [`${id}/envelope.pdf`, 1],
      ])
    const releases = await pipeline.app.db
      .select()
      .from(letterEvents)
      .where(and(inArray(letterEvents.letterId, ids), eq(letterEvents.detail, RELEASED_DETAIL)))
    expect(releases).toHaveLength(ids.length)
  })
})
