import type { FastifyInstance, RouteOptions } from 'fastify'
import { ErrorResponse } from '@letters/contracts'
import { requireAccess, requireCaller } from '../../common/caller.js'
import { ApiError, reasonPhrase } from '../../common/errors.js'
import type { Feature, Routes } from '../../common/feature.js'
import { identifySession, requireCsrf } from '../../common/sessions.js'
import { identifyCaller } from './api-key-auth.js'
import { markPublic } from './openapi.js'
import { registerRateLimit } from './rate-limit.js'
import { requireAdmin, requireFloor } from './token-auth.js'

/**
 * Every route of the public API may answer 403: a dashboard session's change without its CSRF
 * token or from another site, or a role that does not allow it. Declared here, where it is
 * decided, so that /openapi.json lists it on every route.
 */
function answersForbidden(route: RouteOptions) {
  const response = route.schema?.response as Record<string, unknown> | undefined
  if (response && !('403' in response)) response['403'] = ErrorResponse
}

/** Registers each feature's routes of one group, in the order of the list. */
async function registerGroup(scope: FastifyInstance, features: readonly Feature[], group: keyof Feature) {
  for (const feature of features) {
    const routes: Routes | undefined = feature[group]
    if (routes) await scope.register(routes)
  }
}

/**
 * The public API. Per request: the key is read, or without one the dashboard's session cookie
 * (onRequest); the rate limit counts the account or the IP (route-level onRequest); then before
 * the body is even parsed (preParsing), a request without a valid key or session stops with 401,
 * a session's change without its CSRF token or from another origin with 403, and a caller whose
 * role does not allow the route with 403. Every route of this scope is in /openapi.json.
 */
async function apiScope(app: FastifyInstance, features: readonly Feature[]) {
  await app.register(async (scope) => {
    scope.addHook('onRoute', markPublic)
    scope.addHook('onRoute', answersForbidden)
    scope.addHook('onRequest', identifyCaller(scope))
    scope.addHook('onRequest', async (request) => {
      if (!request.caller && request.headers['x-api-key'] === undefined) await identifySession(scope, request)
    })
    await registerRateLimit(scope)
    scope.addHook('preParsing', requireCaller)
    scope.addHook('preParsing', requireCsrf(scope))
    scope.addHook('preParsing', requireAccess)
    await registerGroup(scope, features, 'api')
  })
}

/** Public routes without a key: in the API's document and its rate limit, counted per address as before a key. */
async function anonymousScope(app: FastifyInstance, features: readonly Feature[]) {
  await app.register(async (scope) => {
    scope.addHook('onRoute', markPublic)
    await registerRateLimit(scope)
    await registerGroup(scope, features, 'anonymous')
  })
}

/**
 * Pages ops open in a browser, behind the admin token (a browser asks for it as the password).
 * Their routes are registered by a library with its own error handler, not ours: a refusal is
 * answered here, with the API's Error object.
 */
async function opsPagesScope(app: FastifyInstance, features: readonly Feature[]) {
  await app.register(async (scope) => {
    const guard = requireAdmin(scope, { browser: true })
    scope.addHook('onRequest', async (request, reply) => {
      try {
        await guard(request, reply)
      } catch (error) {
        if (!(error instanceof ApiError)) throw error
        return reply.status(error.statusCode).send({ error: reasonPhrase(error.statusCode), message: error.message, requestId: request.id })
      }
    })
    await registerGroup(scope, features, 'opsPages')
  })
}

/**
 * Registers every feature's routes, each group inside the scope that authenticates its callers:
 * - everything under /admin: one bearer-token guard for all of it;
 * - everything under /floor, for the people on the production floor: FLOOR_TOKEN and nothing
 *   else opens it (a browser asks for it as the password), and it opens nothing else. Not part of
 *   the public contract: no route there is marked public, so none is in /openapi.json;
 * - the public API, the public routes without a key, the ops pages and the dashboard's files.
 */
export async function registerFeatures(app: FastifyInstance, features: readonly Feature[]) {
  await app.register(
    async (scope) => {
      scope.addHook('onRequest', requireAdmin(scope))
      await registerGroup(scope, features, 'admin')
    },
    { prefix: '/admin' },
  )
  await opsPagesScope(app, features)
  await app.register(
    async (scope) => {
      scope.addHook('onRequest', requireFloor(scope))
      await registerGroup(scope, features, 'floor')
    },
    { prefix: '/floor' },
  )
  await apiScope(app, features)
  await anonymousScope(app, features)
  await registerGroup(app, features, 'files')
}
