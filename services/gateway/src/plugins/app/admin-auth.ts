import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ApiError } from '../../errors.js'

const digest = (value: string) => createHash('sha256').update(value).digest()

/** The token a request carries: `Bearer <token>`, or, for a browser, Basic auth with the token as password. */
function presentedToken(header: string, acceptBasic: boolean): string {
  if (header.startsWith('Bearer ')) return header.slice('Bearer '.length)
  if (acceptBasic && header.startsWith('Basic ')) {
    const credentials = Buffer.from(header.slice('Basic '.length), 'base64').toString('utf8')
    return credentials.slice(credentials.indexOf(':') + 1)
  }
  return ''
}

/**
 * Guards every route of the scope it is added to with `Authorization: Bearer <ADMIN_TOKEN>`.
 * Without an ADMIN_TOKEN the admin API does not exist: every route answers 404. The ops pages,
 * opened in a browser, also take Basic auth (any user name, the token as password). A wrong
 * token counts as a failed authentication of the client's IP (see AuthFailures); a missing one
 * does not, so a browser's first request before it asks for the password costs nothing.
 */
export function requireAdmin(app: FastifyInstance, options: { browser?: boolean } = {}) {
  const expected = app.config.adminToken ? digest(app.config.adminToken) : undefined
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if (!expected) throw new ApiError(404, `La ruta ${request.method} ${request.url.split('?')[0]} no existe`)
    const token = presentedToken(request.headers.authorization ?? '', options.browser ?? false)
    const valid = token && (await app.authFailures.check(request, reply, async () => timingSafeEqual(digest(token), expected) || null))
    if (!valid) {
      if (options.browser) reply.header('www-authenticate', 'Basic realm="letters ops", charset="UTF-8"')
      throw new ApiError(401, 'El token de administración no es válido o no se ha enviado (Authorization: Bearer <token>)')
    }
  }
}
