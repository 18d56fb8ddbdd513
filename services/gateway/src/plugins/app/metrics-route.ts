import type { FastifyPluginAsync } from 'fastify'
import { Registry } from 'prom-client'
import { pipelineRegistry, registry } from '@letters/observability'
import { refreshPipelineGauges } from '@letters/pipeline'
import { requireMetrics } from './token-auth.js'
import { letThroughUnderPressure } from './under-pressure.js'

const served = Registry.merge([registry, pipelineRegistry])

/**
 * `GET /metrics` for Prometheus, behind METRICS_TOKEN or the admin token (Bearer, as Prometheus sends it): this
 * gateway's own metrics and the pipeline's state (queues, outbox, stuck letters), read now.
 */
const metricsRoute: FastifyPluginAsync = async (app) => {
  // Scraped under pressure too: that is when ops need the figures most.
  app.get('/metrics', { onRequest: requireMetrics(app), config: { pressureHandler: letThroughUnderPressure } }, async (_request, reply) => {
    await refreshPipelineGauges(
      app.db,
      app.queues,
      { stuckAfterMs: app.config.reconcileAfterMs, clock: { intervalMs: app.config.clockIntervalMs, testMailedAfterMs: app.config.testMailedAfterMs } },
      app.log,
    )
    return reply.type(served.contentType).send(await served.metrics())
  })
}

export default metricsRoute
