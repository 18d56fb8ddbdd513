import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { metrics } from '@letters/observability'

/**
 * Times every answer by method, route pattern and status. A request that matched no route is
 * counted under `unmatched`, so probes of random URLs cannot grow the label set without bound.
 */
async function httpMetrics(app: FastifyInstance) {
  app.addHook('onResponse', async (request, reply) => {
    metrics.httpRequestDuration.observe(
      { method: request.method, route: request.routeOptions.url ?? 'unmatched', status_code: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    )
  })
}

export default fp(httpMetrics, { name: 'http-metrics' })
