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
 * per client IP (request.ip: the client an Ingress names when TRUST_PROXY lists it): `max` per
 * window, then every wrong credential from the address is answered 429 with Retry-After until
 * the window ends, instead of 401.
 *
 * Many clients may share one address (a NAT, a proxy), so a right credential always goes
 * through, whatever the others did: API keys carry 256 random bits and the admin and floor
 * tokens are long random strings, out of reach of guessing, so refusing a right one would
 * protect nothing and lock honest clients out. What the limit saves is work: the address's
 * count is read before the credential is checked, and over the limit only a check that costs
 * nothing (comparing a token, an API key's shape and checksum) or one worth its cost
 * (`worthChecking`: a key known to be valid) is made; anything else is refused without asking
 * Postgres. Only a wrong credential is counted.
 * Guesses already in flight when the limit is reached still get their 401: the overshoot is
 * bounded by how many requests one address has open at once.
 *
 * Counted in Redis so every replica agrees. While Redis cannot be reached each replica counts
 * in its own memory instead: the limit still holds, at most `max` per replica.
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
   * Checks a credential for the request's address. Within the limit: `verify` runs and a wrong
   * credential (null) is counted. Past it: `verify` runs only if `worthChecking` says so (by
   * default it does: a comparison costs nothing), a right credential is returned as always and
   * anything else is answered 429. A check that throws (Postgres down) is not a failure: an
   * outage must not lock clients out afterwards.
   */
  async check<T>(
    request: FastifyRequest,
    reply: FastifyReply,
    verify: () => Promise<T | null>,
    worthChecking: () => Promise<boolean> = async () => true,
  ): Promise<T | null> {
    const ip = request.ip
    const window = await this.current(ip)
    const pastLimit = window.count >= this.max
    if (pastLimit && !(await worthChecking())) throw this.refusal(reply, window)
    const result = await verify()
    if (result !== null) return result
    // Past the limit a further failure changes nothing: it is not written.
    if (pastLimit) throw this.refusal(reply, window)
    await this.countFailure(ip)
    return null
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
