import { randomUUID } from 'node:crypto'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { isConnectionError, SQLSTATE } from '@letters/db'
import { ApiError, OutcomeUnknown, Unavailable, reasonPhrase } from '../../common/errors.js'
import { SECURITY_HEADERS } from '../../common/security-headers.js'

/** Spanish messages for the errors Fastify itself raises before a route runs. */
const frameworkMessages: Record<string, string> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'El tipo de contenido no está admitido: envía Content-Type: application/json (o text/csv a POST /cards/bulk)',
  FST_ERR_CTP_BODY_TOO_LARGE: 'El cuerpo de la petición es demasiado grande',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'El cuerpo de la petición está vacío: envía un objeto JSON',
  FST_ERR_CTP_INVALID_JSON_BODY: 'El cuerpo de la petición no es un JSON válido',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'La cabecera Content-Length no coincide con el cuerpo',
  FST_ERR_BAD_URL: 'La URL no es válida: contiene una secuencia % que no codifica ningún carácter',
}

const statusMessages: Record<number, string> = {
  400: 'La petición no es válida',
  401: 'La API key no es válida o no se ha enviado',
  404: 'El recurso no existe',
  405: 'El método no está permitido',
  413: 'El cuerpo de la petición es demasiado grande',
  415: 'El tipo de contenido no está admitido',
  429: 'Se ha superado el límite de peticiones',
  500: 'Se ha producido un error inesperado',
  503: 'El servicio no está disponible en este momento; inténtalo de nuevo en unos segundos',
}

/** Connection-level failures of Redis (ioredis with no offline queue); Postgres's are packages/db's isConnectionError. */
const unavailableCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT'])
/**
 * Postgres's query_canceled (a statement timeout: a lock held too long, an overloaded database)
 * and lock_not_available (a lock timeout: an account's row held too long): the statement did
 * nothing, so the client may retry, as after a drop.
 */
const TIMED_OUT = new Set<string>([SQLSTATE.queryCanceled, SQLSTATE.lockNotAvailable])
const redisUnavailable = /enableOfflineQueue options is false|Connection is closed|MaxRetriesPerRequestError|Reached the max retries per request/

/** The Retry-After of a 503 whose error does not set its own: a dependency down, a load shed. */
const UNAVAILABLE_RETRY_AFTER_SECONDS = 5

/** A dependency that is down is the client's cue to retry later (503), not a bug of ours (500). */
function isDependencyUnavailable(error: unknown): boolean {
  if (isConnectionError(error)) return true
  for (
    let current = error as { code?: unknown; message?: unknown; cause?: unknown } | undefined, depth = 0;
    current && depth < 4;
    current = current.cause as typeof current, depth++
  ) {
    if (typeof current.code === 'string' && (unavailableCodes.has(current.code) || TIMED_OUT.has(current.code))) return true
    if (typeof current.message === 'string' && redisUnavailable.test(current.message)) return true
  }
  return false
}

function clientMessage(error: FastifyError, status: number): string {
  if (error instanceof Unavailable || error instanceof OutcomeUnknown) return error.message
  if (status >= 500) return statusMessages[status] ?? statusMessages[500]!
  if (error instanceof ApiError) return error.message
  if (error.code && frameworkMessages[error.code]) return frameworkMessages[error.code]!
  return statusMessages[status] ?? 'La petición no es válida'
}

/** The HTTP parser's and the server's own refusals, answered before Fastify has a request. */
const connectionErrors: Record<string, { status: number; message: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, message: 'La petición no ha llegado completa a tiempo; la conexión se cierra' },
  HPE_HEADER_OVERFLOW: { status: 431, message: 'Las cabeceras de la petición (o su URL) son demasiado grandes' },
}
const malformedRequest = { status: 400, message: 'La petición HTTP está mal formada' }

/**
 * Answers what Node's HTTP server refuses before Fastify sees a request (timeouts, oversized
 * headers, unparseable requests), in the same `{ error, message, requestId }` shape. It writes
 * straight to the socket and closes it: the connection cannot carry another request.
 */
export function answerClientError(this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const { status, message } = (error.code && connectionErrors[error.code]) || malformedRequest
  const requestId = randomUUID()
  // The code only: the error's raw packet holds what the client sent.
  this.log.debug({ requestId, code: error.code, status }, 'connection refused')
  if (socket.writable) {
    const body = JSON.stringify({ error: reasonPhrase(status), message, requestId })
    socket.write(
      `HTTP/1.1 ${status} ${reasonPhrase(status)}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    )
  }
  socket.destroy()
}

/** Every error a request meets, logged and answered in the one shape. */
function answerError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  // Answered already at the request's deadline (503): what failed after is only logged.
  if (reply.sent) {
    request.log.info({ code: error.code, name: error.name }, 'request failed after its deadline answer')
    return reply
  }
  const declared = error.statusCode && error.statusCode >= 400 && error.statusCode < 600 ? error.statusCode : 500
  const status = declared === 500 && !(error instanceof OutcomeUnknown) && isDependencyUnavailable(error) ? 503 : declared
  if (status === 503 && !reply.hasHeader('retry-after'))
    reply.header('retry-after', String((error instanceof Unavailable ? error.retryAfterSeconds : undefined) ?? UNAVAILABLE_RETRY_AFTER_SECONDS))
  if (error instanceof Unavailable && error.cause !== undefined) request.log.error({ status, err: error.cause }, 'request shed by a fault')
  else if (error instanceof Unavailable) request.log.warn({ status }, 'request shed')
  else if (status >= 500) request.log.error({ err: error }, 'request failed')
  // Not the message: some echo what the client sent (a postal code), which stays out of the logs.
  else request.log.info({ status, code: error.code }, 'request rejected')
  const details = status < 500 && error instanceof ApiError ? error.details : undefined
  return reply
    .status(status)
    .send({ error: reasonPhrase(status), message: clientMessage(error, status), requestId: request.id, ...(details ? { details } : {}) })
}

/**
 * A URL the router cannot take (bad percent-encoding). Fastify calls this
 * outside every route context, where the error handler set below does not apply.
 */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  // No onRequest hook ran for it: the security headers are set here.
  reply.headers(SECURITY_HEADERS)
  // The reply is sent; the reply object (a thenable) is nobody's to await.
  void answerError(error, request, reply)
}

/** The methods a route of the gateway may have, in the order an `Allow` header lists them. */
const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']

/** One place shapes every error as `{ error, message, requestId }` and keeps internals out of 5xx bodies. */
async function errorHandler(app: FastifyInstance) {
  app.setErrorHandler(answerError)

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!
    // A path the gateway serves, asked with a method it does not: 405 and the methods it does.
    // A route that has the method and found nothing (a static file that is not there) is a 404.
    const allowed = HTTP_METHODS.filter((method) => app.findRoute({ method, url: path }) !== null)
    if (allowed.length > 0 && !allowed.includes(request.method)) {
      return reply
        .status(405)
        .header('allow', allowed.join(', '))
        .send({ error: reasonPhrase(405), message: `La ruta ${path} no admite ${request.method}; admite ${allowed.join(', ')}`, requestId: request.id })
    }
    return reply.status(404).send({ error: reasonPhrase(404), message: `La ruta ${request.method} ${path} no existe`, requestId: request.id })
  })
}

export default fp(errorHandler, { name: 'error-handler' })
