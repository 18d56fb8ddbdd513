import { createHash } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Redis } from 'ioredis'
import { ApiError } from '../../common/errors.js'
import { clientAddress } from './client-address.js'

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

/** Counters (an address and a kind of credential) a replica keeps by itself while Redis is away; past it, expired windows are dropped first. */
const MAX_LOCAL_COUNTERS = 100_000

/** Counts one failure (or takes a slot for an attempt); the window opens with the first and is not stretched by later ones. */
const COUNT_FAILURE = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return { count, redis.call('PTTL', KEYS[1]) }`

/** Gives back an attempt's slot; a window already over is left alone (a DECR would start one without an end). */
const RELEASE = `
if redis.call('EXISTS', KEYS[1]) == 1 and tonumber(redis.call('GET', KEYS[1])) > 0 then return redis.call('DECR', KEYS[1]) end
return 0`

/**
 * What a failure is counted against: each kind of credential has a count of its own per address.
 * A dashboard password is counted twice, per address (`dashboard-password`) and per email
 * (`dashboard-email`, whatever the address), so that neither many addresses against one person
 * nor one address against many people gets far.
 */
export type Credential = 'api-key' | 'admin-token' | 'floor-token' | 'metrics-token' | 'dashboard-password'

/** What a failure may be counted per, other than an address: the email a sign-in names. */
export type SubjectCredential = 'dashboard-email'

/** The credentials whose attempts take a slot before they are checked (checkReserving). */
const RESERVED = new Set<Credential | SubjectCredential>(['dashboard-password', 'dashboard-email'])

/**
 * Failed authentications (a wrong admin or floor token, an API key that is malformed, unknown or
 * revoked) per client IP (request.ip: the client an Ingress names when TRUST_PROXY lists it) and
 * per kind of credential: `max` per window, then 429 with Retry-After until the window ends,
 * instead of 401.
 *
 * Each kind is counted apart, so that one cannot lock another out of an address many clients
 * share (a NAT, a proxy): a forgotten job sending a revoked API key does not lock ops out of the
 * admin API, and a guesser of the admin token does not lock the customers' keys out.
 *
 * Past the limit, what happens to a right credential depends on the kind:
 * - A token (ADMIN_TOKEN, which is also the ops pages' password, FLOOR_TOKEN and METRICS_TOKEN)
 *   is chosen by people, who may choose a guessable one: past the limit it is refused like a
 *   wrong one, without even being compared, so that a guess that happens to be right learns
 *   nothing until the window ends. Whoever shares the address waits as well.
 * - An API key carries 256 random bits, out of reach of guessing: refusing a right one would
 *   protect nothing and lock honest clients out, so a right key always goes through. What the
 *   limit saves is work: past it, only a key worth checking (`worthChecking`: a malformed one,
 *   refused without a lookup, or one known to be valid) is checked; anything else is refused
 *   without asking Postgres.
 * Only a wrong credential is counted. A dashboard password is checked slowly (argon2id, on purpose),
 * so guesses sent all at once would all be checked before the first failure is counted: there, an
 * attempt takes its slot of the window before it is checked, atomically, and a right one gives it
 * back, so that at most `max` are checked per window however many arrive together (a person signs
 * in once; ten at once from one address or for one email is no one's use). A token is compared at
 * once and is sent by scripts many requests at a time: a guess is counted once found wrong, and
 * those in flight when the limit is reached still get their 401 (the overshoot is bounded by how
 * many requests one address has open at once).
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
   * Checks a credential of kind `credential` for the request's address. Within the limit:
   * `verify` runs and a wrong credential (null) is counted. Past it: without `worthChecking` the
   * answer is 429 and `verify` never runs; with it, `verify` runs only if it says so, a right
   * credential is returned as always and anything else is answered 429. A check that throws
   * (Postgres down) is not a failure: an outage must not lock clients out afterwards.
   */
  async check<T>(
    credential: Credential,
    request: FastifyRequest,
    reply: FastifyReply,
    verify: () => Promise<T | null>,
    worthChecking?: () => Promise<boolean>,
  ): Promise<T | null> {
    const counter = `${credential}:${clientAddress(request.ip)}`
    if (RESERVED.has(credential)) return this.checkReserving(counter, 'address', reply, verify)
    return this.checkCounter(counter, reply, verify, worthChecking)
  }

  /**
   * The same check counted per `subject` rather than per address (a sign-in's email): past the
   * limit any credential, right or wrong, is refused until the window ends. The subject is
   * stored hashed, so that the counters hold no one's address.
   */
  async checkSubject<T>(credential: SubjectCredential, subject: string, reply: FastifyReply, verify: () => Promise<T | null>): Promise<T | null> {
    const hashed = createHash('sha256').update(subject).digest('hex').slice(0, 32)
    return this.checkReserving(`${credential}:${hashed}`, 'subject', reply, verify)
  }

  private async checkCounter<T>(
    counter: string,
    reply: FastifyReply,
    verify: () => Promise<T | null>,
    worthChecking?: () => Promise<boolean>,
  ): Promise<T | null> {
    const window = await this.current(counter)
    const pastLimit = window.count >= this.max
    if (pastLimit && !(worthChecking && (await worthChecking()))) throw this.refusal(reply, window)
    const result = await verify()
    if (result !== null) return result
    // Past the limit a further failure changes nothing: it is not written.
    if (pastLimit) throw this.refusal(reply, window)
    await this.countFailure(counter)
    return null
  }

  /**
   * The same check for a credential worth checking whatever its address's window says (an API
   * key this replica has seen valid): verified first, so that a right one costs no read of the
   * window; a wrong one is then answered as `check` would have, 429 past the limit, else
   * counted and null.
   */
  async checkWorthIt<T>(credential: Credential, request: FastifyRequest, reply: FastifyReply, verify: () => Promise<T | null>): Promise<T | null> {
    const result = await verify()
    if (result !== null) return result
    const counter = `${credential}:${clientAddress(request.ip)}`
    const window = await this.current(counter)
    if (window.count >= this.max) throw this.refusal(reply, window)
    await this.countFailure(counter)
    return null
  }

  /**
   * A password: a slot of the window is taken first, so that at most `max` attempts are checked
   * in it even when they all arrive at once. A right credential gives its
   * slot back, and so does a check that could not be made (Postgres down): an outage must not
   * lock anyone out afterwards.
   */
  private async checkReserving<T>(counter: string, per: 'address' | 'subject', reply: FastifyReply, verify: () => Promise<T | null>): Promise<T | null> {
    const window = await this.reserve(counter)
    if (window.count > this.max) throw this.refusal(reply, window, per)
    let result: T | null
    try {
      result = await verify()
    } catch (error) {
      await this.release(counter)
      throw error
    }
    if (result !== null) await this.release(counter)
    return result
  }

  private async reserve(counter: string): Promise<Window> {
    try {
      const [count, ttl] = (await this.redis.eval(COUNT_FAILURE, 1, this.key(counter), this.windowMs)) as [number, number]
      return { count, endsAt: Date.now() + Math.max(ttl, 0) }
    } catch {
      const window = this.localWindow(counter)
      window.count += 1
      return { ...window }
    }
  }

  private async release(counter: string): Promise<void> {
    try {
      await this.redis.eval(RELEASE, 1, this.key(counter))
    } catch {
      const window = this.local.get(counter)
      if (window && window.count > 0) window.count -= 1
    }
  }

  private refusal(reply: FastifyReply, window: Window, per: 'address' | 'subject' = 'address'): ApiError {
    const seconds = Math.max(1, Math.ceil((window.endsAt - Date.now()) / 1000))
    reply.header('retry-after', String(seconds))
    const from = per === 'address' ? 'desde esta dirección' : 'con este correo electrónico'
    return new ApiError(429, `Demasiados intentos de autenticación fallidos ${from}; inténtalo de nuevo en ${seconds} s`)
  }

  /** A counter is a kind of credential and an address, `api-key:203.0.113.7`. */
  private key(counter: string): string {
    return `${this.keyPrefix}${counter}`
  }

  /** The counter's failures in the current window (Redis, or this replica's memory while Redis is away). */
  private async current(counter: string): Promise<Window> {
    try {
      const [count, ttl] = (await this.redis.multi().get(this.key(counter)).pttl(this.key(counter)).exec()) ?? []
      const failed = count?.[0] ?? ttl?.[0]
      if (failed) throw failed
      return { count: Number(count?.[1] ?? 0), endsAt: Date.now() + Math.max(Number(ttl?.[1] ?? 0), 0) }
    } catch {
      return this.localWindow(counter)
    }
  }

  private async countFailure(counter: string): Promise<void> {
    try {
      await this.redis.eval(COUNT_FAILURE, 1, this.key(counter), this.windowMs)
    } catch {
      this.localWindow(counter).count += 1
    }
  }

  private localWindow(counter: string): Window {
    const now = Date.now()
    let window = this.local.get(counter)
    if (!window || window.endsAt <= now) {
      if (this.local.size >= MAX_LOCAL_COUNTERS) {
        for (const [other, open] of this.local) if (open.endsAt <= now) this.local.delete(other)
        if (this.local.size >= MAX_LOCAL_COUNTERS) this.local.clear()
      }
      window = { count: 0, endsAt: now + this.windowMs }
      this.local.set(counter, window)
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
