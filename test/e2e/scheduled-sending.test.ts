import { randomBytes } from 'node:crypto'
import { rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect } from 'vitest'
import { and, eq, inArray, sql } from 'drizzle-orm'
import { letterEvents, letters, outbox } from '@letters/db'
import { adminCampaign } from '@letters/test/support/gateway'
import { spanishRecipient } from '@letters/test/support/factories'
import { adminAccount } from '../support/accounts.js'
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

  it('releases a campaign of 1,000 letters due at one instant within 5 seconds of it, each once', { timeout: 120_000 }, async ({ pipeline }) => {
    const owner = await adminAccount(pipeline.app, 5000, 'Campaña')
    const campaignId = await adminCampaign(pipeline.app, owner)
    const recipients = Array.from({ length: 1000 }, (_, n) => ({ ...spanishRecipient, name: `Cliente ${n}`, variables: { cupon: `C${n}` } }))
    const response = await pipeline.app.inject({
      method: 'POST',
      url: '/cards/bulk',
      headers: { 'x-api-key': owner.apiKey },
      payload: { campaignId, sendAt: new Date(Date.now() + DAY).toISOString(), recipients },
    })
    expect(response.statusCode, response.body).toBe(200)
    const ids = response.json<{ cardIds: string[] }>().cardIds
    // Their sendAt brought to one instant two seconds ahead, as if the day had passed.
    const [{ sendAt }] = (await pipeline.app.db
      .update(letters)
      .set({ sendAt: sql`now() + interval '2 seconds'` })
      .where(eq(letters.accountId, owner.id))
      .returning({ sendAt: letters.sendAt })) as [{ sendAt: Date }]
    await expect
      .poll(
        async () =>
          (
            await pipeline.app.db
              .select({ n: sql<number>`count(*)::int` })
              .from(letterEvents)
              .where(and(inArray(letterEvents.letterId, ids), eq(letterEvents.detail, RELEASED_DETAIL)))
          )[0]!.n,
        { timeout: 30_000, interval: 200 },
      )
      .toBe(ids.length)
    const [lag] = await pipeline.app.db
      .select({
        first: sql<number>`EXTRACT(EPOCH FROM min(${letterEvents.at}) - ${sendAt.toISOString()}::timestamptz) * 1000`,
        last: sql<number>`EXTRACT(EPOCH FROM max(${letterEvents.at}) - ${sendAt.toISOString()}::timestamptz) * 1000`,
      })
      .from(letterEvents)
      .where(and(inArray(letterEvents.letterId, ids), eq(letterEvents.detail, RELEASED_DETAIL)))
    expect(Number(lag!.first)).toBeGreaterThanOrEqual(0)
    expect(Number(lag!.last)).toBeLessThan(5000)
    const jobs = await pipeline.app.db
      .select({ n: sql<number>`count(*)::int` })
      .from(outbox)
      .where(and(eq(outbox.queue, 'address'), sql`${outbox.payload} ->> 'letterId' IN (SELECT id::text FROM letters WHERE account_id = ${owner.id}::uuid)`))
    expect(jobs[0]!.n).toBe(ids.length)
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
