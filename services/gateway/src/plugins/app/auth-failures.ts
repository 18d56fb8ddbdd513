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

/** Counts one failure; the window opens with the first and is not stretched by later ones. */
const COUNT_FAILURE = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return { count, redis.call('PTTL', KEYS[1]) }`

/**
 * Failed authentications (a wrong admin token, an API key that is malformed, unknown or revoked)
 * per client IP: `max` per window, then 429 with Retry-After until the window ends.
 *
 * The address's count is read before the credential is compared or looked up: an address over
 * the limit costs no database work whatever it sends, and a right credential from it waits too
 * (a guess that happens to be right must not get through). Only a wrong credential is counted,
 * so clients that authenticate correctly are never refused, however many requests they have in
 * flight. Guesses already in flight when the limit is reached still get their answer: the
 * overshoot is bounded by how many requests one address has open at once.
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
   * Checks a credential for the request's address: past the limit of failures, 429 and `verify`
   * never runs; a wrong credential (null) is counted. A check that throws (Postgres down) is not
   * a failure: an outage must not lock clients out afterwards.
   */
  async check<T>(request: FastifyRequest, reply: FastifyReply, verify: () => Promise<T | null>): Promise<T | null> {
    const window = await this.current(request.ip)
    if (window.count >= this.max) throw this.refusal(reply, window)
    const result = await verify()
    if (result === null) await this.countFailure(request.ip)
    return result
  }

  private refusal(reply: FastifyReply, window: Window): ApiError {
    const seconds = Math.max(1, Math.ceil((window.endsAt - Date.now()) / 1000))
    reply.header('retry-after', String(seconds))
    return new ApiError(429, `Demasiados intentos de autenticación fallidos desde esta dirección; inténtalo de nuevo en ${seconds} s`)
  }

  private key(ip: string): string {
    return `${this.keyPrefix}${ip}`
  }

  /** The address's failures in the current window (Redis, or this replica's memory while Redis is away). */
  private async current(ip: string): Promise<Window> {
    try {
      const [count, ttl] = (await this.redis.multi().get(this.key(ip)).pttl(this.key(ip)).exec()) ?? []
      const failed = count?.[0] ?? ttl?.[0]
      if (failed) throw failed
      return { count: Number(count?.[1] ?? 0), endsAt: Date.now() + Math.max(Number(ttl?.[1] ?? 0), 0) }
    } catch {
      return this.localWindow(ip)
    }
  }

  private async countFailure(ip: string): Promise<void> {
    try {
      await this.redis.eval(COUNT_FAILURE, 1, this.key(ip), this.windowMs)
    } catch {
      this.localWindow(ip).count += 1
    }
  }

  private localWindow(ip: string): Window {
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
