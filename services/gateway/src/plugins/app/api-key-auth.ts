import { randomUUID } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { and, asc, eq, gt, inArray, isNotNull, isNull } from 'drizzle-orm'
import type { Redis } from 'ioredis'
import { apiKeys, type Db } from '@letters/db'
import { BackgroundLoop, type Logger } from '@letters/pipeline'
import type { Caller } from '../../common/caller.js'
import { closeRedis } from '../external/redis.js'
import { apiKeyFormat, hashApiKey, revokeApiKey } from '../../common/api-keys.js'

declare module 'fastify' {
  interface FastifyInstance {
    apiKeyAuth: ApiKeyAuth
  }
}

/** How long a replica trusts what it learnt about a key without asking Postgres again. */
const CACHE_TTL_MS = 1000
const MAX_CACHED_KEYS = 50_000
/** How long start-up waits for the revocation channel before going on without it. */
const SUBSCRIBE_WAIT_MS = 2000
/** Rows of api_keys a fill of the set of valid keys reads at a time. */
const FILL_CHUNK = 1000
/** How often each replica checks that the set of valid keys is still whole. */
const FILL_CHECK_INTERVAL_MS = 30_000
/**
 * A member of the set (never a key's hash, which is hex) added once a fill has put every valid
 * key in it. It is a member rather than a key of its own so that whatever removes the set (a
 * flush, an eviction, a DEL) removes the mark with it.
 */
const FILLED = '(filled)'

/**
 * Ends a fill: marks the set whole, but only if the fill's own member is still there. If it is
 * gone, the set was lost while the fill ran and what the fill wrote before that is missing.
 */
const FINISH_FILL = `
if redis.call('SREM', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('SADD', KEYS[1], ARGV[2])
return 1`

/**
 * Resolves API keys to accounts without a database round trip per request: each replica keeps
 * what it looked up for one second. A revocation is published on Redis, so every replica forgets
 * the key at once; if that message is lost, the one-second expiry still bounds the delay.
 *
 * It also remembers which keys are valid, for as long as they are: a Redis set of the hashes of
 * keys issued or found valid, shared by the replicas (and, while Redis is away, what this replica
 * has seen). A key leaves it when it is revoked or a lookup no longer finds it. The set never
 * lets a key in (Postgres decides that): it tells which keys from an address past its limit of
 * failures are worth a lookup, so that a valid key still gets one while a guessed one does not.
 *
 * Keys stored without the gateway hearing of them (issued before the set existed, written by a
 * seed) and a set lost with Redis's data would otherwise be refused from such an address for as
 * long as it stays locked, so the set is filled from api_keys: when a replica starts, and again
 * when a replica's periodic check or a request finds it no longer marked whole. Until it is whole
 * again, a key it does not hold is looked up.
 */
export class ApiKeyAuth {
  private readonly cache = new Map<string, { caller: Caller | null; expiresAt: number }>()
  /** Lookups under way, by key hash: concurrent requests with one key share one query. */
  private readonly lookups = new Map<string, Promise<Caller | null>>()
  /** Hashes of keys this replica found valid (it tells the shared set the first time). */
  private readonly seenValidHashes = new Set<string>()
  private subscriber: Redis | undefined
  /** Fills the set when this replica starts and whenever it is found no longer whole. */
  private readonly filler: BackgroundLoop
  private filledOnce = false

  constructor(
    private readonly db: Db,
    private readonly redis: Redis,
    private readonly channel: string,
    private readonly validKeys: string,
    log: Logger,
  ) {
    this.filler = new BackgroundLoop({
      name: 'valid API keys fill',
      log,
      tick: () => this.fillIfNeeded(),
      intervalMs: FILL_CHECK_INTERVAL_MS,
      failureMessage: 'could not fill the set of valid API keys; the next round tries again',
    })
  }

  async start(): Promise<void> {
    this.subscriber = this.redis.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null, connectionName: 'gateway-api-key-revocations' })
    this.subscriber.on('error', () => {})
    this.subscriber.on('message', (_channel, keyHash: string) => {
      this.cache.delete(keyHash)
      this.seenValidHashes.delete(keyHash)
    })
    // Start even while Redis is down: ioredis subscribes once it connects (and again after each
    // reconnection), and until then the one-second expiry bounds what a replica may miss.
    const subscribed = this.subscriber.subscribe(this.channel).catch(() => {})
    await Promise.race([subscribed, new Promise((resolve) => setTimeout(resolve, SUBSCRIBE_WAIT_MS).unref())])
  }

  /** Starts filling the set: at once, then whenever it is found no longer whole. */
  startFilling(): void {
    this.filler.start()
  }

  async stop(): Promise<void> {
    await this.filler.stop()
    if (this.subscriber) await closeRedis(this.subscriber)
  }

  /** The account of a key this replica looked up less than a second ago and found valid. */
  knownCaller(key: string): Caller | undefined {
    const cached = this.cache.get(hashApiKey(key))
    return cached && cached.expiresAt > Date.now() && cached.caller ? cached.caller : undefined
  }

  /** Whether this replica has found `key` valid (and not heard of its revocation since): a key always worth a lookup. */
  seenValid(key: string): boolean {
    return this.seenValidHashes.has(hashApiKey(key))
  }

  /** The account behind a key, or null. A string that cannot be a key (wrong shape or checksum) is null without a lookup. */
  async identify(key: string): Promise<Caller | null> {
    if (!apiKeyFormat(key)) return null
    const keyHash = hashApiKey(key)
    const cached = this.cache.get(keyHash)
    if (cached && cached.expiresAt > Date.now()) return cached.caller
    const underWay = this.lookups.get(keyHash)
    if (underWay) return underWay
    const lookup = this.lookUp(keyHash).finally(() => this.lookups.delete(keyHash))
    this.lookups.set(keyHash, lookup)
    return lookup
  }

  private async lookUp(keyHash: string): Promise<Caller | null> {
    const [row] = await this.db
      .select({ keyId: apiKeys.id, accountId: apiKeys.accountId, livemode: apiKeys.livemode })
      .from(apiKeys)
      .where(and(eq(apiKeys.keyHash, keyHash), isNull(apiKeys.revokedAt)))
    const caller = row ?? null
    if (this.cache.size >= MAX_CACHED_KEYS) this.cache.clear()
    this.cache.set(keyHash, { caller, expiresAt: Date.now() + CACHE_TTL_MS })
    // Not waited for: the answer does not depend on them, and the next lookup writes again.
    if (caller && !this.seenValidHashes.has(keyHash)) void this.rememberValid(keyHash)
    if (!caller) void this.forgetValid(keyHash)
    return caller
  }

  /**
   * Whether checking `key` is worth it for an address past its limit of failures: it is when the
   * check costs nothing (a string that cannot be a key, a key this replica has an answer for or
   * is already looking up) or the key is known to be valid. A well-formed key nobody has seen
   * valid, what a guesser sends, is not worth a lookup.
   */
  async worthChecking(key: string): Promise<boolean> {
    if (!apiKeyFormat(key)) return true
    const keyHash = hashApiKey(key)
    const cached = this.cache.get(keyHash)
    if ((cached && cached.expiresAt > Date.now()) || this.lookups.has(keyHash) || this.seenValidHashes.has(keyHash)) return true
    // With Redis away only what this replica has seen counts, as if the set were whole.
    const [known, whole] = await this.redis.smismember(this.validKeys, keyHash, FILLED).catch(() => [0, 1])
    if (known === 1) return true
    if (whole === 1) return false
    // The set was lost (a flush, an eviction) and is not whole again yet: a key it does not hold
    // may still be valid, and refusing it could lock an honest client out. A lookup decides
    // until a fill, started now, has made the set whole.
    this.filler.poke()
    return true
  }

  /**
   * Puts the hash of every key not revoked in the set, reading api_keys by hash a chunk at a
   * time, then marks the set whole. Any number of fills may run at once (replicas starting
   * together): each only adds what Postgres holds as valid.
   *
   * A key revoked while a fill runs must not stay in the set. A revocation commits in Postgres
   * and then removes the key from the set; so each chunk is read again once it is written, and
   * the keys by then revoked are removed. A revocation the second read does not see commits
   * after it, so its own removal comes after the fill's write.
   */
  async fill(): Promise<void> {
    // The fill's own member: gone at the end if the set was lost meanwhile. A fill that dies
    // leaves it behind, a few bytes that match no key.
    const filling = `(filling ${randomUUID()})`
    // First, so that with Redis away the round fails before reading Postgres.
    await this.redis.sadd(this.validKeys, filling)
    let after = ''
    for (;;) {
      const rows = await this.db
        .select({ keyHash: apiKeys.keyHash })
        .from(apiKeys)
        .where(and(isNull(apiKeys.revokedAt), gt(apiKeys.keyHash, after)))
        .orderBy(asc(apiKeys.keyHash))
        .limit(FILL_CHUNK)
      if (rows.length === 0) break
      const hashes = rows.map((row) => row.keyHash)
      await this.redis.sadd(this.validKeys, ...hashes)
      const revoked = await this.db
        .select({ keyHash: apiKeys.keyHash })
        .from(apiKeys)
        .where(and(inArray(apiKeys.keyHash, hashes), isNotNull(apiKeys.revokedAt)))
      if (revoked.length > 0) await this.redis.srem(this.validKeys, ...revoked.map((row) => row.keyHash))
      if (rows.length < FILL_CHUNK) break
      after = hashes[hashes.length - 1]!
    }
    if ((await this.redis.eval(FINISH_FILL, 1, this.validKeys, filling, FILLED)) !== 1) {
      throw new Error('the set of valid API keys was lost while it was being filled')
    }
  }

  /** Whether the set holds every valid key: a fill has completed since it was last lost. */
  async whole(): Promise<boolean> {
    return (await this.redis.sismember(this.validKeys, FILLED)) === 1
  }

  /** One round of the filler: a fill when this replica has not made one yet or the set is no longer whole. */
  private async fillIfNeeded(): Promise<void> {
    if (this.filledOnce && (await this.whole())) return
    await this.fill()
    this.filledOnce = true
  }

  /** A key just issued is valid before anyone uses it: its first request is let through even from an address past its limit. */
  async issued(key: string): Promise<void> {
    await this.rememberValid(hashApiKey(key))
  }

  /** Revokes in Postgres, then tells every replica. Returns false for an unknown key id (or another account's, given `accountId`). */
  async revoke(keyId: string, accountId?: string): Promise<boolean> {
    const { found, keyHash } = await revokeApiKey(this.db, keyId, accountId)
    if (!found || !keyHash) return false
    this.cache.delete(keyHash)
    await this.forgetValid(keyHash)
    await this.redis.publish(this.channel, keyHash).catch(() => {})
    return true
  }

  private async rememberValid(keyHash: string): Promise<void> {
    if (this.seenValidHashes.size >= MAX_CACHED_KEYS) this.seenValidHashes.clear()
    this.seenValidHashes.add(keyHash)
    await this.redis.sadd(this.validKeys, keyHash).catch(() => {})
  }

  private async forgetValid(keyHash: string): Promise<void> {
    this.seenValidHashes.delete(keyHash)
    await this.redis.srem(this.validKeys, keyHash).catch(() => {})
  }
}

async function apiKeyAuth(app: FastifyInstance) {
  const auth = new ApiKeyAuth(app.db, app.redis, `${app.config.queuePrefix}:api-key-revoked`, `${app.config.queuePrefix}:api-keys-valid`, app.log)
  await auth.start()
  app.decorate('apiKeyAuth', auth)
  app.decorateRequest('caller', null)
  // Once ready, not at registration: the entry point seeds the demo account in between, and the
  // first fill then finds its key.
  app.addHook('onReady', async () => auth.startFilling())
  app.addHook('onClose', () => auth.stop())
}

export default fp(apiKeyAuth, { name: 'api-key-auth', dependencies: ['postgres', 'redis', 'config', 'auth-failures'] })

/**
 * Reads X-API-KEY into `request.caller`. Added to the public API's scope; it never answers 401 itself
 * (that waits until the rate limit has counted the IP), but a key it cannot vouch for from its
 * cache is checked against the client's IP's failed API keys first: a key found wrong counts as
 * a failure, and past the limit a valid key still goes through while any other gets 429, with
 * Postgres asked only about keys known to be valid.
 */
export function identifyCaller(app: FastifyInstance) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const key = request.headers['x-api-key']
    if (typeof key !== 'string' || !key) return
    const known = app.apiKeyAuth.knownCaller(key)
    if (known) {
      request.caller = known
      return
    }
    const identify = () => app.apiKeyAuth.identify(key)
    request.caller = app.apiKeyAuth.seenValid(key)
      ? await app.authFailures.checkWorthIt('api-key', request, reply, identify)
      : await app.authFailures.check('api-key', request, reply, identify, () => app.apiKeyAuth.worthChecking(key))
  }
}
