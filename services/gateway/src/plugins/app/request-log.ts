import type { FastifyRequest, FastifyServerOptions } from 'fastify'
import { QR_LINK_PREFIX } from '@letters/contracts'

/**
 * What the log keeps of a request. Fastify's own line (its method, URL, host and the address and
 * port it came from), but for a request under a QR code's link, whether or not a route took it (a
 * stray slash, an OPTIONS, a broken escape): its method and route alone, neither its code, its
 * query nor where it came from, so that nothing in the logs ties a scan to a person.
 */
export function requestLogLine(request: FastifyRequest) {
  if (request.url.startsWith(QR_LINK_PREFIX) || request.url === QR_LINK_PREFIX.slice(0, -1)) {
    return { method: request.method, route: request.routeOptions.url ?? null }
  }
  return {
    method: request.method,
    url: request.url,
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  }
}

/** The logger's options with requestLogLine as its request serializer, whatever else they hold. */
export function withRequestLog(logger: FastifyServerOptions['logger']): FastifyServerOptions['logger'] {
  if (typeof logger !== 'object' || logger === null) return logger
  return { ...logger, serializers: { ...logger.serializers, req: requestLogLine } }
}
