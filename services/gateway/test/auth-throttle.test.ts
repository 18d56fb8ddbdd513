import { randomBytes } from 'node:crypto'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest'
import { apiKeys } from '@letters/db'
import { ADMIN_TOKEN, isolatedDatabase } from '@letters/test/support/context'
import { deleteKeys } from '@letters/test/support/redis-keys'
import type { App } from '../src/app.js'
import { API_KEY_PREFIX, apiKeyFormat, generateApiKey, hashApiKey } from '../src/common/api-keys.js'
import { UNKNOWN_ID, adminAccount, expectError, startGateway } from './helpers.js'

const MAX = 10
const throttled = { AUTH_FAILURES_MAX: String(MAX) }

/** A client address of its own for each test: the counts live in this run's Redis for a minute. */
let lastAddress = 0
const newAddress = () => `198.51.${100 + Math.floor(++lastAddress / 250)}.${lastAddress % 250}`

const opened: App[] = []
async function gateway(overrides: Record<string, string> = {}) {
  const app = await startGateway({ ...throttled, ...overrides })
  opened.push(app)
  return app
}
afterAll(() => Promise.all(opened.splice(0).map((app) => app.close())))

const asAdmin = (token: string) => ({ authorization: `Bearer ${token}` })
const getAccount = (app: App, remoteAddress: string, headers: Record<string, string> = {}) =>
  app.inject({ method: 'GET', url: `/admin/accounts/${UNKNOWN_ID}`, remoteAddress, headers })

function expectThrottled(response: Awaited<ReturnType<App['inject']>>) {
  expectError(response, 429, 'Too Many Requests', /^Demasiados intentos de autenticación fallidos desde esta dirección; inténtalo de nuevo en \d+ s$/)
  expect(response.json()).toMatchObject({ requestId: expect.any(String) })
  const retryAfter = Number(response.headers['retry-after'])
  expect(retryAfter).toBeGreaterThanOrEqual(1)
  expect(retryAfter).toBeLessThanOrEqual(60)
}

describe('failed admin authentications', () => {
  let replicaA: App
  let replicaB: App
  beforeAll(async () => {
    replicaA = await gateway()
    replicaB = await gateway()
  })

  it('answer 429 with Retry-After past AUTH_FAILURES_MAX wrong tokens from one IP, counted across replicas, the right token included', async () => {
    const address = newAddress()
    for (let i = 0; i < MAX; i++)
      expectError(await getAccount(i % 2 ? replicaB : replicaA, address, asAdmin(`wrong-token-${i}-0123456789`)), 401, 'Unauthorized')
    expectThrottled(await getAccount(replicaB, address, asAdmin('wrong-token-again-0123456789')))
    // A guess that happens to be right gets no answer either.
    expectThrottled(await getAccount(replicaA, address, asAdmin(ADMIN_TOKEN)))
    // Another address is not affected.
    expectError(await getAccount(replicaA, newAddress(), asAdmin(ADMIN_TOKEN)), 404, 'Not Found')
  })

  it('count neither requests without a token nor right tokens', async () => {
    const address = newAddress()
    for (let i = 0; i < MAX + 5; i++) expectError(await getAccount(replicaA, address), 401, 'Unauthorized')
    for (let i = 0; i < MAX + 5; i++) expectError(await getAccount(replicaA, address, asAdmin(ADMIN_TOKEN)), 404, 'Not Found')
    for (let i = 0; i < MAX; i++) expectError(await getAccount(replicaA, address, asAdmin('not-the-token-0123456789')), 401, 'Unauthorized')
    expectThrottled(await getAccount(replicaA, address, asAdmin('not-the-token-0123456789')))
  })

  it('count wrong passwords on the queue dashboard, answered 429 in the error shape', async () => {
    const address = newAddress()
    const basic = (password: string) => ({ authorization: `Basic ${Buffer.from(`ops:${password}`).toString('base64')}` })
    const dashboard = (password: string) => replicaA.inject({ method: 'GET', url: '/ops/queues', remoteAddress: address, headers: basic(password) })
    for (let i = 0; i < MAX; i++) expectError(await dashboard(`clave-${i}-0123456789`), 401, 'Unauthorized')
    expectThrottled(await dashboard('clave-otra-0123456789'))
    expectThrottled(await dashboard(ADMIN_TOKEN))
  })

  it('keep throttling on each replica while Redis is down', async () => {
    const cutOff = await gateway({ REDIS_URL: 'redis://127.0.0.1:1' })
    const address = newAddress()
    for (let i = 0; i < MAX; i++) expectError(await getAccount(cutOff, address, asAdmin(`wrong-token-${i}-0123456789`)), 401, 'Unauthorized')
    expectThrottled(await getAccount(cutOff, address, asAdmin('wrong-token-again-0123456789')))
    expectError(await getAccount(cutOff, newAddress(), asAdmin(ADMIN_TOKEN)), 404, 'Not Found')
  })
})

describe('API keys', () => {
  let app: App
  beforeAll(async () => {
    app = await gateway()
  })

  it('are issued as lk_live_ and 49 characters whose checksum covers the prefix', async () => {
    const { apiKey } = await adminAccount(app, 0)
    expect(apiKey).toMatch(/^lk_live_[A-Za-z0-9_-]{49}$/)
    expect(apiKeyFormat(apiKey)).toBe('checksummed')
    const typo = apiKey.slice(0, 20) + (apiKey[20] === 'A' ? 'B' : 'A') + apiKey.slice(21)
    expect(apiKeyFormat(typo)).toBeUndefined()
    expect(apiKeyFormat(apiKey.slice(0, -1))).toBeUndefined()
    expect(apiKeyFormat(apiKey.replace(API_KEY_PREFIX, 'lk_test_'))).toBeUndefined()
    // Test keys, when they come, need no other format.
    expect(apiKeyFormat(generateApiKey('lk_test_'))).toBe('checksummed')
  })

  it('refuse a key with a broken checksum with 401 and without a lookup, counting it as a failure, while the right key still opens', async () => {
    const { apiKey } = await adminAccount(app, 0)
    const address = newAddress()
    const typo = apiKey.slice(0, -1) + (apiKey.endsWith('A') ? 'B' : 'A')
    for (let i = 0; i < MAX; i++) {
      expectError(
        await app.inject({ method: 'GET', url: '/campaigns', remoteAddress: address, headers: { 'x-api-key': typo } }),
        401,
        'Unauthorized',
        /API key no es válida/,
      )
    }
    expectThrottled(await app.inject({ method: 'GET', url: '/campaigns', remoteAddress: address, headers: { 'x-api-key': typo } }))
    expect((await app.inject({ method: 'GET', url: '/campaigns', remoteAddress: address, headers: { 'x-api-key': apiKey } })).statusCode).toBe(200)
  })

  it('never refuse a right key, however many requests with it arrive at once', async () => {
    const account = await adminAccount(app, 0)
    const address = newAddress()
    // A fresh replica: nothing cached, every request needs the key checked.
    const cold = await gateway()
    const campaigns = () => cold.inject({ method: 'GET', url: '/campaigns', remoteAddress: address, headers: { 'x-api-key': account.apiKey } })
    const first = await Promise.all(Array.from({ length: 3 * MAX }, campaigns))
    expect(first.map((response) => response.statusCode)).toEqual(Array(3 * MAX).fill(200))
    // Past the one-second cache, the address is as free as before.
    await new Promise((resolve) => setTimeout(resolve, 1100))
    const again = await Promise.all(Array.from({ length: 3 * MAX }, campaigns))
    expect(again.map((response) => response.statusCode)).toEqual(Array(3 * MAX).fill(200))
    const admin = await Promise.all(Array.from({ length: 3 * MAX }, () => getAccount(cold, address, asAdmin(ADMIN_TOKEN))))
    expect(admin.map((response) => response.statusCode)).toEqual(Array(3 * MAX).fill(404))
  })

  it('let a valid key through from an address past the limit while Redis is down, and refuse a well-formed unknown one without a lookup', async () => {
    const cutOff = await gateway({ REDIS_URL: 'redis://127.0.0.1:1' })
    const account = await adminAccount(cutOff, 0)
    const address = newAddress()
    const campaigns = (key: string) => cutOff.inject({ method: 'GET', url: '/campaigns', remoteAddress: address, headers: { 'x-api-key': key } })
    for (let i = 0; i < MAX; i++) expectError(await campaigns(`lk_live_not-a-key-${i}`), 401, 'Unauthorized')
    // Past the one-second cache: the replica remembers the key it issued, not a lookup it made.
    await new Promise((resolve) => setTimeout(resolve, 1100))
    expect((await campaigns(account.apiKey)).statusCode).toBe(200)
    expectThrottled(await campaigns(generateApiKey()))
  })

  it('issued before checksums (lk_live_ and 43 characters) keep working', async () => {
    const account = await adminAccount(app, 0)
    const legacy = API_KEY_PREFIX + randomBytes(32).toString('base64url')
    expect(apiKeyFormat(legacy)).toBe('legacy')
    await app.db.insert(apiKeys).values({ accountId: account.id, keyHash: hashApiKey(legacy), displayPrefix: legacy.slice(0, 14) })
    const response = await app.inject({ method: 'GET', url: '/campaigns', remoteAddress: newAddress(), headers: { 'x-api-key': legacy } })
    expect(response.statusCode, response.body).toBe(200)
  })
})

describe('guessing API keys', () => {
  const GUESSES = 2000
  let database: Awaited<ReturnType<typeof isolatedDatabase>>
  let stats: postgres.Sql
  beforeAll(async () => {
    database = await isolatedDatabase('guessing')
    stats = postgres(database.url, { max: 1, onnotice: () => {} })
  })
  afterAll(async () => {
    await stats.end({ timeout: 5 })
    await database.drop()
  })

  /**
   * Reads of api_keys Postgres has counted in the guessing database (scans of the table and of
   * its indexes), once every other connection has closed and reported. Only a key lookup or a
   * fill of the set of valid keys reads that table: autovacuum, which may visit the database at
   * any moment, counts no scan, and neither does anything else a gateway does in the background.
   */
  async function keyReads(): Promise<number> {
    // A backend reports its counts as it exits: on a loaded machine that can take a while. Read
    // before every one has gone, the count would miss reads, and a test would compare counts of
    // different things.
    await vi.waitFor(
      async () => {
        const [row] = await stats<Array<{ count: string }>>`
          SELECT count(*) AS count FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`
        expect(Number(row!.count), 'client backends still connected to the guessing database').toBe(0)
      },
      { timeout: 60_000, interval: 100 },
    )
    let previous = -1
    for (let i = 0; i < 50; i++) {
      const [row] = await stats<Array<{ count: string }>>`
        SELECT coalesce(seq_scan, 0) + coalesce(idx_scan, 0) AS count FROM pg_stat_user_tables WHERE relname = 'api_keys'`
      const count = Number(row!.count)
      if (count === previous) return count
      previous = count
      await new Promise((resolve) => setTimeout(resolve, 300))
    }
    throw new Error('the statistics of the guessing database did not settle')
  }

  /** Reads of api_keys a gateway of its own makes while `work` runs. */
  async function keyReadsDuring(work: (app: App) => Promise<void>): Promise<number> {
    const before = await keyReads()
    // A queue prefix of its own: the set of valid keys it fills is its alone. One window of
    // failures for the whole of the work, however slow the machine: the claims are about what
    // happens past AUTH_FAILURES_MAX within a window, and a window that ended part-way (a minute
    // by default; 2,000 guesses take 4 s alone, and the test may take minutes) would start the
    // count again.
    const prefix = `${inject('queuePrefix')}-guessing-${randomBytes(3).toString('hex')}`
    const app = await startGateway({ ...throttled, AUTH_FAILURES_WINDOW_MS: '3600000', DATABASE_URL: database.url, QUEUE_PREFIX: prefix })
    try {
      // Its first fill of that set done before the work starts, so that both cost the same in every run.
      await vi.waitFor(async () => expect(await app.apiKeyAuth.whole()).toBe(true), { timeout: 60_000, interval: 50 })
      await work(app)
    } finally {
      // Its connections report their counts as they close.
      await app.close()
      await deleteKeys(inject('redisUrl'), `${prefix}*`)
    }
    return (await keyReads()) - before
  }

  /**
   * Reads of api_keys `work` costs beyond what a gateway spends with no request at all
   * (filling the set of valid keys as it starts).
   */
  async function keyReadsFor(work: (app: App) => Promise<void>): Promise<number> {
    const idle = await keyReadsDuring(async () => {})
    return (await keyReadsDuring(work)) - idle
  }

  // Its 2,000 requests one after another and three gateways started: 6-9 s alone, 25 s beside two
  // CPU-bound processes on two cores.
  it(`refuses ${GUESSES} random keys from one IP with no Postgres lookup past AUTH_FAILURES_MAX, while a valid key from that IP keeps working`, async () => {
    const setup = await startGateway({ ...throttled, DATABASE_URL: database.url })
    const account = await adminAccount(setup, 0)
    await setup.close()

    const statuses: number[] = []
    let valid: Awaited<ReturnType<App['inject']>> | undefined
    const spent = await keyReadsFor(async (app) => {
      const address = newAddress()
      // What a guesser may send: noise, keys of the old shape, keys with a right checksum.
      const guesses = Array.from({ length: GUESSES }, (_, i) =>
        [
          () => `lk_live_${randomBytes(12).toString('hex')}`,
          () => API_KEY_PREFIX + randomBytes(32).toString('base64url'),
          () => generateApiKey(),
          () => randomBytes(40).toString('base64'),
        ][i % 4]!(),
      )
      for (const key of guesses) {
        statuses.push((await app.inject({ method: 'GET', url: '/campaigns', remoteAddress: address, headers: { 'x-api-key': key } })).statusCode)
      }
      // From the guesser's own address: someone else behind it holds a valid key.
      valid = await app.inject({ method: 'GET', url: '/campaigns', remoteAddress: address, headers: { 'x-api-key': account.apiKey } })
    })

    expect(statuses.slice(0, MAX)).toEqual(Array(MAX).fill(401))
    expect(statuses.slice(MAX)).toEqual(Array(GUESSES - MAX).fill(429))
    expect(valid!.statusCode, valid!.body).toBe(200)
    // At most one lookup per counted failure, plus the valid key's lookup.
    expect(spent, `${spent} reads of api_keys for ${GUESSES} guesses`).toBeLessThanOrEqual(MAX + 1)
  }, 300_000)

  // Five gateways started and closed, and the statistics read settled around each: 6-9 s alone,
  // 29 s beside two CPU-bound processes on two cores.
  it('never looks up a key whose checksum does not hold, from however many addresses, by a count shown to move for a valid key', async () => {
    const setup = await startGateway({ ...throttled, DATABASE_URL: database.url })
    const account = await adminAccount(setup, 0)
    await setup.close()
    // The control: the same count, read the same way, sees the lookup of one request with a
    // valid key. Without it, 0 below could be statistics not yet reported.
    let valid: Awaited<ReturnType<App['inject']>> | undefined
    const spentByValidKey = await keyReadsFor(async (app) => {
      valid = await app.inject({ method: 'GET', url: '/campaigns', remoteAddress: newAddress(), headers: { 'x-api-key': account.apiKey } })
    })
    expect(valid!.statusCode, valid!.body).toBe(200)
    expect(spentByValidKey, `${spentByValidKey} reads of api_keys for one request with a valid key`).toBeGreaterThanOrEqual(1)

    const statuses: number[] = []
    const spent = await keyReadsFor(async (app) => {
      for (let i = 0; i < 200; i++) {
        const key = generateApiKey()
        const broken = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A')
        statuses.push((await app.inject({ method: 'GET', url: '/campaigns', remoteAddress: newAddress(), headers: { 'x-api-key': broken } })).statusCode)
      }
    })
    expect(statuses).toEqual(Array(200).fill(401))
    expect(spent).toBe(0)
  }, 300_000)
})
