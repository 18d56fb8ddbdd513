import { createHash, timingSafeEqual } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import { once } from 'node:events'
import type { Logger } from 'pino'
import { registry } from './metrics.js'

export interface MetricsServerOptions {
  host: string
  port: number
  log: Logger
  /** Whether the process does its work (its BullMQ worker runs); /healthz answers 503 otherwise. */
  healthy: () => boolean
  /** METRICS_TOKEN: when set, /metrics asks for it (`Authorization: Bearer <token>`); /healthz never does. */
  token?: string | undefined
}

const digest = (value: string) => createHash('sha256').update(value).digest()

/**
 * A worker's small HTTP server: `GET /metrics` for Prometheus (this process's metrics, behind
 * METRICS_TOKEN when it is set; without it, open: bind it to a private address) and
 * `GET /healthz` for the orchestrator's probe, always open. A port
 * already taken (a second worker on the host with the same METRICS_PORT) is logged and the
 * worker goes on without it: printing matters more than its figures.
 */
export async function startMetricsServer(options: MetricsServerOptions): Promise<Server | undefined> {
  const expected = options.token ? digest(options.token) : undefined
  const authorized = (header: string | undefined) => {
    if (!expected) return true
    const [, token] = /^bearer (.+)$/is.exec(header ?? '') ?? []
    return token !== undefined && timingSafeEqual(digest(token), expected)
  }
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0]
    if (request.method === 'GET' && path === '/metrics') {
      if (!authorized(request.headers.authorization)) {
        response
          .writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' })
          .end(JSON.stringify({ error: 'Unauthorized', message: 'El token de métricas no es válido o no se ha enviado (Authorization: Bearer <token>)' }))
        return
      }
      registry.metrics().then(
        (text) => response.writeHead(200, { 'content-type': registry.contentType }).end(text),
        (err: unknown) => {
          options.log.error({ err }, 'could not collect metrics')
          response.writeHead(500).end()
        },
      )
      return
    }
    if (request.method === 'GET' && path === '/healthz') {
      const healthy = options.healthy()
      response.writeHead(healthy ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify({ status: healthy ? 'ok' : 'stopped' }))
      return
    }
    response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'Not Found' }))
  })
  server.listen(options.port, options.host)
  try {
    await once(server, 'listening')
  } catch (err) {
    // One METRICS_PORT serves one process: npm start gives each worker a free one of its own;
    // the fixed defaults (9101 to 9103) fit one stack on a host, or one worker per container or pod.
    const taken = (err as NodeJS.ErrnoException).code === 'EADDRINUSE'
    options.log.warn(
      { err, host: options.host, port: options.port },
      `metrics server not started: ${taken ? `port ${options.port} is taken (by another stack on this host?)` : `cannot listen on ${options.host}:${options.port}`}; ` +
        'this worker runs on without /metrics and /healthz. Give each worker process a free METRICS_PORT of its own (npm start picks free ones)',
    )
    return undefined
  }
  options.log.info({ host: options.host, port: options.port }, 'metrics and health on /metrics and /healthz')
  return server
}
