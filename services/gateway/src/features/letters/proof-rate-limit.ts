import type { RateLimitOptions } from '@fastify/rate-limit'
import type { Config } from '@letters/config'
import { limitExceeded } from '../../common/rate-limits.js'

/**
 * The proof route's own, lower limit (a proof costs a render, a hundred times a list): set as
 * the route's `config.rateLimit`, it replaces the account's general limit there, counted apart
 * under the route's own Redis keys, so proofs never use up the limit of the other routes.
 */
export function proofRateLimit(config: Config): RateLimitOptions {
  const { max, windowMs } = config.proofs.rateLimit
  return { max, timeWindow: windowMs, errorResponseBuilder: limitExceeded(windowMs, 'pruebas') }
}
