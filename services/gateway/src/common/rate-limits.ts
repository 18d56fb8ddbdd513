import type { RateLimitOptions } from '@fastify/rate-limit'
import { ApiError } from './errors.js'

/** The 429 of a limit of `what` (peticiones, pruebas) per window. */
export function limitExceeded(windowMs: number, what: string): RateLimitOptions['errorResponseBuilder'] {
  return (_request, context) =>
    new ApiError(
      429,
      `Se ha superado el límite de ${context.max} ${what} cada ${windowMs / 1000} segundos; inténtalo de nuevo en ${Math.max(1, Math.ceil(context.ttl / 1000))} s`,
    )
}
