// Under faults: fair webhook delivery (admission, leases, the retry route, GET /events, event sequences). One
// account's dead endpoints never hold another account's deliveries, and nothing is lost or sent twice when workers
// die, Redis loses the queue's keys or Postgres connections are cut. Every attack runs against real workers on a
// database and queue prefix of its own, on 127.0.0.1 only. Each test is named after the rule it guards; every figure
// measured is printed on a line starting with `###`.
import { once } from 'node:events'
import { afterAll, describe, expect, it, onTestFinished } from 'vitest'
import { and, eq, inArray, sql } from 'drizzle-orm'
import postgres from 'postgres'
import { loadConfig } from '@letters/config'
import { closeDb, createDb, events, letterEvents, letters, webhookEvents, type Db } from '@letters/db'
import { OutboxDispatcher } from '@letters/pipeline'
import { startWebhookWorker } from '@letters/webhook-worker/worker'
import { DeliveryAdmission } from '@letters/webhook-worker/admission'
import { adminAccount } from '../support/accounts.js'
import { ADMIN_TOKEN } from '../support/context.js'
import { spanishRecipient, singleLetter } from '../support/factories.js'
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
  type App,
  closeAll,
} from '../support/fault-suites.js'
import { adminCampaign, issueTestKey, publicClient } from '../support/gateway.js'
import { silentLog, startPipeline, type Pipeline } from '../support/pipeline.js'
import { startServiceProcess, type ServiceProcess } from '../support/processes.js'
import { deleteKeys } from '../support/redis-keys.js'
import { removeEndpoints, startDeadReceiver, type WebhookReceiver } from '../support/webhook-receiver.js'

afterAll(closeAll)

/**
 * The queued lease of these tests' admissions, their own and their workers' (WEBHOOK_QUEUED_LEASE_MS),
 * shorter than the default (QUEUED_LEASE_MS, which services/webhook-worker/test/admission.test.ts
 * holds to a minute): what happens when a lease ends does not depend on its length, and the run
 * waits 10 s instead of 60.
 */
const TEST_LEASE_MS = 10_000
/** A receiver that never answers, closed at the end of the file. */
async function deadReceiver() {
  const dead = await startDeadReceiver()
  closers.push(dead.close)
  return dead
}
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!

async function register(app: App, apiKey: string, url: string, events?: string[]) {
  const response = await publicClient(app, apiKey).post('/webhooks', { url, ...(events ? { events } : {}) })
  expect(response.statusCode, response.body).toBe(201)
  return response.json<{ id: string; secret: string }>()
}

/** `count` letters of one campaign in one bulk request with `apiKey` (a test key's are free): one letter.received each. */
async function bulkLetters(app: App, owner: Account, apiKey: string, count: number) {
  const campaignId = await adminCampaign(app, owner)
  const recipients = Array.from({ length: count }, () => ({ ...spanishRecipient, variables: { cupon: 'OTONO10' } }))
  const response = await publicClient(app, apiKey).post('/cards/bulk', { campaignId, recipients })
  expect(response.statusCode, response.body).toBe(200)
}

/** Sends `count` live letters of `owner`, `gapMs` apart, and returns when each was answered (card id → epoch ms). */
async function timedLetters(app: App, owner: Account, count: number, gapMs: number) {
  const answeredAt = new Map<string, number>()
  for (let n = 0; n < count; n++) {
    const response = await publicClient(app, owner.apiKey).post('/single', singleLetter(owner))
    expect(response.statusCode, response.body).toBe(200)
    answeredAt.set(response.json<{ cardId: string }>().cardId, Date.now())
    await sleep(gapMs)
  }
  return answeredAt
}

function latencies(fast: WebhookReceiver, answeredAt: Map<string, number>) {
  const sorted = fast.received
    .filter((webhook) => answeredAt.has(String(webhook.json.data.id)))
    .map((webhook) => webhook.at - answeredAt.get(String(webhook.json.data.id))!)
    .sort((a, b) => a - b)
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1)!, n: sorted.length }
}

// ---------------------------------------------------------------------------------------------------------------
// Webhooks: fairness
// ---------------------------------------------------------------------------------------------------------------

describe('webhooks: a receiver that never answers next to a fast one of another account', () => {
  const TIMEOUT_MS = 5000
  const env = { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS), WEBHOOK_RETRY_SCHEDULE: '600000', RATE_LIMIT_MAX: '100000' }

  it('one dead endpoint with 150 events queued delays another account’s letter.received by less than 2 s (p99)', async () => {
    const { app } = await gateway('rtw-fair1', env)
    inProcessWorker(app)
    const deadOwner = await adminAccount(app, 1000)
    const fastOwner = await adminAccount(app, 1000)
    const dead = await deadReceiver()
    const fast = await receiver()
    await register(app, deadOwner.apiKey, dead.url)
    await register(app, fastOwner.apiKey, fast.url)
    await bulkLetters(app, deadOwner, deadOwner.apiKey, 150)
    await expect.poll(() => dead.most, { timeout: 10_000, interval: 20 }).toBeGreaterThan(0)
    const answeredAt = await timedLetters(app, fastOwner, 15, 150)
    await expect.poll(() => fast.received.length, { timeout: 30_000, interval: 50 }).toBeGreaterThanOrEqual(15)
    const measured = latencies(fast, answeredAt)
    report(`one dead endpoint: fast receiver p50 ${measured.p50} ms, p99 ${measured.p99} ms over ${measured.n}; dead receiver held at most ${dead.most}`)
    expect(measured.p99).toBeLessThan(2000)
    expect(dead.most).toBeLessThanOrEqual(10)
    await removeEndpoints(app.db)
  }, 60_000)

  it('one account’s 10 free test-mode endpoints on a dead receiver hold at most WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT slots, and another account’s p99 stays under 2 s', async () => {
    const { app } = await gateway('rtw-fair10', env)
    inProcessWorker(app)
    const attacker = await adminAccount(app, 1000)
    const testKey = await issueTestKey(app, attacker.id)
    const fastOwner = await adminAccount(app, 1000)
    const dead = await deadReceiver()
    const fast = await receiver()
    // Ten endpoints is the per-mode limit; the same dead URL for all of them. Test letters cost nothing.
    for (let n = 0; n < 10; n++) await register(app, testKey, `${dead.url}?n=${n}`)
    await register(app, fastOwner.apiKey, fast.url)
    await bulkLetters(app, attacker, testKey, 30)
    const accountCap = app.config.webhooks.maxInFlightPerAccount
    await expect.poll(() => dead.most, { timeout: 10_000, interval: 20 }).toBeGreaterThanOrEqual(accountCap)
    const answeredAt = await timedLetters(app, fastOwner, 15, 150)
    await expect.poll(() => fast.received.length, { timeout: 60_000, interval: 50 }).toBeGreaterThanOrEqual(15)
    const measured = latencies(fast, answeredAt)
    report(
      `10 test-mode endpoints of one account on a dead receiver: it held ${dead.most} connections at once (WEBHOOK_CONCURRENCY 100); ` +
        `fast receiver p50 ${measured.p50} ms, p99 ${measured.p99} ms, max ${measured.max} ms over ${measured.n}`,
    )
    await removeEndpoints(app.db)
    expect(dead.most).toBeLessThanOrEqual(accountCap)
    expect(measured.p99).toBeLessThan(2000)
  }, 90_000)
})

// ---------------------------------------------------------------------------------------------------------------
// Webhooks: workers killed, Redis keys lost, connections terminated
// ---------------------------------------------------------------------------------------------------------------

/** Answers 204 `delayMs` after each request arrived; records each request's webhook-id and when it came. */
async function delayedReceiver(delayMs: number) {
  const received: Array<{ id: string; at: number; body: string }> = []
  const { createServer } = await import('node:http')
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      received.push({ id: String(request.headers['webhook-id']), at: Date.now(), body: Buffer.concat(chunks).toString('utf8') })
      setTimeout(() => response.writeHead(204).end(), delayMs).unref()
    })
  }).listen(0, '127.0.0.1')
  await once(server, 'listening')
  closers.push(async () => {
    server.closeAllConnections()
    server.close()
  })
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`, received }
}

/** What a receiver got: events never received (lost), and receipts beyond the first of each (delivered twice). */
function tally(expected: readonly string[], receivedIds: readonly string[]) {
  const counts = new Map<string, number>()
  for (const id of receivedIds) counts.set(id, (counts.get(id) ?? 0) + 1)
  const lost = expected.filter((id) => !counts.has(id))
  const duplicates = [...counts.values()].reduce((sum, n) => sum + n - 1, 0)
  const strangers = [...counts.keys()].filter((id) => !expected.includes(id))
  return { lost: lost.length, duplicates, strangers: strangers.length, unique: counts.size }
}

async function endpointEventIds(db: Db, endpointId: string) {
  return (await db.select({ id: webhookEvents.id }).from(webhookEvents).where(eq(webhookEvents.endpointId, endpointId))).map((row) => row.id)
}

const allDelivered = (db: Db, endpointId: string) => async () =>
  (await db.select({ state: webhookEvents.state }).from(webhookEvents).where(eq(webhookEvents.endpointId, endpointId))).every(
    (event) => event.state === 'delivered',
  )

describe('webhooks: a worker SIGKILLed mid-delivery', () => {
  it('nothing is lost; what the dead worker had in flight is sent again (at most once more each) once its leases pass', async () => {
    const TIMEOUT_MS = 3000
    const env = {
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      WEBHOOK_RETRY_SCHEDULE: '1000,1000,1000',
      WEBHOOK_QUEUED_LEASE_MS: String(TEST_LEASE_MS),
    }
    const { app } = await gateway('rtw-kill', env)
    const owner = await adminAccount(app, 1000)
    const slow = await delayedReceiver(1500)
    const endpoint = await register(app, owner.apiKey, slow.url)
    await bulkLetters(app, owner, owner.apiKey, 40)
    const expected = await endpointEventIds(app.db, endpoint.id)
    expect(expected).toHaveLength(40)

    const killed: ServiceProcess = await startServiceProcess('webhook-worker', app.config, env)
    closers.push(() => killed.kill())
    // Killed while the receiver holds deliveries it has read but not answered.
    await expect.poll(() => slow.received.length, { timeout: 12_000, interval: 10 }).toBeGreaterThanOrEqual(12)
    await killed.kill()
    const atKill = slow.received.length
    const answeredBeforeKill = slow.received.filter((webhook) => webhook.at + 1500 <= Date.now()).length
    const killedAt = Date.now()

    inProcessWorker(app)
    await expect
      .poll(allDelivered(app.db, endpoint.id), { timeout: 72_000, interval: 250 })
      .toBe(true)
      .catch(async (error: unknown) => {
        const stuck = await app.db.execute(
          sql`SELECT id, state, attempts, leased_until::text, lease_id, next_attempt_at::text, now()::text AS now FROM webhook_events WHERE endpoint_id = ${endpoint.id}::uuid AND state <> 'delivered'`,
        )
        report(`not delivered ${Math.round((Date.now() - killedAt) / 1000)} s after the kill: ${stuck.length} events, ${JSON.stringify(stuck).slice(0, 600)}`)
        throw error
      })
    const result = tally(
      expected,
      slow.received.map((webhook) => webhook.id),
    )
    const firstAfter = slow.received.slice(atKill)[0]
    const lastAfter = slow.received.at(-1)
    report(
      `worker SIGKILLed with ${atKill} requests received (${atKill - answeredBeforeKill} unanswered): ${result.unique}/${expected.length} delivered, ` +
        `lost ${result.lost}, delivered twice ${result.duplicates}; first delivery after the kill ${firstAfter ? firstAfter.at - killedAt : '-'} ms later, ` +
        `last ${lastAfter ? lastAfter.at - killedAt : '-'} ms later`,
    )
    expect(result.lost).toBe(0)
    expect(result.strangers).toBe(0)
    expect(result.duplicates).toBeLessThanOrEqual(10)
    await removeEndpoints(app.db)
  }, 90_000)
})

describe('webhooks: the Redis keys of the queue prefix deleted while deliveries are admitted', () => {
  it('nothing is lost nor sent twice once the lost jobs’ leases pass (QUEUED_LEASE_MS, a minute; 10 s here)', async () => {
    const CAP = 3
    const env = {
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_TIMEOUT_MS: '3000',
      WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: String(CAP),
      WEBHOOK_RETRY_SCHEDULE: '600000',
    }
    const { app, config } = await gateway('rtw-redis', env)
    const owner = await adminAccount(app, 1000)
    const fast = await receiver()
    const endpoint = await register(app, owner.apiKey, fast.url)
    await bulkLetters(app, owner, owner.apiKey, 12)
    const expected = await endpointEventIds(app.db, endpoint.id)

    // An admission round and its dispatch, as a worker makes them; then Redis loses every key of the prefix.
    const admittedAt = Date.now()
    const admitted = await new DeliveryAdmission(app.db, silentLog, {
      maxInFlightPerEndpoint: CAP,
      maxInFlightPerAccount: config.webhooks.maxInFlightPerAccount,
      queuedLeaseMs: TEST_LEASE_MS,
    }).admitOnce()
    const dispatched = await new OutboxDispatcher(app.db, app.queues, silentLog).dispatchOnce()
    await deleteKeys(config.redisUrl, `${config.queuePrefix}*`)

    inProcessWorker(app)
    // Half the lease: the lost jobs' slots still held, and only until their lease ends.
    await sleep(TEST_LEASE_MS / 2)
    const withinHalf = fast.received.length
    const [leases] = await app.db.execute<{ leased: number; until: string }>(
      sql`SELECT count(*)::int AS leased, max(leased_until)::text AS until FROM webhook_events WHERE endpoint_id = ${endpoint.id}::uuid AND leased_until > now()`,
    )
    report(
      `Redis keys deleted after ${admitted} deliveries were admitted (${dispatched} jobs dispatched): ${withinHalf}/${expected.length} delivered in the next ${TEST_LEASE_MS / 2000} s; ` +
        `${leases!.leased} slots still held until ${leases!.until}`,
    )
    expect(leases!.leased).toBeGreaterThan(0)
    expect(new Date(leases!.until).getTime()).toBeLessThanOrEqual(admittedAt + TEST_LEASE_MS + 1000)
    await expect.poll(allDelivered(app.db, endpoint.id), { timeout: TEST_LEASE_MS + 20_000, interval: 250 }).toBe(true)
    const deliveredAfterMs = Date.now() - admittedAt
    await sleep(1000)
    const result = tally(
      expected,
      fast.received.map((webhook) => String(webhook.headers['webhook-id'])),
    )
    report(
      `after the leases passed: ${result.unique}/${expected.length} delivered ${deliveredAfterMs} ms after admission, lost ${result.lost}, delivered twice ${result.duplicates}`,
    )
    expect(result.lost).toBe(0)
    expect(result.duplicates).toBe(0)
    await removeEndpoints(app.db)
  }, 120_000)
})

describe('webhooks: the worker’s Postgres connections terminated during admission and delivery', () => {
  it('every event is delivered; connections cut between a send and its record only send it again', async () => {
    const env = { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_TIMEOUT_MS: '3000', WEBHOOK_RETRY_SCHEDULE: '500,500,500,500,500' }
    const { app, config } = await gateway('rtw-pgkill', env)
    const owner = await adminAccount(app, 1000)
    const fast = await delayedReceiver(30)
    const endpoint = await register(app, owner.apiKey, fast.url)
    await bulkLetters(app, owner, owner.apiKey, 80)
    const expected = await endpointEventIds(app.db, endpoint.id)

    const workerDb = createDb(config.databaseUrl, { max: 4 })
    closers.push(() => closeDb(workerDb))
    const killer = connectionKiller(config.databaseUrl)
    // Stopped below; also when the test fails first, so that it cuts nothing of the next file's.
    onTestFinished(() => killer.stop().then(() => undefined))
    inProcessWorker(app, workerDb)
    await sleep(8000)
    const { cuts, killed } = await killer.stop()
    const duringCuts = new Set(fast.received.map((webhook) => webhook.id)).size
    await reconnected(app.db)
    await expect.poll(allDelivered(app.db, endpoint.id), { timeout: 60_000, interval: 250 }).toBe(true)
    const result = tally(
      expected,
      fast.received.map((webhook) => webhook.id),
    )
    const [attempts] = await app.db.execute<{ n: number }>(sql`SELECT count(*)::int AS n FROM webhook_attempts WHERE endpoint_id = ${endpoint.id}::uuid`)
    report(
      `${cuts} rounds of pg_terminate_backend (${killed} connections) over 8 s: ${duringCuts} events delivered meanwhile; in the end ${result.unique}/${expected.length}, ` +
        `lost ${result.lost}, delivered twice ${result.duplicates}; ${fast.received.length} requests received, ${attempts!.n} attempts recorded`,
    )
    expect(result.lost).toBe(0)
    expect(result.strangers).toBe(0)
    await removeEndpoints(app.db)
  }, 90_000)
})

describe('webhooks: a worker killed after taking a job and before its lease renewal committed', () => {
  it('the endpoint’s slot comes back when the job’s queued lease from its admission ends (QUEUED_LEASE_MS, a minute; 10 s here)', async () => {
    const TIMEOUT_MS = 2000
    const env = {
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: '1',
      WEBHOOK_RETRY_SCHEDULE: '600000',
    }
    const { app, config } = await gateway('rtw-stall', env)
    const owner = await adminAccount(app, 100)
    const fast = await receiver()
    const endpoint = await register(app, owner.apiKey, fast.url)
    for (let n = 0; n < 3; n++) expect((await publicClient(app, owner.apiKey).post(`/webhooks/${endpoint.id}/test`, {})).statusCode).toBe(202)
    // The admission's round and its dispatch, as the worker about to be killed made them: its one slot, its job.
    const admittedAt = Date.now()
    expect(
      await new DeliveryAdmission(app.db, silentLog, {
        maxInFlightPerEndpoint: 1,
        maxInFlightPerAccount: config.webhooks.maxInFlightPerAccount,
        queuedLeaseMs: TEST_LEASE_MS,
      }).admitOnce(),
    ).toBe(1)
    await new OutboxDispatcher(app.db, app.queues, silentLog).dispatchOnce()
    const [admitted] = await app.db
      .select({ id: webhookEvents.id })
      .from(webhookEvents)
      .where(sql`lease_id IS NOT NULL`)
    // The job's lease renewal waits on the row (a slow database) when the worker dies.
    const locker = postgres(config.databaseUrl, { max: 1, onnotice: () => {} })
    let unlock!: () => void
    const held = new Promise<void>((resolve) => (unlock = resolve))
    const locking = locker.begin(async (tx) => {
      await tx`SELECT 1 FROM webhook_events WHERE id = ${admitted!.id}::uuid FOR UPDATE`
      await held
    })
    const doomed = await startServiceProcess('webhook-worker', config, env)
    closers.push(() => doomed.kill())
    const watcher = postgres(config.databaseUrl, { max: 1, onnotice: () => {} })
    closers.push(() => watcher.end())
    const blocked = () =>
      watcher`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE 'update "webhook_events"%'`.then(
        (rows) => rows.map((row) => row.pid as number),
      )
    await expect.poll(async () => (await blocked()).length, { timeout: 30_000, interval: 50 }).toBe(1)
    // The machine goes: the process, and with it its connection (and the statement it was waiting on).
    const [pid] = await blocked()
    await doomed.kill()
    const killedAt = Date.now()
    await watcher`SELECT pg_terminate_backend(${pid!})`
    unlock()
    await locking
    await locker.end()

    inProcessWorker(app)
    const bound = admittedAt + TEST_LEASE_MS
    await expect
      .poll(() => fast.received.length, { timeout: TEST_LEASE_MS + 15_000, interval: 200 })
      .toBeGreaterThan(0)
      .catch(() => undefined)
    const firstAt = fast.received[0]?.at
    const [lease] = await app.db.execute<{ until: string | null }>(sql`SELECT leased_until::text AS until FROM webhook_events WHERE id = ${admitted!.id}::uuid`)
    report(
      `killed between taking its job and renewing the lease: first delivery of the endpoint ${firstAt === undefined ? `not within ${(TEST_LEASE_MS + 15_000) / 1000} s` : `${firstAt - killedAt} ms after the kill, ${firstAt - admittedAt} ms after admission`} ` +
        `(queued lease ${TEST_LEASE_MS} ms); the job's event leased until ${lease?.until}`,
    )
    await removeEndpoints(app.db)
    expect(firstAt).toBeDefined()
    // The slot comes back when the lease ends, or at once if the worker died after that (its
    // start and the blocked renewal took longer than the lease on a loaded machine): a worker
    // must be there to send.
    expect(firstAt!).toBeLessThan(Math.max(bound, killedAt) + 2000)
  }, 120_000)
})

// ---------------------------------------------------------------------------------------------------------------
// Webhooks: the retry route, GET /events and sequences
// ---------------------------------------------------------------------------------------------------------------

describe('webhooks: POST /webhooks/{id}/deliveries/{deliveryId}/retry across accounts, modes and malformed ids', () => {
  it('every cross-account, cross-mode or malformed retry is a 4xx and changes no delivery', async () => {
    const { app } = await gateway('rtw-retry', { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', RATE_LIMIT_MAX: '100000' })
    const a = await adminAccount(app, 100)
    const b = await adminAccount(app, 100)
    const aTest = await issueTestKey(app, a.id)
    const make = async (apiKey: string) => {
      const endpoint = await register(app, apiKey, 'http://127.0.0.1:9/hooks')
      const queued = await publicClient(app, apiKey).post(`/webhooks/${endpoint.id}/test`, {})
      expect(queued.statusCode, queued.body).toBe(202)
      return { endpoint: endpoint.id, delivery: queued.json<{ eventId: string }>().eventId }
    }
    const live = await make(a.apiKey)
    const test = await make(aTest)
    const other = await make(b.apiKey)
    // Every delivery finished, so that a retry that went through would show.
    await app.db.execute(sql`UPDATE webhook_events SET state = 'delivered', finished_at = now() - interval '1 hour', attempts = 1`)
    const snapshot = () =>
      app.db.execute(sql`SELECT id, state, attempts, finished_at::text, next_attempt_at::text, leased_until::text FROM webhook_events ORDER BY id`)
    const before = await snapshot()

    const attempts: Array<{ key: string; endpoint: string; delivery: string; why: string }> = [
      { key: a.apiKey, endpoint: other.endpoint, delivery: other.delivery, why: "another account's endpoint and delivery" },
      { key: a.apiKey, endpoint: live.endpoint, delivery: other.delivery, why: "own endpoint, another account's delivery" },
      { key: a.apiKey, endpoint: live.endpoint, delivery: test.delivery, why: 'own live endpoint, own test-mode delivery' },
      { key: a.apiKey, endpoint: test.endpoint, delivery: test.delivery, why: 'live key on a test endpoint' },
      { key: aTest, endpoint: live.endpoint, delivery: live.delivery, why: 'test key on a live endpoint' },
      { key: aTest, endpoint: test.endpoint, delivery: live.delivery, why: 'test endpoint, live delivery of the same account' },
      { key: b.apiKey, endpoint: live.endpoint, delivery: live.delivery, why: "B on A's endpoint" },
      ...hostileIds.flatMap((id) => [
        { key: a.apiKey, endpoint: live.endpoint, delivery: encodeURIComponent(id), why: `delivery ${id.slice(0, 40)}` },
        { key: a.apiKey, endpoint: encodeURIComponent(id), delivery: live.delivery, why: `endpoint ${id.slice(0, 40)}` },
      ]),
    ]
    const answers: Array<{ why: string; status: number }> = []
    for (const attempt of attempts) {
      const response = await app.inject({
        method: 'POST',
        url: `/webhooks/${attempt.endpoint}/deliveries/${attempt.delivery}/retry`,
        headers: { 'x-api-key': attempt.key },
        payload: {},
      })
      answers.push({ why: attempt.why, status: response.statusCode })
    }
    const wrong = answers.filter((answer) => answer.status < 400 || answer.status >= 500)
    report(`${answers.length} hostile retries: ${JSON.stringify(countBy(answers.map((answer) => answer.status)))}; not a 4xx: ${JSON.stringify(wrong)}`)
    expect(wrong).toEqual([])
    expect(await snapshot()).toEqual(before)
    // The own, right one still works (the route is not simply closed).
    const own = await publicClient(app, a.apiKey).post(`/webhooks/${live.endpoint}/deliveries/${live.delivery}/retry`, {})
    expect(own.statusCode, own.body).toBe(202)
    await removeEndpoints(app.db)
  }, 60_000)
})

describe('webhooks: a retry asked while the delivery is being sent', () => {
  it('refuses (409) a retry asked while the delivery is being sent, rather than accepting one the attempt under way would record over', async () => {
    const env = { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_TIMEOUT_MS: '5000', WEBHOOK_RETRY_SCHEDULE: '600000' }
    const { app } = await gateway('rtw-retrymid', env)
    const owner = await adminAccount(app, 100)
    const slow = await delayedReceiver(1500)
    const endpoint = await register(app, owner.apiKey, slow.url)
    const queued = await publicClient(app, owner.apiKey).post(`/webhooks/${endpoint.id}/test`, {})
    const deliveryId = queued.json<{ eventId: string }>().eventId
    inProcessWorker(app)
    // The receiver has the request and has not answered yet.
    await expect.poll(() => slow.received.length, { timeout: 10_000, interval: 10 }).toBe(1)
    const retried = await publicClient(app, owner.apiKey).post(`/webhooks/${endpoint.id}/deliveries/${deliveryId}/retry`, {})
    await sleep(5000)
    const [row] = await app.db
      .select({ state: webhookEvents.state, attempts: webhookEvents.attempts })
      .from(webhookEvents)
      .where(eq(webhookEvents.id, deliveryId))
    report(
      `retry during the send: answered ${retried.statusCode}; the receiver got ${slow.received.length} request(s); the delivery is ${row!.state} after ${row!.attempts} attempt(s)`,
    )
    await removeEndpoints(app.db)
    // Either the retry is refused (409), or the 202 is kept: a second request comes.
    if (retried.statusCode === 202) expect(slow.received.length).toBe(2)
    else expect(retried.statusCode).toBe(409)
  }, 60_000)
})

describe('GET /events: cursor tampering, filter injection, huge limits, cross-account and cross-mode', () => {
  it('no event of another account or mode is ever listed, every hostile parameter is a 400, and paging by one sees every event once', async () => {
    const { app } = await gateway('rtw-events', { RATE_LIMIT_MAX: '100000' })
    const a = await adminAccount(app, 1000)
    const b = await adminAccount(app, 1000)
    const aTest = await issueTestKey(app, a.id)
    // Letters of one bulk request share their transaction's instant: a page boundary falls between events of the same occurredAt.
    await bulkLetters(app, a, a.apiKey, 7)
    await bulkLetters(app, a, aTest, 4)
    await bulkLetters(app, b, b.apiKey, 5)
    const own = async (accountId: string, livemode: boolean) =>
      new Set(
        (
          await app.db
            .select({ id: events.id })
            .from(events)
            .where(and(eq(events.accountId, accountId), eq(events.livemode, livemode)))
        ).map((row) => row.id),
      )
    const scopes = [
      { name: 'A live', key: a.apiKey, own: await own(a.id, true) },
      { name: 'A test', key: aTest, own: await own(a.id, false) },
      { name: 'B live', key: b.apiKey, own: await own(b.id, true) },
    ]
    const bEvent = [...scopes[2]!.own][0]!
    const [bRow] = await app.db.select().from(events).where(eq(events.id, bEvent))
    const position = (date: Date) => `${date.toISOString().slice(0, 23)}000Z`
    const cursor = (text: string) => Buffer.from(text).toString('base64url')
    const hostile = [
      "type=' OR 1=1 --",
      "type=letter.received' OR '1'='1",
      'type=letter.received&type=letter.printed',
      'type[]=letter.received',
      'type=LETTER.RECEIVED',
      'type=webhook.test',
      'limit=1000000',
      'limit=0',
      'limit=-1',
      'limit=1e9',
      'limit=101',
      'limit=NaN',
      "cardId=' OR 1=1 --",
      'cardId=%00',
      'cursor=' + 'A'.repeat(201),
      'cursor=' + cursor("' OR 1=1 --|x"),
      'cursor=' + cursor(`${position(bRow!.occurredAt)}|${bEvent}|extra`),
      'cursor=' + cursor(`2026-02-30T00:00:00.000000Z|${bEvent}`),
      'cursor=' + cursor(`0000-01-01T00:00:00.000000Z|${bEvent}`),
      'cursor=' + cursor(`${position(bRow!.occurredAt)}|${bEvent}' OR '1'='1`),
      'cursor=%ZZ',
      'foo=bar',
    ]
    const statuses: Record<string, number> = {}
    const notRefused: Array<[string, number]> = []
    const leaked: string[] = []
    const serverErrors: string[] = []
    for (const scope of scopes) {
      for (const query of hostile) {
        const response = await app.inject({ method: 'GET', url: `/events?${query}`, headers: { 'x-api-key': scope.key } })
        statuses[`${scope.name} ${query.slice(0, 50)}`] = response.statusCode
        if (response.statusCode !== 400) notRefused.push([`${scope.name} ${query.slice(0, 60)}`, response.statusCode])
        if (response.statusCode >= 500) serverErrors.push(`${scope.name} ${query}: ${response.body}`)
        if (response.statusCode === 200)
          for (const event of response.json<{ data: Array<{ id: string }> }>().data)
            if (!scope.own.has(event.id)) leaked.push(`${scope.name} ${query}: ${event.id}`)
      }
      // Cursors that name another account's event, or instants far out: only the key's own events come back.
      for (const query of [
        `cursor=${cursor(`${position(bRow!.occurredAt)}|${bEvent}`)}`,
        `cursor=${cursor(`9999-12-31T23:59:59.999999Z|ffffffff-ffff-ffff-ffff-ffffffffffff`)}`,
        `cursor=${cursor(`0001-01-01T00:00:00.000000Z|00000000-0000-0000-0000-000000000000`)}`,
        `cardId=${
          [...scopes[0]!.own][0]
            ? (
                await app.db
                  .select({ l: events.letterId })
                  .from(events)
                  .where(eq(events.id, [...scopes[0]!.own][0]!))
              )[0]!.l
            : ''
        }`,
        `cardId=${bRow!.letterId}`,
        'limit=100',
      ]) {
        const response = await app.inject({ method: 'GET', url: `/events?${query}`, headers: { 'x-api-key': scope.key } })
        statuses[`${scope.name} ${query.slice(0, 50)}`] = response.statusCode
        if (response.statusCode >= 500) serverErrors.push(`${scope.name} ${query}: ${response.body}`)
        if (response.statusCode === 200)
          for (const event of response.json<{ data: Array<{ id: string }> }>().data)
            if (!scope.own.has(event.id)) leaked.push(`${scope.name} ${query}: ${event.id}`)
      }
      // Paging one event at a time through events that share an instant: each of the key's events once, no other.
      const seen: string[] = []
      let next: string | null = null
      for (let page = 0; page < 100; page++) {
        const url: string = `/events?limit=1${next ? `&cursor=${next}` : ''}`
        const response = await app.inject({
          method: 'GET',
          url,
          headers: { 'x-api-key': scope.key },
        })
        expect(response.statusCode, response.body).toBe(200)
        const body: { data: Array<{ id: string }>; nextCursor: string | null } = response.json()
        seen.push(...body.data.map((event) => event.id))
        next = body.nextCursor
        if (!next) break
      }
      const result = tally([...scope.own], seen)
      report(
        `${scope.name}: paged by 1 through ${scope.own.size} events: seen ${result.unique}, missed ${result.lost}, twice ${result.duplicates}, foreign ${result.strangers}`,
      )
      expect(result).toEqual({ lost: 0, duplicates: 0, strangers: 0, unique: scope.own.size })
    }
    report(
      `GET /events: ${Object.keys(statuses).length} hostile requests; leaked ${leaked.length}; 5xx ${serverErrors.length}; hostile ones not answered 400: ${JSON.stringify(notRefused)}`,
    )
    expect(leaked).toEqual([])
    expect(serverErrors).toEqual([])
    expect(notRefused).toEqual([])
  }, 60_000)
})

describe('event sequences when moves race (the clock releasing, the address worker, cancels, extra clocks)', () => {
  it('each letter’s events are numbered 1..n without gap or repeat, in the order of its letter_events changes', async () => {
    const { LetterClock } = await import('@letters/pipeline')
    const pipeline: Pipeline = await startPipeline('rtw-seq', { production: false, env: { CLOCK_INTERVAL_MS: '50', RATE_LIMIT_MAX: '100000' } })
    closers.push(() => pipeline.close())
    const { app, account } = pipeline
    const testKey = await issueTestKey(app, account.id)
    const create = async (apiKey: string, sendAt?: string) => {
      const response = await app.inject({
        method: 'POST',
        url: '/single',
        headers: { 'x-api-key': apiKey },
        payload: singleLetter(account, { address: 'C/ Mayor 1', province: '', ...(sendAt ? { sendAt } : {}) }),
      })
      expect(response.statusCode, response.body).toBe(200)
      return { id: response.json<{ cardId: string }>().cardId, key: apiKey }
    }
    const soon = new Date(Date.now() + 3_600_000).toISOString()
    const created = [
      ...(await Promise.all(Array.from({ length: 20 }, () => create(account.apiKey, soon)))),
      ...(await Promise.all(Array.from({ length: 10 }, () => create(testKey, soon)))),
      ...(await Promise.all(Array.from({ length: 15 }, () => create(account.apiKey)))),
    ]
    const clocks = Array.from({ length: 3 }, () => new LetterClock(app.db, silentLog, { intervalMs: 10, testMailedAfterMs: 60_000 }))
    clocks.forEach((clock) => clock.start())
    onTestFinished(() => Promise.all(clocks.map((clock) => clock.stop())).then(() => undefined))
    await app.db
      .update(letters)
      .set({ sendAt: sql`now()` })
      .where(
        inArray(
          letters.id,
          created.map((letter) => letter.id),
        ),
      )
    const cancels = await Promise.all(
      created.map(async ({ id, key }) => {
        await sleep(Math.random() * 400)
        return (await app.inject({ method: 'DELETE', url: `/cards/${id}`, headers: { 'x-api-key': key } })).statusCode
      }),
    )
    await Promise.all(clocks.map((clock) => clock.stop()))
    await sleep(2000)
    const ids = created.map((letter) => letter.id)
    const stored = await app.db
      .select({ letterId: events.letterId, type: events.type, sequence: events.sequence, body: events.body })
      .from(events)
      .where(inArray(events.letterId, ids))
    const history = await app.db
      .select({ letterId: letterEvents.letterId, status: letterEvents.status, id: letterEvents.id })
      .from(letterEvents)
      .where(inArray(letterEvents.letterId, ids))
      .orderBy(letterEvents.id)
    const wrong: string[] = []
    for (const id of ids) {
      const own = stored.filter((event) => event.letterId === id).sort((x, y) => x.sequence - y.sequence)
      const sequences = own.map((event) => event.sequence)
      const changes = history
        .filter((row) => row.letterId === id)
        .map((row) => row.status)
        .filter((status, n, all) => n === 0 || status !== all[n - 1])
      if (sequences.join() !== own.map((_, n) => n + 1).join()) wrong.push(`${id}: sequences ${sequences.join()}`)
      if (own.map((event) => event.type).join() !== changes.map((status) => `letter.${status}`).join())
        wrong.push(`${id}: events ${own.map((event) => event.type).join()} vs history ${changes.join()}`)
      for (const event of own) {
        const body = JSON.parse(event.body) as { sequence: number; type: string; data: { id: string } }
        if (body.sequence !== event.sequence || body.type !== event.type || body.data.id !== id) wrong.push(`${id}: body ${event.body.slice(0, 80)}`)
      }
    }
    report(`sequences: ${ids.length} letters, ${stored.length} events, cancels answered ${JSON.stringify(countBy(cancels))}; wrong: ${wrong.length}`)
    expect(wrong).toEqual([])
  }, 90_000)
})

describe('webhooks: plain http:// once WEBHOOK_ALLOW_HTTP is false', () => {
  it('a worker with WEBHOOK_ALLOW_HTTP=false sends nothing to an http:// endpoint registered while http was allowed, and records the attempt as refused_address', async () => {
    // Registered while http was allowed (development default, or WEBHOOK_ALLOW_HTTP=true once).
    const env = { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_TIMEOUT_MS: '3000', WEBHOOK_RETRY_SCHEDULE: '600000' }
    const { app, config } = await gateway('rtw-http', env)
    const owner = await adminAccount(app, 100)
    const plain = await receiver()
    const endpoint = await register(app, owner.apiKey, plain.url)
    expect(endpoint.id).toBeTruthy()
    const refused = await gateway('rtw-http-off', { ...env, WEBHOOK_ALLOW_HTTP: 'false' })
    // The same gateway configuration with http refused: a new http endpoint is a 400 there…
    const other = await adminAccount(refused.app, 100)
    const again = await publicClient(refused.app, other.apiKey).post('/webhooks', { url: plain.url })
    expect(again.statusCode).toBe(400)
    // …and a webhook worker with WEBHOOK_ALLOW_HTTP=false sends nothing to the one already registered.
    const workerConfig = loadConfig({
      DATABASE_URL: config.databaseUrl,
      REDIS_URL: config.redisUrl,
      QUEUE_PREFIX: config.queuePrefix,
      ARTIFACTS_DIR: config.artifactsDir,
      ADMIN_TOKEN,
      LOG_LEVEL: 'silent',
      ...env,
      WEBHOOK_ALLOW_HTTP: 'false',
    })
    expect(workerConfig.webhooks.allowHttp).toBe(false)
    const worker = startWebhookWorker({ config: workerConfig, db: app.db, log: silentLog })
    closers.push(() => worker.close())
    const sent = await publicClient(app, owner.apiKey).post('/single', singleLetter(owner, { name: 'Clarisa', surname: 'Enclaro' }))
    expect(sent.statusCode, sent.body).toBe(200)
    const refusals = () =>
      app.db
        .execute<{ error: string | null }>(sql`SELECT error FROM webhook_attempts WHERE endpoint_id = ${endpoint.id}::uuid`)
        .then((rows) => rows.map((row) => row.error))
    await expect.poll(refusals, { timeout: 10_000, interval: 100 }).toContain('refused_address')
    const inClear = plain.received.filter((webhook) => webhook.body.includes('Enclaro'))
    report(
      `http:// endpoint with WEBHOOK_ALLOW_HTTP=false on the worker: ${plain.received.length} deliveries over plain http, ${inClear.length} carrying the recipient's name`,
    )
    await removeEndpoints(app.db)
    expect(inClear.length).toBe(0)
    expect(plain.received).toHaveLength(0)
  }, 60_000)
})
