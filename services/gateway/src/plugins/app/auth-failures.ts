import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Redis } from 'ioredis'
import { ApiError } from '../../errors.js'

declare module 'fastify' {
  interface FastifyInstance {
    authFailures: AuthFailures
  }
}

/** A window of failures: how many so far and when the window closes (epoch ms). */
interface Window {
  count: number
  endsAt: number
}

/** Addresses a replica tracks by itself while Redis is away; past it, expired windows are dropped first. */
const MAX_LOCAL_ADDRESSES = 100_000

/** Counts one attempt; the window opens with the first and is not stretched by later ones. */
const COUNT_ATTEMPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return { count, redis.call('PTTL', KEYS[1]) }`

/** Takes back an attempt that authenticated; a window that has ended is left alone. */
const REFUND_ATTEMPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('DECR', KEYS[1]) end
return 0`

/**
 * Failed authentications (a wrong admin token, an API key that is malformed, unknown or revoked)
 * per client IP: `max` per window, then 429 with Retry-After until the window ends.
 *
 * Every attempt is counted before the credential is compared or looked up, and given back when
 * it was right. So an address over the limit costs no database work whatever it sends, however
 * many requests it has in flight at once, and a right credential from it waits too: a guess
 * that happens to be right must not get through.
 *
 * Counted in Redis so every replica agrees. While Redis cannot be reached each replica counts
 * in its own memory instead: the limit still holds, at most `max` per replica, and clients that
 * authenticate correctly are never affected.
 */
export class AuthFailures {
  private readonly local = new Map<string, Window>()

  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
    private readonly max: number,
    private readonly windowMs: number,
  ) {}

  /**
   * Checks a credential as one attempt of the request's address: counted first (past the limit,
   * 429 and `verify` never runs), given back unless `verify` found it wrong (null). A check that
   * throws (Postgres down) is given back too: an outage must not lock clients out afterwards.
   */
  async check<T>(request: FastifyRequest, reply: FastifyReply, verify: () => Promise<T | null>): Promise<T | null> {
    const window = await this.count(request.ip)
    if (window.count > this.max) throw this.refusal(reply, window)
    let wrong = false
    try {
      const result = await verify()
      wrong = result === null
      return result
    } finally {
      if (!wrong) await this.giveBack(request.ip)
    }
  }

  private async giveBack(ip: string): Promise<void> {
    try {
      await this.redis.eval(REFUND_ATTEMPT, 1, this.key(ip))
    } catch {
      const window = this.local.get(ip)
      if (window && window.count > 0) window.count -= 1
    }
  }

  private refusal(reply: FastifyReply, window: Window): ApiError {
    const seconds = Math.max(1, Math.ceil((window.endsAt - Date.now()) / 1000))
    reply.header('retry-after', String(seconds))
    return new ApiError(429, `Demasiados intentos de autenticación fallidos desde esta dirección; inténtalo de nuevo en ${seconds} s`)
  }

  private key(ip: string): string {
    return `${this.keyPrefix}${ip}`
  }

  private async count(ip: string): Promise<Window> {
    try {
      const [count, ttl] = (await this.redis.eval(COUNT_ATTEMPT, 1, this.key(ip), this.windowMs)) as [number, number]
      return { count, endsAt: Date.now() + Math.max(ttl, 0) }
    } catch {
      return this.countLocally(ip)
    }
  }

  private countLocally(ip: string): Window {
    const now = Date.now()
    let window = this.local.get(ip)
    if (!window || window.endsAt <= now) {
      if (this.local.size >= MAX_LOCAL_ADDRESSES) {
        for (const [address, open] of this.local) if (open.endsAt <= now) this.local.delete(address)
        if (this.local.size >= MAX_LOCAL_ADDRESSES) this.local.clear()
      }
      window = { count: 0, endsAt: now + this.windowMs }
      this.local.set(ip, window)
    }
    window.count += 1
    return window
  }
}

export default fp(
  async (app: FastifyInstance) => {
    const { max, windowMs } = app.config.authFailures
    app.decorate('authFailures', new AuthFailures(app.redis, `${app.config.queuePrefix}:auth-failures:`, max, windowMs))
  },
  { name: 'auth-failures', dependencies: ['config', 'redis'] },
)
