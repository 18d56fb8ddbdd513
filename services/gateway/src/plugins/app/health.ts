import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { sql } from 'drizzle-orm'
import { Type } from 'typebox'
import { errorResponses } from '@letters/contracts'
import { ApiError } from '../../common/errors.js'
import { letThroughUnderPressure } from './under-pressure.js'

const Status = Type.Object({ status: Type.String() })

const health: FastifyPluginAsyncTypebox = async (app) => {
  /** Liveness: the process answers, busy or not (an orchestrator must not restart a gateway for being loaded). */
  app.get('/healthz', { schema: { response: { 200: Status } }, config: { pressureHandler: letThroughUnderPressure } }, async () => ({ status: 'ok' }))

  /** Readiness: Postgres and Redis answer too, and the event loop keeps up (else under-pressure answers 503). */
  app.get('/readyz', { schema: { response: { 200: Status, ...errorResponses(503) } } }, async () => {
    // SELECT 1: the cheapest statement that proves Postgres answers.
    const [postgres, redis] = await Promise.allSettled([app.db.execute(sql`SELECT 1`), app.redis.ping()])
    if (postgres.status === 'rejected' || redis.status === 'rejected') {
      throw new ApiError(
        503,
        `No disponible: ${[postgres.status === 'rejected' && 'Postgres', redis.status === 'rejected' && 'Redis'].filter(Boolean).join(' y ')} no responde`,
      )
    }
    return { status: 'ready' }
  })
}

export default health
