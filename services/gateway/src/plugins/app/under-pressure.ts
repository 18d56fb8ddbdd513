import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import underPressure from '@fastify/under-pressure'
import { reasonPhrase } from '../../common/errors.js'

type PressureHandler = (request: FastifyRequest, reply: FastifyReply) => void

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A route's own answer under pressure; one that sends nothing lets the request through. */
    pressureHandler?: PressureHandler
  }
}

/** Seconds a client is told to wait: the delay is measured again every second. */
const RETRY_AFTER_SECONDS = 2

/** How often @fastify/under-pressure measures the delay (its default). */
const SAMPLE_INTERVAL_MS = 1000

/**
 * Whether a measured event-loop delay is over the threshold. under-pressure reports a second in
 * which the loop was blocked throughout (no sample of it) as an infinite delay: that says the
 * delay was at least the second, so it is over a threshold of a second or less, and says nothing
 * about a longer one.
 */
export function overThreshold(delayMs: number, thresholdMs: number): boolean {
  if (delayMs === Infinity) return thresholdMs <= SAMPLE_INTERVAL_MS
  return delayMs > thresholdMs
}

/** A route config for /healthz: a busy gateway is alive, and restarting it would only add to the load. */
export const letThroughUnderPressure: PressureHandler = () => {}

/**
 * Sheds load once the event loop lags more than EVENT_LOOP_MAX_DELAY_MS: a quick 503 with
 * Retry-After instead of a request that would wait seconds behind the others. It runs before
 * every other hook, so a shed request costs neither an API-key lookup nor a rate-limit count.
 * /readyz is shed too (the balancer sends traffic elsewhere for a moment); /healthz is not.
 */
async function shedUnderPressure(app: FastifyInstance) {
  await app.register(underPressure, {
    maxEventLoopDelay: app.config.eventLoopMaxDelayMs,
    sampleInterval: SAMPLE_INTERVAL_MS,
    pressureHandler: (request, reply, type, value) => {
      // Nothing sent: the request goes on.
      if (type === 'eventLoopDelay' && typeof value === 'number' && !overThreshold(value, app.config.eventLoopMaxDelayMs)) return
      request.log.warn({ type, value }, 'shedding load: the event loop is behind')
      reply
        .code(503)
        .header('retry-after', String(RETRY_AFTER_SECONDS))
        .send({ error: reasonPhrase(503), message: 'El servicio está saturado en este momento; inténtalo de nuevo en unos segundos', requestId: request.id })
    },
  })
}

export default fp(shedUnderPressure, { name: 'under-pressure', dependencies: ['config'] })
