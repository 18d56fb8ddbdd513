import type { FastifyRequest } from 'fastify'
import { SESSION_COOKIE, dashboardRoleNames, roleAllows, type DashboardRole, type RouteAccess } from '@letters/contracts'
import { ApiError } from './errors.js'

/**
 * Who is calling the public API: an account, through one of its API keys or through a person
 * signed in to the dashboard. The routes and what they call take this (or its KeyScope) and never
 * ask how it was authenticated; only the access check does.
 */
export interface Caller {
  accountId: string
  /** False for a test key: it sees and makes only test letters and test webhook endpoints. */
  livemode: boolean
  /** The API key, when the caller sent one. */
  keyId?: string
  /** The dashboard user, when the caller is a signed-in browser. */
  user?: { id: string; role: DashboardRole }
}

/** What a key sees: its account's letters and webhook endpoints of its own mode, live or test. */
export type KeyScope = Pick<Caller, 'accountId' | 'livemode'>

declare module 'fastify' {
  interface FastifyRequest {
    /** The account behind a valid X-API-KEY or dashboard session; null when neither identified one. */
    caller: Caller | null
  }
  interface FastifyContextConfig {
    /** What the route asks of its caller; by default `read` for GET and HEAD, `write` otherwise. */
    access?: RouteAccess
  }
}

export const unauthorized = () => new ApiError(401, 'La API key no es válida o no se ha enviado en la cabecera X-API-KEY')
const sessionEnded = () => new ApiError(401, 'La sesión del panel ha caducado o se ha cerrado; vuelve a entrar')

/** Refuses a request whose key or session did not identify an account, in the words of what it sent. */
export async function requireCaller(request: FastifyRequest): Promise<void> {
  if (request.caller) return
  const sentSession = request.headers['x-api-key'] === undefined && request.cookies?.[SESSION_COOKIE] !== undefined
  throw sentSession ? sessionEnded() : unauthorized()
}

/** What a route asks of its caller: its own `access`, else by its method. */
export function routeAccess(request: FastifyRequest): RouteAccess {
  return request.routeOptions.config.access ?? (request.method === 'GET' || request.method === 'HEAD' ? 'read' : 'write')
}

/**
 * Refuses a caller whose role does not allow the route: 403 with the Error object, before the
 * body is read. An API key acts for its whole account, but people and keys are managed by a
 * person signed in.
 */
export async function requireAccess(request: FastifyRequest): Promise<void> {
  const caller = request.caller
  if (!caller) return
  const access = routeAccess(request)
  if (!caller.user) {
    if (access === 'session-owner') throw new ApiError(403, 'Las API keys y el equipo se gestionan desde el panel, con una sesión de propietario')
    return
  }
  if (!roleAllows(caller.user.role, access)) {
    throw new ApiError(403, `Tu rol (${dashboardRoleNames[caller.user.role]}) no permite esta acción; pídesela a un propietario de la cuenta`)
  }
}
