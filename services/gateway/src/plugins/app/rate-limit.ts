import type { FastifyInstance, FastifyRequest } from 'fastify'
import rateLimit from '@fastify/rate-limit'
import { limitExceeded } from '../../common/rate-limits.js'
import { batchedRedisStore } from './rate-limit-store.js'
import { clientAddress } from './client-address.js'

/**
 * Limits each account, shared through Redis so every replica counts together. Before a key
 * is known (missing, unknown or revoked) the client's IP is the one counted, so guessing keys
 * is throttled too. Registered in the public API's scope after `identifyCaller`: the limiter's
 * hook runs at route level, after the scope's own onRequest hooks, so the caller is known by
 * then. In the scope of the routes that take no key it counts each address.
 * While Redis cannot be reached nothing is counted (see skipOnError). The counts of one turn
 * of the event loop go to Redis in one call (batchedRedisStore).
 */
export async function registerRateLimit(app: FastifyInstance) {
  const { max, windowMs } = app.config.rateLimit
  await app.register(rateLimit, {
    max,
    timeWindow: windowMs,
    store: batchedRedisStore(app.redis, `${app.config.queuePrefix}:rate-limit:`),
    keyGenerator: (request: FastifyRequest) => (request.caller ? `account:${request.caller.accountId}` : `ip:${clientAddress(request.ip)}`),
    // Redis down: requests go through unlimited rather than fail. A letter needs only Postgres
    // (its job waits in the outbox until Redis is back), and an outage is short next to the
    // letters a client would otherwise have to resend.
    skipOnError: true,
    errorResponseBuilder: limitExceeded(windowMs, 'peticiones'),
  })
}
