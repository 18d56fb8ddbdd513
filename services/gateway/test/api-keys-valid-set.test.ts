import { describe, expect, vi } from 'vitest'
import { apiKeys } from '@letters/db'
import { it as base } from '@letters/test/support/fixtures'
import { openGateway } from '@letters/test/support/gateway'
import { deleteKeys } from '@letters/test/support/redis-keys'
import type { App } from '../src/app.js'
import { generateApiKey, hashApiKey } from '../src/common/api-keys.js'
import { adminClient, expectError } from './helpers.js'

const MAX = 3

/** A client address of its own per test: failures are counted per address. */
let lastAddress = 0
const newAddress = () => `198.18.7.${++lastAddress}`

/**
 * A database and queue prefix of its own: the set of valid keys below is this file's alone.
 * `validKeys` is the set's Redis key; the prefix's keys are deleted once the file is done.
 */
const it = base.extend('validKeys', { scope: 'file' }, ({ gateway }, { onCleanup }) => {
  const { queuePrefix, redisUrl } = gateway.config
  onCleanup(() => deleteKeys(redisUrl, `${queuePrefix}*`))
  return `${queuePrefix}:api-keys-valid`
})
it.override({ gatewayOptions: { isolate: 'validkeys', env: { AUTH_FAILURES_MAX: String(MAX) } }, accountCredits: 0 })

const campaigns = (app: App, remoteAddress: string, key: string) =>
  app.inject({ method: 'GET', url: '/campaigns', remoteAddress, headers: { 'x-api-key': key } })

/** A key written straight into api_keys, as keys issued before the set existed were: the gateway was never told of it. */
async function keyNeverIssuedThroughTheGateway(app: App, accountId: string): Promise<string> {
  const key = generateApiKey()
  await app.db.insert(apiKeys).values({ accountId, keyHash: hashApiKey(key), displayPrefix: key.slice(0, 14) })
  return key
}

/** A key issued and then revoked through the admin API, as a forgotten job might still send. */
async function revokedKey(app: App, accountId: string): Promise<{ id: string; apiKey: string }> {
  const issued = await adminClient(app).post(`/admin/accounts/${accountId}/api-keys`, {})
  expect(issued.statusCode, issued.body).toBe(201)
  const key = issued.json<{ id: string; apiKey: string }>()
  expect((await adminClient(app).delete(`/admin/api-keys/${key.id}`)).statusCode).toBe(204)
  return key
}

/** Spends `address`'s budget of failures with the revoked key, then checks the address is locked for API keys. */
async function lockWith(app: App, address: string, revoked: string): Promise<void> {
  for (let i = 0; i < MAX; i++) expectError(await campaigns(app, address, revoked), 401, 'Unauthorized')
  expectError(await campaigns(app, address, revoked), 429, 'Too Many Requests')
}

const members = (app: App, validKeys: string, ...hashes: string[]) => app.redis.smismember(validKeys, ...hashes)

describe('the set of valid API keys', () => {
  it('lets a valid key through from an address locked by a revoked key after the set was lost (a flush, an eviction), even a key the gateway never issued', async ({
    gateway: app,
    account,
    validKeys,
  }) => {
    const unannounced = await keyNeverIssuedThroughTheGateway(app, account.id)
    const revoked = await revokedKey(app, account.id)
    await app.redis.del(validKeys)

    const address = newAddress()
    await lockWith(app, address, revoked.apiKey)
    expect((await campaigns(app, address, unannounced)).statusCode).toBe(200)
    expect((await campaigns(app, address, account.apiKey)).statusCode).toBe(200)

    // Seeing the set incomplete started a fill: it is whole again soon, so a guess from the
    // locked address is refused once more without a lookup.
    await vi.waitFor(async () => expect(await members(app, validKeys, hashApiKey(unannounced), hashApiKey(account.apiKey))).toEqual([1, 1]), { timeout: 5000 })
    expect(await members(app, validKeys, hashApiKey(revoked.apiKey))).toEqual([0])
    await vi.waitFor(async () => expectError(await campaigns(app, address, generateApiKey()), 429, 'Too Many Requests'), { timeout: 5000 })
    expect((await campaigns(app, address, unannounced)).statusCode).toBe(200)
  })

  it('is filled from api_keys when a gateway starts: keys stored before it was ever told of them pass from a locked address, revoked ones stay out', async ({
    gateway: app,
    account,
    validKeys,
  }) => {
    const unannounced = await keyNeverIssuedThroughTheGateway(app, account.id)
    const revoked = await revokedKey(app, account.id)
    // The set as a first deploy finds it: it never existed.
    await app.redis.del(validKeys)

    const replica = await openGateway({
      env: { AUTH_FAILURES_MAX: String(MAX), DATABASE_URL: app.config.databaseUrl, QUEUE_PREFIX: app.config.queuePrefix },
    })
    try {
      await vi.waitFor(async () => expect(await members(app, validKeys, hashApiKey(unannounced))).toEqual([1]), { timeout: 5000 })
      expect(await members(app, validKeys, hashApiKey(account.apiKey), hashApiKey(revoked.apiKey))).toEqual([1, 0])
      const address = newAddress()
      const fromReplica = (key: string) => replica.app.inject({ method: 'GET', url: '/campaigns', remoteAddress: address, headers: { 'x-api-key': key } })
      for (let i = 0; i < MAX; i++) expectError(await fromReplica(revoked.apiKey), 401, 'Unauthorized')
      expect((await fromReplica(unannounced)).statusCode).toBe(200)
      expectError(await fromReplica(generateApiKey()), 429, 'Too Many Requests')
    } finally {
      await replica.close()
    }
  })

  it('holds exactly the keys not revoked after fills run side by side, as replicas starting together do', async ({ gateway: app, account, validKeys }) => {
    const unannounced = await Promise.all(Array.from({ length: 5 }, () => keyNeverIssuedThroughTheGateway(app, account.id)))
    const revoked = await Promise.all(Array.from({ length: 3 }, () => revokedKey(app, account.id)))
    await app.redis.del(validKeys)

    await Promise.all([app.apiKeyAuth.fill(), app.apiKeyAuth.fill(), app.apiKeyAuth.fill()])

    const rows = await app.db.select({ keyHash: apiKeys.keyHash, revokedAt: apiKeys.revokedAt }).from(apiKeys)
    const stored = new Set(await app.redis.smembers(validKeys))
    expect(rows.filter((row) => row.revokedAt === null).every((row) => stored.has(row.keyHash))).toBe(true)
    expect(rows.filter((row) => row.revokedAt !== null).some((row) => stored.has(row.keyHash))).toBe(false)
    expect(await members(app, validKeys, ...unannounced.map(hashApiKey))).toEqual(unannounced.map(() => 1))
    expect(await members(app, validKeys, ...revoked.map((key) => hashApiKey(key.apiKey)))).toEqual(revoked.map(() => 0))
  })

  it('leaves out a key revoked while a fill is under way, after the fill read it as valid', async ({ gateway: app, account, validKeys }) => {
    const issued = await adminClient(app).post(`/admin/accounts/${account.id}/api-keys`, {})
    const victim = issued.json<{ id: string; apiKey: string }>()
    const victimHash = hashApiKey(victim.apiKey)

    // The fill has read the key as valid; before it writes what it read, the key is revoked (in
    // Postgres, out of the set, on the channel): the fill's write lands after the revocation's.
    const sadd = app.redis.sadd.bind(app.redis)
    let revokedMidFill = false
    const spy = vi.spyOn(app.redis, 'sadd').mockImplementation((async (key: string, ...hashes: string[]) => {
      if (!revokedMidFill && key === validKeys && hashes.includes(victimHash)) {
        revokedMidFill = true
        expect(await app.apiKeyAuth.revoke(victim.id)).toBe(true)
      }
      return sadd(key, ...hashes)
    }) as never)
    try {
      await app.apiKeyAuth.fill()
    } finally {
      spy.mockRestore()
    }

    expect(revokedMidFill).toBe(true)
    expect(await members(app, validKeys, victimHash, hashApiKey(account.apiKey))).toEqual([0, 1])
  })

  it("reads no address's failure count for a key this replica has found valid, and counts it as before once revoked", async ({ gateway: app, account }) => {
    const address = newAddress()
    const counter = `${app.config.queuePrefix}:auth-failures:api-key:${address}`
    // Every command this gateway sends Redis, in order: those naming the address's counter are
    // kept. Read off the client rather than Redis's MONITOR, whose first lines can reach ioredis
    // before it knows it is monitoring when other files keep Redis busy.
    const touched: string[] = []
    const send = app.redis.sendCommand.bind(app.redis)
    const spy = vi.spyOn(app.redis, 'sendCommand').mockImplementation((command, stream) => {
      if (command.args.some((arg) => String(arg) === counter)) touched.push(command.name.toLowerCase())
      return send(command, stream)
    })
    try {
      // Issued through the admin API: this replica knows it valid before its first request.
      expect((await campaigns(app, address, account.apiKey)).statusCode).toBe(200)
      expect(touched).toEqual([])

      const revoked = await revokedKey(app, account.id)
      expectError(await campaigns(app, address, revoked.apiKey), 401, 'Unauthorized')
      // Unknown to this replica as valid: the count read first, then the failure counted.
      expect(touched).toContain('get')
      expect(touched).toContain('eval')
    } finally {
      spy.mockRestore()
    }
  })
})
