import type { RateLimitOptions } from '@fastify/rate-limit'
import type { Config } from '@letters/config'
import { ApiError } from './errors.js'

/** The 429 of a limit of `what` (peticiones, pruebas) per window. */
export function limitExceeded(windowMs: number, what: string): RateLimitOptions['errorResponseBuilder'] {
  return (_request, context) =>
    new ApiError(
      429,
      `Se ha superado el límite de ${context.max} ${what} cada ${windowMs / 1000} segundos; inténtalo de nuevo en ${Math.max(1, Math.ceil(context.ttl / 1000))} s`,
    )
}

/**
 * The proof route's own, lower limit (a proof costs a render, a hundred times a list): set as
 * the route's `config.rateLimit`, it replaces the account's general limit there, counted apart
 * under the route's own Redis keys, so proofs never use up the limit of the other routes.
 */
export function proofRateLimit(config: Config): RateLimitOptions {
  const { max, windowMs } = config.proofs.rateLimit
  return { max, timeWindow: windowMs, errorResponseBuilder: limitExceeded(windowMs, 'pruebas') }
}
