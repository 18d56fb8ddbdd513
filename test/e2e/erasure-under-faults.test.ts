// Under faults: erasing a letter's personal data while it is printed and its webhooks are retried, while every
// Postgres connection is cut, and with hostile or foreign ids. An erasure is whole or nothing, touches only the key's
// own letters of its own mode, leaves the ledger as it was, and leaves no trace in pg_dump or Redis. Every attack runs
// on a database and queue prefix of its own, on 127.0.0.1 only. Each test is named after the rule it guards; every
// figure measured is printed on a line starting with `###`.
import { randomUUID } from 'node:crypto'
import { afterAll, describe, expect, it } from 'vitest'
import { eq, inArray, sql } from 'drizzle-orm'
import { ledgerEntries, letters, type Db } from '@letters/db'
import { databaseDump, found, redisDump } from '@letters/test/support/personal-data-traces'
import { adminAccount } from '../support/accounts.js'
import { ADMIN_TOKEN } from '../support/context.js'
import { singleLetter } from '../support/factories.js'
import {
  closers,
  connectionKiller,
  countBy,
  gateway,
  hostileIds,
  inProcessWorker,
  receiver,
  reconnected,
  report,
  sleep,
  type Account,
  closeAll,
} from '../support/fault-suites.js'
import { adminClient, issueTestKey, publicClient } from '../support/gateway.js'
import { startPipeline, reachStatus, type Pipeline } from '../support/pipeline.js'

afterAll(closeAll)

/** A printer that holds every file until `release()`, recording each file it accepted. */
function gatedPrinter() {
  let open!: () => void
  const gate = new Promise<void>((resolve) => (open = resolve))
  const printed: string[] = []
  return {
    name: 'gated',
    printed,
    release: () => open(),
    async print(file: { name: string }) {
      await gate
      printed.push(file.name)
    },
  }
}

/** Every copy the database keeps of a letter that may carry its recipient: its row, its events' details and every stored event body. */
async function storedOf(db: Db, id: string) {
  const [row] = await db
    .select({ erasedAt: letters.personalDataErasedAt, recipient: letters.recipient, message: letters.message })
    .from(letters)
    .where(eq(letters.id, id))
  const copies = await db.execute<{ text: string | null }>(sql`
    SELECT detail AS text FROM letter_events WHERE letter_id = ${id}::uuid
    UNION ALL SELECT body FROM events WHERE letter_id = ${id}::uuid
    UNION ALL SELECT body FROM webhook_events WHERE ((body::json -> 'data') ->> 'id') = ${id}`)
  return { ...row!, copies: copies.map((copy) => copy.text ?? '') }
}

describe('erasure while the letter is printed and its webhooks are being delivered', () => {
  it('409 while printing, 204 once printed; no delivery after the 204 carries the recipient, nothing is printed again, the ledger is untouched, and neither pg_dump nor Redis keeps a trace', async () => {
    const printer = gatedPrinter()
    const pipeline: Pipeline = await startPipeline('rte-print', {
      production: { printer },
      env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_RETRY_SCHEDULE: Array(20).fill('200').join(',') },
    })
    closers.push(() => pipeline.close())
    inProcessWorker(pipeline.app)
    let failing = true
    const hooks = await receiver(() => (failing ? 500 : 204))
    expect((await pipeline.client('POST', '/webhooks', { url: hooks.url })).statusCode).toBe(201)
    const secrets = ['Eufrasia', 'Zampabollos', 'Calle Ornitorrinco 77', 'secreto de la merienda']
    const id = await pipeline.send({ name: secrets[0], surname: secrets[1], address: secrets[2], message: `Eufrasia, el ${secrets[3]} está a salvo` })
    await reachStatus(pipeline, id, 'printing', 30_000)
    const balance = await pipeline.balance()
    const ledgerBefore = await pipeline.app.db.select().from(ledgerEntries).where(eq(ledgerEntries.accountId, pipeline.account.id))

    const whilePrinting = await pipeline.client('DELETE', `/cards/${id}/personal-data`)
    expect(whilePrinting.statusCode, whilePrinting.body).toBe(409)
    printer.release()
    await reachStatus(pipeline, id, 'printed', 30_000)
    // Its events are still being retried (the receiver answers 500) when it is erased.
    await expect.poll(() => hooks.received.filter((webhook) => webhook.json.type === 'letter.printed').length, { timeout: 10_000 }).toBeGreaterThan(0)
    const erased = await pipeline.client('DELETE', `/cards/${id}/personal-data`)
    expect(erased.statusCode, erased.body).toBe(204)
    const erasedAt = Date.now()
    await sleep(1500)
    failing = false
    await sleep(3000)
    const after = hooks.received.filter((webhook) => webhook.at > erasedAt + 100)
    const leakedAfter = after.filter((webhook) => found(webhook.body, secrets).length > 0)
    const filesOfLetter = printer.printed.filter((file) => file.startsWith(id))
    const dump = await databaseDump(pipeline.config.databaseUrl)
    const redis = await redisDump(pipeline.config.redisUrl, pipeline.config.queuePrefix)
    const ledgerAfter = await pipeline.app.db.select().from(ledgerEntries).where(eq(ledgerEntries.accountId, pipeline.account.id))
    report(
      `erasure mid-delivery: ${hooks.received.length} deliveries in all, ${after.length} after the 204, ${leakedAfter.length} of them with the recipient; ` +
        `files printed for the letter ${filesOfLetter.length} (${filesOfLetter.join(', ')}); in pg_dump: ${JSON.stringify(found(dump, secrets))}; in Redis: ${JSON.stringify(found(redis, secrets))}; ` +
        `ledger rows ${ledgerBefore.length} → ${ledgerAfter.length}`,
    )
    expect(after.length).toBeGreaterThan(0)
    expect(leakedAfter.length).toBe(0)
    expect(new Set(filesOfLetter).size).toBe(filesOfLetter.length)
    expect(found(dump, secrets)).toEqual([])
    expect(found(redis, secrets)).toEqual([])
    expect(ledgerAfter).toEqual(ledgerBefore)
    expect(await pipeline.balance()).toBe(balance)
    expect((await pipeline.client('GET', `/cards/${id}/proof`)).statusCode).toBe(410)
  }, 90_000)
})

describe('erasure while pg_terminate_backend cuts every connection', () => {
  it('each letter is erased whole or not at all; retried, all are erased, the ledger untouched, no name in pg_dump or Redis', async () => {
    const { app, config } = await gateway('rte-kill', { RATE_LIMIT_MAX: '100000' })
    const owner = await adminAccount(app, 10_000)
    const hook = await publicClient(app, owner.apiKey).post('/webhooks', { url: 'https://93.184.216.34/hooks/letters' })
    expect(hook.statusCode, hook.body).toBe(201)
    const people = Array.from({ length: 30 }, (_, n) => `Borrado${String.fromCharCode(97 + (n % 26))}${n}zq`)
    const ids: string[] = []
    for (const name of people) {
      const response = await app.inject({
        method: 'POST',
        url: '/single',
        headers: { 'x-api-key': owner.apiKey, 'idempotency-key': randomUUID() },
        payload: singleLetter(owner, { name, message: `Mensaje privado para ${name}` }),
      })
      expect(response.statusCode, response.body).toBe(200)
      ids.push(response.json<{ cardId: string }>().cardId)
    }
    await app.db.execute(sql`UPDATE letters SET status = 'printed', updated_at = now() WHERE id IN ${ids}`)
    const ledgerBefore = await app.db.select().from(ledgerEntries).where(eq(ledgerEntries.accountId, owner.id))

    const killer = connectionKiller(config.databaseUrl)
    const statuses: number[] = []
    const erasedOnce = new Set<string>()
    const deadline = Date.now() + 10_000
    while (Date.now() < deadline && erasedOnce.size < ids.length) {
      await Promise.all(
        ids
          .filter((id) => !erasedOnce.has(id))
          .slice(0, 6)
          .map(async (id) => {
            const response = await publicClient(app, owner.apiKey).delete(`/cards/${id}/personal-data`)
            statuses.push(response.statusCode)
            if (response.statusCode === 204) erasedOnce.add(id)
          }),
      )
    }
    const { cuts } = await killer.stop()
    await reconnected(app.db)
    // Whole or nothing, whatever the answer was.
    const between: string[] = []
    let erasedNow = 0
    for (const [n, id] of ids.entries()) {
      const stored = await storedOf(app.db, id)
      const withName = stored.copies.filter((copy) => copy.includes(people[n]!)).length
      if (stored.erasedAt === null) {
        if (stored.recipient.name !== people[n] || withName !== stored.copies.filter((copy) => copy !== '').length) between.push(`${id} untouched-but-partly`)
      } else {
        erasedNow++
        if (stored.recipient.name !== '' || withName > 0) between.push(`${id} erased-but-not-everywhere`)
      }
      if (erasedOnce.has(id) && stored.erasedAt === null) between.push(`${id} answered 204 but not erased`)
    }
    // The client retries every letter until 204.
    for (const id of ids) {
      await expect.poll(async () => (await publicClient(app, owner.apiKey).delete(`/cards/${id}/personal-data`)).statusCode, { timeout: 10_000 }).toBe(204)
    }
    const dump = await databaseDump(config.databaseUrl)
    const redis = await redisDump(config.redisUrl, config.queuePrefix)
    const ledgerAfter = await app.db.select().from(ledgerEntries).where(eq(ledgerEntries.accountId, owner.id))
    report(
      `erasure under ${cuts} rounds of pg_terminate_backend: answers ${JSON.stringify(countBy(statuses))}; ${erasedNow}/${ids.length} erased before the retries, ` +
        `half-erased ${between.length}; after the retries, names in pg_dump ${found(dump, people).length}, in Redis ${found(redis, people).length}; ledger rows ${ledgerBefore.length} → ${ledgerAfter.length}`,
    )
    expect(between).toEqual([])
    expect(found(dump, people)).toEqual([])
    expect(found(redis, people)).toEqual([])
    expect(ledgerAfter).toEqual(ledgerBefore)
  }, 90_000)
})

describe('erasure: hostile ids, another account’s letter, the other mode', () => {
  it('nothing but the key’s own letter of its own mode is ever erased, and no hostile id is a 5xx', async () => {
    const { app } = await gateway('rte-ids', { RATE_LIMIT_MAX: '100000' })
    const a = await adminAccount(app, 100)
    const b = await adminAccount(app, 100)
    const aTest = await issueTestKey(app, a.id)
    const send = async (apiKey: string, owner: Account) => {
      const response = await publicClient(app, apiKey).post('/single', singleLetter(owner))
      expect(response.statusCode, response.body).toBe(200)
      return response.json<{ cardId: string }>().cardId
    }
    const aLive = await send(a.apiKey, a)
    const aTestLetter = await send(aTest, a)
    const bLive = await send(b.apiKey, b)
    await app.db.execute(sql`UPDATE letters SET status = 'printed' WHERE id IN ${[aLive, aTestLetter, bLive]}`)
    const erasedOf = async () =>
      Object.fromEntries(
        (
          await app.db
            .select({ id: letters.id, at: letters.personalDataErasedAt })
            .from(letters)
            .where(inArray(letters.id, [aLive, aTestLetter, bLive]))
        ).map((row) => [row.id, row.at !== null]),
      )
    const calls: Array<{ why: string; method: 'DELETE'; url: string; headers: Record<string, string> }> = [
      { why: "A erases B's letter", method: 'DELETE', url: `/cards/${bLive}/personal-data`, headers: { 'x-api-key': a.apiKey } },
      { why: "A's test key erases A's live letter", method: 'DELETE', url: `/cards/${aLive}/personal-data`, headers: { 'x-api-key': aTest } },
      { why: "A's live key erases A's test letter", method: 'DELETE', url: `/cards/${aTestLetter}/personal-data`, headers: { 'x-api-key': a.apiKey } },
      {
        why: "B's letter with B's id in another case, by A",
        method: 'DELETE',
        url: `/cards/${bLive.toUpperCase()}/personal-data`,
        headers: { 'x-api-key': a.apiKey },
      },
      ...hostileIds.map((id) => ({
        why: `card ${id.slice(0, 30)}`,
        method: 'DELETE' as const,
        url: `/cards/${encodeURIComponent(id)}/personal-data`,
        headers: { 'x-api-key': a.apiKey },
      })),
      { why: 'card id with a path after it', method: 'DELETE', url: `/cards/${bLive}%2F..%2F${aLive}/personal-data`, headers: { 'x-api-key': a.apiKey } },
      ...hostileIds.map((id) => ({
        why: `admin account ${id.slice(0, 30)}`,
        method: 'DELETE' as const,
        url: `/admin/accounts/${encodeURIComponent(id)}/personal-data`,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      })),
      {
        why: 'admin route with an API key as token',
        method: 'DELETE',
        url: `/admin/accounts/${b.id}/personal-data`,
        headers: { authorization: `Bearer ${a.apiKey}` },
      },
      { why: 'admin route with an API key header', method: 'DELETE', url: `/admin/accounts/${b.id}/personal-data`, headers: { 'x-api-key': a.apiKey } },
      {
        why: 'admin route, letter id as account',
        method: 'DELETE',
        url: `/admin/accounts/${bLive}/personal-data`,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      },
    ]
    const answers: Array<{ why: string; status: number }> = []
    for (const call of calls)
      answers.push({ why: call.why, status: (await app.inject({ method: call.method, url: call.url, headers: call.headers })).statusCode })
    const after = await erasedOf()
    const wrong = answers.filter((answer) => answer.status < 400 || answer.status >= 500)
    report(
      `${answers.length} hostile erasures: ${JSON.stringify(countBy(answers.map((answer) => answer.status)))}; not a 4xx: ${JSON.stringify(wrong)}; erased: ${JSON.stringify(Object.values(after))}`,
    )
    expect(wrong).toEqual([])
    expect(Object.values(after)).toEqual([false, false, false])
    // The account-wide erasure touches only its account (both its modes).
    const whole = await adminClient(app).delete(`/admin/accounts/${a.id}/personal-data`)
    expect(whole.statusCode, whole.body).toBe(200)
    const final = await erasedOf()
    expect([final[aLive], final[aTestLetter], final[bLive]]).toEqual([true, true, false])
  }, 60_000)
})
