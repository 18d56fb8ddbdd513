import type { FastifyRequest, FastifyServerOptions } from 'fastify'
import { QR_LINK_PREFIX } from '@letters/contracts'

/**
 * What the log keeps of a request. Fastify's own line (its method, URL, host and the address and
 * port it came from), but for a request under a QR code's link, whether or not a route took it (a
 * stray slash, an OPTIONS, a broken escape): its method and route alone, neither its code, its
 * query nor where it came from, so that nothing in the logs ties a scan to a person.
 */
export function requestLogLine(request: FastifyRequest) {
  if (underQrLink(request.url)) {
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

/** The link's path without its slash (`/q`), as the lower-cased path of a request is compared with it. */
const QR_LINK = QR_LINK_PREFIX.slice(0, -1).toLowerCase()

/** The link's path, however a request writes it: `/q`, `/q/…`, `/Q/…`, `/q%2F…`, with or without a query. */
function underQrLink(url: string): boolean {
  const path = (url.split('?', 1)[0] ?? '').toLowerCase()
  return path === QR_LINK || path.startsWith(`${QR_LINK}/`) || path.startsWith(`${QR_LINK}%2f`)
}

/** The logger's options with requestLogLine as its request serializer, whatever else they hold. */
export function withRequestLog(logger: FastifyServerOptions['logger']): FastifyServerOptions['logger'] {
  if (typeof logger !== 'object' || logger === null) return logger
  return { ...logger, serializers: { ...logger.serializers, req: requestLogLine } }
}
