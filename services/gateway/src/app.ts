import { randomUUID } from 'node:crypto'
import { maxHeaderSize } from 'node:http'
import Fastify, {
  LogController,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
  type onRouteHookHandler,
} from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Config } from '@letters/config'
import type { Db } from '@letters/db'
import { loggerOptions } from '@letters/observability'
import type { Feature } from './common/feature.js'
import { ApiError } from './common/errors.js'
import { spanishValidatorCompiler } from './common/validation.js'
import apiKeyAuth from './plugins/app/api-key-auth.js'
import authFailures from './plugins/app/auth-failures.js'
import dashboardSessions from './plugins/app/dashboard-sessions.js'
import docs from './plugins/app/docs.js'
import errorHandler, { answerClientError, answerFrameworkError } from './plugins/app/error-handler.js'
import health from './plugins/app/health.js'
import intake from './plugins/app/intake.js'
import httpMetrics from './plugins/app/metrics.js'
import metricsRoute from './plugins/app/metrics-route.js'
import openapi from './plugins/app/openapi.js'
import requestDeadline from './plugins/app/request-deadline.js'
import { withRequestLog } from './plugins/app/request-log.js'
import { registerFeatures } from './plugins/app/scopes.js'
import { sharedSerializers } from './plugins/app/serialization.js'
import underPressure from './plugins/app/under-pressure.js'
import artifacts from './plugins/external/artifacts.js'
import configPlugin from './plugins/external/config.js'
import helmet from './plugins/external/helmet.js'
import mailer from './plugins/external/mailer.js'
import postgres from './plugins/external/postgres.js'
import queues from './plugins/external/queues.js'
import redis from './plugins/external/redis.js'
import renderPool from './plugins/external/render-pool.js'

export interface AppOptions {
  config: Config
  /** A pool to share (tests); by default the app opens and closes its own. */
  db?: Db
  logger?: FastifyServerOptions['logger']
  /** Told of every route as it is registered (the tests' list of what the gateway serves). */
  onRoute?: onRouteHookHandler
}

/** 64 KiB: a letter is at most a few kilobytes of JSON. */
export const BODY_LIMIT_BYTES = 64 * 1024

/**
 * The server's limits: a socket that sends nothing, a request that never finishes and an idle
 * keep-alive connection are all closed, and past `maxConnections` new sockets are refused, so
 * idle clients cannot take every file descriptor the process has.
 *
 * The keep-alive must outlast the idle time of whoever reuses the connections: a proxy in front
 * (60 s for ingress-nginx and AWS load balancers) sends a request on a connection it still
 * thinks open, and one the gateway closed under it fails unanswered (the proxy answers 502, and
 * does not retry a POST; a pooled client gets "other side closed"). The other timeouts need not
 * be as long: Node swaps the socket's silence timeout for the keep-alive while a connection is
 * idle, and the request and headers timeouts start at a request's first byte.
 */
function httpLimits(http: Config['http']) {
  // Node refuses a headers timeout above the request timeout.
  const headersTimeout = Math.min(http.headersTimeoutMs, http.requestTimeoutMs)
  return {
    requestTimeout: http.requestTimeoutMs,
    keepAliveTimeout: http.keepAliveTimeoutMs,
    // A socket silent this long while a request is under way (a client that stopped reading its
    // response, too) is dropped.
    connectionTimeout: http.requestTimeoutMs,
    // Node checks the two timeouts every 30 s by default: a 1 s timeout would fire up to 31 s late.
    http: { headersTimeout, connectionsCheckingInterval: Math.min(1000, headersTimeout) },
  }
}

/**
 * Once the gateway is stopping, every answer closes its connection. Closing, the server ends the
 * connections idle at that moment; one whose answer was still being written then would stay open
 * for the whole keep-alive, holding the stop past its drain time, and a client could send its next
 * request on it just as the process exits. So each later answer says `Connection: close`, and any
 * connection left idle by an answer written before the stop began is ended as that answer ends.
 */
function closeConnectionsWhenStopping(app: FastifyInstance): void {
  let stopping = false
  // Registered before every plugin: runs before the request deadline's grace for the requests in hand.
  app.addHook('preClose', async () => {
    stopping = true
  })
  app.addHook('onSend', async (_request, reply) => {
    if (stopping) reply.header('connection', 'close')
  })
  app.addHook('onResponse', async () => {
    if (stopping) app.server.closeIdleConnections()
  })
}

/** The probes: an orchestrator's liveness and readiness checks, Prometheus's scrape. */
const PROBES = new Set(['/healthz', '/readyz', '/metrics'])
const isProbe = (request: FastifyRequest) => (request.method === 'GET' || request.method === 'HEAD') && PROBES.has(request.routeOptions.url ?? '')

/**
 * Fastify's request log lines, with the probes' lowered to debug: a load balancer, Kubernetes or
 * Prometheus asks every few seconds, and at info their lines would bury the clients' requests. A
 * probe answered with an error (a 503 from /readyz) is logged at info like any other request.
 */
class ProbesAtDebug extends LogController {
  override incomingRequest(request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    if (!isProbe(request)) return super.incomingRequest(request, reply, metadata)
    if (!this.isLogDisabled(request)) request.log.debug({ req: request }, 'incoming request')
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    if (error || reply.statusCode >= 400 || !isProbe(request)) return super.requestCompleted(error, request, reply, metadata)
    if (!this.isLogDisabled(request)) reply.log.debug({ res: reply, responseTime: reply.elapsedTime }, 'request completed')
  }
}

/**
 * The shell: external plugins, then app plugins, then the features' routes, each group in the
 * scope of its callers (plugins/app/scopes.ts). It knows no feature: `server.ts` hands it the list.
 */
export async function buildApp(options: AppOptions, features: readonly Feature[]) {
  const app = Fastify({
    // A failed query carries its parameters: the serializers keep names and addresses out of the
    // logs, and a QR link's request without the address it came from (withRequestLog).
    logger: withRequestLog(options.logger ?? loggerOptions('gateway', options.config.logLevel)),
    logController: new ProbesAtDebug(),
    bodyLimit: BODY_LIMIT_BYTES,
    requestIdHeader: 'x-request-id',
    // Unique across replicas and restarts, like the ids of errors answered before a request exists.
    genReqId: () => randomUUID(),
    // request.ip is the client X-Forwarded-For names only when the peer is a listed proxy (an
    // Ingress): the per-address limits then count each client, and anyone else's header is
    // ignored, so it cannot be forged to dodge them.
    trustProxy: options.config.trustProxy.length > 0 ? options.config.trustProxy : false,
    ...httpLimits(options.config.http),
    // No parameter is too long for the router: one as long as the URL Node's parser takes
    // (16 KiB of headers) reaches its route, which answers it as any id it does not know (404).
    routerOptions: { maxParamLength: maxHeaderSize },
    clientErrorHandler: answerClientError,
    frameworkErrors: answerFrameworkError,
    schemaController: { compilersFactory: { buildSerializer: sharedSerializers } },
  }).withTypeProvider<TypeBoxTypeProvider>()
  app.server.maxConnections = options.config.http.maxConnections
  app.setValidatorCompiler(spanishValidatorCompiler)
  // JSON only: any other media type is answered 415 instead of reaching validation as a string.
  app.removeContentTypeParser('text/plain')
  // JSON is UTF-8 (RFC 8259): a body declared in another charset would be read wrong, so it is
  // refused as a CSV in another charset is, instead of parsed as if it were UTF-8.
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(request.headers['content-type'] ?? '')?.[1]
    if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
      done(new ApiError(415, `El cuerpo JSON debe estar en UTF-8; se ha enviado con charset=${charset}`), undefined)
      return
    }
    // The default parser answers through `done`; what it returns is nothing to wait for.
    void parseJson(request, body as string, done)
  })

  closeConnectionsWhenStopping(app)
  if (options.onRoute) app.addHook('onRoute', options.onRoute)
  await app.register(configPlugin, { config: options.config })
  await app.register(helmet)
  await app.register(postgres, options.db ? { db: options.db } : {})
  await app.register(redis)
  await app.register(queues)
  await app.register(renderPool)
  await app.register(artifacts)
  await app.register(mailer)

  await app.register(intake)
  await app.register(errorHandler)
  await app.register(requestDeadline)
  await app.register(httpMetrics)
  await app.register(underPressure)
  await app.register(authFailures)
  await app.register(apiKeyAuth)
  await app.register(dashboardSessions)
  await app.register(openapi)

  await app.register(health)
  await app.register(metricsRoute)
  await registerFeatures(app, features)
  await app.register(docs)
  return app
}

export type App = Awaited<ReturnType<typeof buildApp>>
