// Under faults: API-key authentication behind proxies. A valid key is never refused for other clients' failures (an
// address locked by guessers or a revoked key, a key no replica has seen, a lost set of valid keys), and
// X-Forwarded-For moves a client out of its limit only when the peer is a proxy TRUST_PROXY lists. Every attack runs
// against gateways on a database and queue prefix of their own. Each test is named after the rule it guards; every
// figure measured is printed on a line starting with `###`.
import { randomUUID } from 'node:crypto'
import { afterAll, describe, expect, it } from 'vitest'
import { sql } from 'drizzle-orm'
import { Redis } from 'ioredis'
import { adminAccount } from '../support/accounts.js'
import { closers, countBy, gateway, report, sleep, type App, closeAll } from '../support/fault-suites.js'
import { adminClient, openGateway } from '../support/gateway.js'
import { deleteKeys } from '../support/redis-keys.js'

afterAll(closeAll)

const MAX_FAILURES = 5

/** A GET of the public API as `peer` (the TCP peer) with `headers`: only its status. */
async function call(app: App, peer: string, headers: Record<string, string>, url = '/campaigns') {
  return (await app.inject({ method: 'GET', url, headers, remoteAddress: peer })).statusCode
}

/** Well-formed keys (right prefix and checksum) that no account has: what a guesser sends. */
const guessedKey = async () => (await import('../../services/gateway/src/common/api-keys.js')).generateApiKey()

/** Spends `peer`'s budget of failures (with `forwardedFor`, if any) and checks the next failure is a 429. */
async function lockOut(app: App, peer: string, forwardedFor?: (turn: number) => string) {
  for (let turn = 0; turn <= MAX_FAILURES; turn++) {
    const status = await call(app, peer, { 'x-api-key': await guessedKey(), ...(forwardedFor ? { 'x-forwarded-for': forwardedFor(turn) } : {}) })
    expect(status).toBe(turn < MAX_FAILURES ? 401 : 429)
  }
}

/** Two replicas of the gateway on one database and prefix of their own. */
async function replicas(label: string, env: Record<string, string> = {}) {
  const first = await gateway(label, { AUTH_FAILURES_MAX: String(MAX_FAILURES), RATE_LIMIT_MAX: '100000', ...env })
  const second = await openGateway({
    checkContract: false,
    env: {
      AUTH_FAILURES_MAX: String(MAX_FAILURES),
      RATE_LIMIT_MAX: '100000',
      ...env,
      DATABASE_URL: first.config.databaseUrl,
      QUEUE_PREFIX: first.config.queuePrefix,
    },
  })
  closers.push(() => second.close())
  return [first, second] as const
}

describe('auth: a revoked key hammering next to a valid one on one address', () => {
  it('over 3 s of a revoked key every 5 ms, the valid key (never seen by the second replica) is never refused and the revoked one never accepted', async () => {
    const [one, two] = await replicas('rta-revoked')
    const owner = await adminAccount(one.app, 0)
    const issued = await adminClient(one.app).post(`/admin/accounts/${owner.id}/api-keys`, {})
    const revoked = issued.json<{ id: string; apiKey: string }>()
    expect((await adminClient(one.app).delete(`/admin/api-keys/${revoked.id}`)).statusCode).toBe(204)
    const fresh = (await adminClient(one.app).post(`/admin/accounts/${owner.id}/api-keys`, {})).json<{ apiKey: string }>().apiKey
    const peer = '198.51.100.23'
    const until = Date.now() + 3000
    const hammer: number[] = []
    const honest: number[] = []
    await Promise.all([
      (async () => {
        for (let turn = 0; Date.now() < until; turn++) {
          hammer.push(await call(turn % 2 ? one.app : two.app, peer, { 'x-api-key': revoked.apiKey }))
          await sleep(5)
        }
      })(),
      (async () => {
        await sleep(300)
        for (let turn = 0; Date.now() < until; turn++) {
          honest.push(await call(turn % 2 ? two.app : one.app, peer, { 'x-api-key': turn < 10 ? fresh : owner.apiKey }))
          await sleep(40)
        }
      })(),
    ])
    report(`revoked key: ${JSON.stringify(countBy(hammer))}; valid keys from the same address: ${JSON.stringify(countBy(honest))}`)
    expect(hammer.filter((status) => status === 200)).toEqual([])
    expect(hammer.filter((status) => status === 429).length).toBeGreaterThan(0)
    expect(honest.filter((status) => status !== 200)).toEqual([])
  }, 60_000)
})

describe('auth: a valid key no replica has seen, from an address over its limit', () => {
  it('a key issued by one replica goes through at once on another from a locked address', async () => {
    const [one, two] = await replicas('rta-seen')
    const owner = await adminAccount(one.app, 0)
    const peer = '198.51.100.31'
    await lockOut(two.app, peer)
    expect(await call(two.app, peer, { 'x-api-key': owner.apiKey })).toBe(200)
  }, 30_000)

  it('lets a valid key stored before this release (here one in the format before checksums) through from an address other clients locked', async () => {
    const first = await gateway('rta-legacy', { AUTH_FAILURES_MAX: String(MAX_FAILURES), RATE_LIMIT_MAX: '100000' })
    const owner = await adminAccount(first.app, 0)
    const { hashApiKey } = await import('../../services/gateway/src/common/api-keys.js')
    // A key issued before checksums existed: still valid (api-keys.ts LEGACY_KEY), only a lookup can tell.
    const legacy = `lk_live_${randomUUID().replaceAll('-', '')}${'A'.repeat(11)}`
    expect(legacy).toMatch(/^lk_live_[A-Za-z0-9_-]{43}$/)
    await first.app.db.execute(
      sql`INSERT INTO api_keys (account_id, key_hash, display_prefix, livemode) VALUES (${owner.id}::uuid, ${hashApiKey(legacy)}, ${legacy.slice(0, 14)}, true)`,
    )
    // Before this release there was no set of valid keys; the release's replicas start on that.
    await deleteKeys(first.config.redisUrl, `${first.config.queuePrefix}:api-keys-valid`)
    const upgraded = await openGateway({
      checkContract: false,
      env: {
        AUTH_FAILURES_MAX: String(MAX_FAILURES),
        RATE_LIMIT_MAX: '100000',
        DATABASE_URL: first.config.databaseUrl,
        QUEUE_PREFIX: first.config.queuePrefix,
      },
    })
    closers.push(() => upgraded.close())
    const peer = '198.51.100.32'
    await lockOut(upgraded.app, peer)
    const fromLocked = await call(upgraded.app, peer, { 'x-api-key': legacy })
    const fromElsewhere = await call(upgraded.app, '198.51.100.99', { 'x-api-key': legacy })
    const fromLockedOnceSeen = await call(upgraded.app, peer, { 'x-api-key': legacy })
    report(
      `key stored before the release: from the locked address ${fromLocked}; from another address ${fromElsewhere}; from the locked address once seen ${fromLockedOnceSeen}`,
    )
    expect(fromElsewhere).toBe(200)
    expect(fromLocked).toBe(200)
  }, 30_000)

  it('lets a valid key through from a locked address once Redis lost the set of valid keys (keys of the prefix deleted, a Redis without persistence restarted)', async () => {
    const [one, two] = await replicas('rta-lostset')
    const owner = await adminAccount(one.app, 0)
    expect(await call(one.app, '198.51.100.40', { 'x-api-key': owner.apiKey })).toBe(200)
    await deleteKeys(one.config.redisUrl, `${one.config.queuePrefix}:api-keys-valid`)
    const peer = '198.51.100.41'
    await lockOut(two.app, peer)
    const statuses: number[] = []
    for (let turn = 0; turn < 5; turn++) {
      statuses.push(await call(two.app, peer, { 'x-api-key': owner.apiKey }))
      // A guesser keeps the address over its limit meanwhile.
      await call(two.app, peer, { 'x-api-key': await guessedKey() })
      await sleep(300)
    }
    // The replica that saw it still lets it in, but never tells the shared set again: behind a load balancer the client flaps.
    const viaOne = await call(one.app, peer, { 'x-api-key': owner.apiKey })
    const viaTwoAfter = await call(two.app, peer, { 'x-api-key': owner.apiKey })
    report(
      `valid key on a replica that never saw it, after the valid-key set was lost, from a locked address: ${JSON.stringify(statuses)}; ` +
        `via the replica that saw it ${viaOne}, then via the other again ${viaTwoAfter}`,
    )
    expect(statuses).toEqual([200, 200, 200, 200, 200])
  }, 30_000)
})

describe('auth: X-Forwarded-For with TRUST_PROXY empty', () => {
  it('no spoofed header (several entries, garbage, IPv6, 8 KB) moves a locked client out of its limit, nor locks a valid key out', async () => {
    const { app } = await gateway('rta-noproxy', { AUTH_FAILURES_MAX: String(MAX_FAILURES), RATE_LIMIT_MAX: '100000' })
    const owner = await adminAccount(app, 0)
    const peer = '198.51.100.50'
    await lockOut(app, peer)
    const spoofs = [
      '203.0.113.1',
      '203.0.113.1, 203.0.113.2',
      'garbage',
      '::1',
      '2001:db8::1',
      '127.0.0.1',
      'unknown, , ,',
      Array(600).fill('203.0.113.9').join(', '),
    ]
    const wrong: number[] = []
    const right: number[] = []
    for (const spoof of spoofs) {
      wrong.push(await call(app, peer, { 'x-api-key': await guessedKey(), 'x-forwarded-for': spoof }))
      right.push(await call(app, peer, { 'x-api-key': owner.apiKey, 'x-forwarded-for': spoof }))
    }
    report(`TRUST_PROXY empty, spoofed X-Forwarded-For from a locked peer: guesses ${JSON.stringify(wrong)}, valid key ${JSON.stringify(right)}`)
    expect(wrong).toEqual(spoofs.map(() => 429))
    expect(right).toEqual(spoofs.map(() => 200))
  }, 30_000)
})

describe('auth: X-Forwarded-For with TRUST_PROXY=127.0.0.1', () => {
  const env = { AUTH_FAILURES_MAX: String(MAX_FAILURES), RATE_LIMIT_MAX: '100000', TRUST_PROXY: '127.0.0.1' }

  it('the rightmost entry the proxy did not add is the client; an untrusted peer’s header is ignored; a long header costs nothing', async () => {
    const { app, config } = await gateway('rta-proxy', env)
    const owner = await adminAccount(app, 0)
    // The client writes entries of its own; the proxy appends the address it saw (203.0.113.7).
    await lockOut(app, '127.0.0.1', (turn) => `198.51.100.${turn}, 203.0.113.7`)
    expect(await call(app, '127.0.0.1', { 'x-api-key': await guessedKey(), 'x-forwarded-for': '10.0.0.1, 203.0.113.7' })).toBe(429)
    expect(await call(app, '127.0.0.1', { 'x-api-key': owner.apiKey, 'x-forwarded-for': '10.0.0.1, 203.0.113.7' })).toBe(200)
    expect(await call(app, '127.0.0.1', { 'x-api-key': await guessedKey(), 'x-forwarded-for': '203.0.113.8' })).toBe(401)
    // A peer TRUST_PROXY does not list: its header is ignored, its own address counts.
    await lockOut(app, '203.0.113.60', (turn) => `203.0.113.${100 + turn}`)
    expect(await call(app, '203.0.113.60', { 'x-api-key': await guessedKey(), 'x-forwarded-for': '203.0.113.61' })).toBe(429)
    // The proxy's peer as IPv4-mapped IPv6 (a dual-stack listener) is still the proxy.
    expect(await call(app, '::ffff:127.0.0.1', { 'x-api-key': await guessedKey(), 'x-forwarded-for': '10.0.0.2, 203.0.113.7' })).toBe(429)
    // 700 entries: answered like one.
    const long = [...Array.from({ length: 700 }, (_, n) => `198.51.${n % 250}.${n % 200}`), '203.0.113.7'].join(', ')
    const started = performance.now()
    const longStatus = await call(app, '127.0.0.1', { 'x-api-key': await guessedKey(), 'x-forwarded-for': long })
    const took = Math.round(performance.now() - started)
    // Garbage as the only entry: what does request.ip become?
    await call(app, '127.0.0.1', { 'x-api-key': await guessedKey(), 'x-forwarded-for': 'not-an-ip' })
    const redis = new Redis(config.redisUrl)
    const buckets = (await redis.keys(`${config.queuePrefix}:auth-failures:*`)).map((key) => key.slice(`${config.queuePrefix}:auth-failures:`.length))
    redis.disconnect()
    report(`TRUST_PROXY=127.0.0.1: ${long.length}-byte header answered ${longStatus} in ${took} ms; failure buckets: ${JSON.stringify(buckets)}`)
    expect(longStatus).toBe(429)
    expect(buckets).not.toContain('127.0.0.1')
  }, 30_000)

  it('counts an IPv6 client by its /64 in one spelling: one address per guess out of its /64 is limited', async () => {
    const { app } = await gateway('rta-ipv6', env)
    const statuses: number[] = []
    // What an Ingress appends for a client that rotates through its own /64 (2^64 addresses).
    for (let n = 1; n <= 40; n++)
      statuses.push(await call(app, '127.0.0.1', { 'x-api-key': await guessedKey(), 'x-forwarded-for': `2001:db8:1:2::${n.toString(16)}` }))
    // And one address written in several spellings: a bucket each.
    const spellings = ['2001:db8:1:3::1', '2001:DB8:1:3::1', '2001:db8:1:3:0:0:0:1', '2001:0db8:0001:0003:0000:0000:0000:0001']
    const bySpelling: number[] = []
    for (let turn = 0; turn < spellings.length * MAX_FAILURES; turn++)
      bySpelling.push(await call(app, '127.0.0.1', { 'x-api-key': await guessedKey(), 'x-forwarded-for': spellings[turn % spellings.length]! }))
    report(
      `40 guesses from 40 addresses of one IPv6 /64: ${JSON.stringify(countBy(statuses))}; ${bySpelling.length} guesses from one IPv6 address in ${spellings.length} spellings: ${JSON.stringify(countBy(bySpelling))}`,
    )
    expect(statuses.filter((status) => status === 401).length).toBeLessThanOrEqual(MAX_FAILURES)
    expect(bySpelling.filter((status) => status === 401).length).toBeLessThanOrEqual(MAX_FAILURES)
  }, 30_000)
})
