import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { and, eq, isNull } from 'drizzle-orm'
import type { Redis } from 'ioredis'
import { apiKeys, type Db } from '@letters/db'
import { ApiError } from '../../errors.js'
import { closeRedis } from '../external/redis.js'
import { hashApiKey, revokeApiKey } from '../../services/api-keys.js'

export interface Caller {
  accountId: string
  keyId: string
}

declare module 'fastify' {
  interface FastifyInstance {
    apiKeyAuth: ApiKeyAuth
  }
  interface FastifyRequest {
    /** The account behind a valid X-API-KEY; null when the key is missing, unknown or revoked. */
    caller: Caller | null
  }
}

/** How long a replica trusts what it learnt about a key without asking Postgres again. */
const CACHE_TTL_MS = 1000
const MAX_CACHED_KEYS = 50_000
/** How long start-up waits for the revocation channel before going on without it. */
const SUBSCRIBE_WAIT_MS = 2000

/**
 * Resolves API keys to accounts without a database round trip per request: each replica keeps
 * what it looked up for one second. A revocation is published on Redis, so every replica forgets
 * the key at once; if that message is lost, the one-second expiry still bounds the delay.
 */
export class ApiKeyAuth {
  private readonly cache = new Map<string, { caller: Caller | null; expiresAt: number }>()
  private subscriber: Redis | undefined

  constructor(
    private readonly db: Db,
    private readonly redis: Redis,
    private readonly channel: string,
  ) {}

  async start(): Promise<void> {
    this.subscriber = this.redis.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null, connectionName: 'gateway-api-key-revocations' })
    this.subscriber.on('error', () => {})
    this.subscriber.on('message', (_channel, keyHash: string) => this.cache.delete(keyHash))
    // Start even while Redis is down: ioredis subscribes once it connects (and again after each
    // reconnection), and until then the one-second expiry bounds what a replica may miss.
    const subscribed = this.subscriber.subscribe(this.channel).catch(() => {})
    await Promise.race([subscribed, new Promise((resolve) => setTimeout(resolve, SUBSCRIBE_WAIT_MS).unref())])
  }

  async stop(): Promise<void> {
    if (this.subscriber) await closeRedis(this.subscriber)
  }

  async identify(key: string | undefined): Promise<Caller | null> {
    if (!key) return null
    const keyHash = hashApiKey(key)
    const now = Date.now()
    const cached = this.cache.get(keyHash)
    if (cached && cached.expiresAt > now) return cached.caller

    const [row] = await this.db
      .select({ keyId: apiKeys.id, accountId: apiKeys.accountId })
      .from(apiKeys)
      .where(and(eq(apiKeys.keyHash, keyHash), isNull(apiKeys.revokedAt)))
    const caller = row ?? null
    if (this.cache.size >= MAX_CACHED_KEYS) this.cache.clear()
    this.cache.set(keyHash, { caller, expiresAt: now + CACHE_TTL_MS })
    return caller
  }

  /** Revokes in Postgres, then tells every replica. Returns false for an unknown key id. */
  async revoke(keyId: string): Promise<boolean> {
    const { found, keyHash } = await revokeApiKey(this.db, keyId)
    if (!found || !keyHash) return false
    this.cache.delete(keyHash)
    await this.redis.publish(this.channel, keyHash).catch(() => {})
    return true
  }
}

export const unauthorized = () => new ApiError(401, 'La API key no es válida o no se ha enviado en la cabecera X-API-KEY')

/** Refuses a request whose key did not identify an account. */
export async function requireCaller(request: FastifyRequest): Promise<void> {
  if (!request.caller) throw unauthorized()
}

async function apiKeyAuth(app: FastifyInstance) {
  const auth = new ApiKeyAuth(app.db, app.redis, `${app.config.queuePrefix}:api-key-revoked`)
  await auth.start()
  app.decorate('apiKeyAuth', auth)
  app.decorateRequest('caller', null)
  app.addHook('onClose', () => auth.stop())
}

export default fp(apiKeyAuth, { name: 'api-key-auth', dependencies: ['postgres', 'redis', 'config'] })

/** Reads X-API-KEY into `request.caller`. Added to the public scope; it never rejects by itself. */
export function identifyCaller(app: FastifyInstance) {
  return async (request: FastifyRequest) => {
    const header = request.headers['x-api-key']
    request.caller = await app.apiKeyAuth.identify(typeof header === 'string' ? header : undefined)
  }
}
