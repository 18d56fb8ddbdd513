import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ApiError } from '../../errors.js'

const digest = (value: string) => createHash('sha256').update(value).digest()

/**
 * Guards every route of the scope it is added to with `Authorization: Bearer <ADMIN_TOKEN>`.
 * Without an ADMIN_TOKEN the admin API does not exist: every route answers 404.
 */
export function requireAdmin(app: FastifyInstance) {
  const expected = app.config.adminToken ? digest(app.config.adminToken) : undefined
  return async (request: FastifyRequest) => {
    if (!expected) throw new ApiError(404, `La ruta ${request.method} ${request.url.split('?')[0]} no existe`)
    const header = request.headers.authorization ?? ''
    const token = header.startsWith('Bearer ') ? header.slice('Bearer '.length) : ''
    if (!token || !timingSafeEqual(digest(token), expected)) {
      throw new ApiError(401, 'El token de administración no es válido o no se ha enviado (Authorization: Bearer <token>)')
    }
  }
}
