import { createHash, timingSafeEqual } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ApiError } from '../../common/errors.js'
import type { Credential } from './auth-failures.js'

const digest = (value: string) => createHash('sha256').update(value).digest()

/** The token a request carries: `Bearer <token>`, or, for a browser, Basic auth with the token as password. */
function presentedToken(header: string, acceptBasic: boolean): string {
  // The scheme's name is case-insensitive (RFC 9110 §11.1).
  const [, scheme, value] = /^(bearer|basic) (.*)$/is.exec(header) ?? []
  if (scheme?.toLowerCase() === 'bearer') return value!
  if (acceptBasic && scheme?.toLowerCase() === 'basic') {
    const credentials = Buffer.from(value!, 'base64').toString('utf8')
    // user-id ":" password (RFC 7617): without the colon there is no password, not a password that is the whole.
    const colon = credentials.indexOf(':')
    return colon < 0 ? '' : credentials.slice(colon + 1)
  }
  return ''
}

interface TokenGuard {
  /** The configured token; absent: the guarded routes do not exist (404). */
  token: string | undefined
  /** Which count of failed authentications a wrong token adds to. */
  credential: Extract<Credential, `${string}-token`>
  /** What the 401 calls the token, in Spanish ("de administración"). */
  label: string
  /** Set for pages opened in a browser: Basic auth is accepted too, and a 401 asks the browser for it under this realm. */
  browserRealm?: string
}

/**
 * Guards every route of the scope it is added to with one token: `Authorization: Bearer
 * <token>`, or, where a browser opens the routes, Basic auth (any user name, the token as
 * password). Without the token configured the routes do not exist: every one answers 404. A
 * wrong token counts as a failed authentication of the client's IP for that token (see
 * AuthFailures): past the limit, the token is refused, the right one too, until the window
 * ends. A missing one does not count, so a browser's first request before it asks for the
 * password costs nothing. Each token opens only the scopes guarded with it.
 */
export function requireToken(app: FastifyInstance, guard: TokenGuard) {
  const expected = guard.token ? digest(guard.token) : undefined
  const acceptBasic = guard.browserRealm !== undefined
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if (!expected) throw new ApiError(404, `La ruta ${request.method} ${request.url.split('?')[0]} no existe`)
    const token = presentedToken(request.headers.authorization ?? '', acceptBasic)
    const valid = token && (await app.authFailures.check(guard.credential, request, reply, async () => timingSafeEqual(digest(token), expected) || null))
    if (!valid) {
      if (acceptBasic) reply.header('www-authenticate', `Basic realm="${guard.browserRealm}", charset="UTF-8"`)
      throw new ApiError(401, `El token ${guard.label} no es válido o no se ha enviado (${acceptBasic ? BROWSER_HOW : BEARER_HOW})`)
    }
    // A browser sends its cached Basic credentials with whatever another site's page makes it
    // send: a change asked for from another site is refused before its body is read.
    if (acceptBasic && !SAFE_METHODS.has(request.method) && fromAnotherSite(request.headers))
      throw new ApiError(403, 'Esta acción solo se acepta desde las páginas de este servidor o desde un script, no desde otro sitio web')
  }
}

/** How a 401 says to send the token: a browser's page asks for it as a password, and its user reads the answer. */
const BEARER_HOW = 'Authorization: Bearer <token>'
const BROWSER_HOW = `en el navegador, como contraseña de la autenticación Basic, con cualquier usuario; desde un script, ${BEARER_HOW}`

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** A browser's word that the request was started by another site's page (Fetch Metadata), or an Origin that is not this host. Scripts send neither. */
function fromAnotherSite(headers: IncomingHttpHeaders): boolean {
  const site = headers['sec-fetch-site']
  if (site === 'cross-site' || site === 'same-site') return true
  const origin = headers.origin
  if (origin === undefined) return false
  try {
    return new URL(origin).host !== headers.host
  } catch {
    return true
  }
}

/** The admin API and, with `browser`, the ops pages: ADMIN_TOKEN. */
export function requireAdmin(app: FastifyInstance, options: { browser?: boolean } = {}) {
  return requireToken(app, {
    token: app.config.adminToken,
    credential: 'admin-token',
    label: 'de administración',
    ...(options.browser ? { browserRealm: 'letters ops' } : {}),
  })
}

/** The floor's page and scanner (/floor): FLOOR_TOKEN, from a script or the floor's browser. */
export function requireFloor(app: FastifyInstance) {
  return requireToken(app, { token: app.config.floorToken, credential: 'floor-token', label: 'de la planta', browserRealm: 'letters floor' })
}

/**
 * /metrics: METRICS_TOKEN, read-only, for Prometheus; without it, the admin token as before. Its
 * failures are counted apart, so that a Prometheus left with an old token does not lock ops out
 * of the admin API from a shared address.
 */
export function requireMetrics(app: FastifyInstance) {
  const { metricsToken, adminToken } = app.config
  return metricsToken
    ? requireToken(app, { token: metricsToken, credential: 'metrics-token', label: 'de métricas' })
    : requireToken(app, { token: adminToken, credential: 'admin-token', label: 'de administración' })
}
