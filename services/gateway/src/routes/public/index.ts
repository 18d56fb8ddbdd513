import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { RouteOptions } from 'fastify'
import { ErrorResponse } from '@letters/contracts'
import { requireAccess, requireCaller } from '../../caller.js'
import { identifySession, requireCsrf } from '../../dashboard/sessions.js'
import teamRoutes from '../../dashboard/team-routes.js'
import { identifyCaller } from '../../plugins/app/api-key-auth.js'
import { markPublic } from '../../plugins/app/openapi.js'
import { registerRateLimit } from '../../plugins/app/rate-limit.js'
import balance from './balance.js'
import bulk from './bulk.js'
import cards from './cards.js'
import catalog from './catalog.js'
import events from './events.js'
import letters from './letters.js'
import suppressions from './suppressions.js'
import webhooks from './webhooks.js'

/**
 * The public API. Per request: the key is read, or without one the dashboard's session cookie
 * (onRequest); the rate limit counts the account or the IP (route-level onRequest); then before
 * the body is even parsed (preParsing), a request without a valid key or session stops with 401,
 * a session's change without its CSRF token or from another origin with 403, and a caller whose
 * role does not allow the route with 403. Every route of this scope is in /openapi.json.
 */
/**
 * Every route of the scope may answer 403: a dashboard session's change without its CSRF token or
 * from another site, or a role that does not allow it. Declared here, where it is decided, so
 * that /openapi.json lists it on every route.
 */
function answersForbidden(route: RouteOptions) {
  const response = route.schema?.response as Record<string, unknown> | undefined
  if (response && !('403' in response)) response['403'] = ErrorResponse
}

const publicRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRoute', markPublic)
  app.addHook('onRoute', answersForbidden)
  app.addHook('onRequest', identifyCaller(app))
  app.addHook('onRequest', async (request) => {
    if (!request.caller && request.headers['x-api-key'] === undefined) await identifySession(app, request)
  })
  await registerRateLimit(app)
  app.addHook('preParsing', requireCaller)
  app.addHook('preParsing', requireCsrf(app))
  app.addHook('preParsing', requireAccess)
  await app.register(catalog)
  await app.register(letters)
  await app.register(bulk)
  await app.register(cards)
  await app.register(webhooks)
  await app.register(events)
  await app.register(balance)
  await app.register(suppressions)
  await app.register(teamRoutes)
}

export default publicRoutes
