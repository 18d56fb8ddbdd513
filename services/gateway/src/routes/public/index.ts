import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { identifyCaller, requireCaller } from '../../plugins/app/api-key-auth.js'
import { markPublic } from '../../plugins/app/openapi.js'
import { registerRateLimit } from '../../plugins/app/rate-limit.js'
import bulk from './bulk.js'
import cards from './cards.js'
import catalog from './catalog.js'
import events from './events.js'
import letters from './letters.js'
import webhooks from './webhooks.js'

/**
 * The public API. Per request: the key is read (onRequest), the rate limit counts the account
 * or the IP (route-level onRequest), and a request without a valid key stops with 401 before
 * its body is even parsed (preParsing). Every route of this scope is in /openapi.json.
 */
const publicRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRoute', markPublic)
  app.addHook('onRequest', identifyCaller(app))
  await registerRateLimit(app)
  app.addHook('preParsing', requireCaller)
  await app.register(catalog)
  await app.register(letters)
  await app.register(bulk)
  await app.register(cards)
  await app.register(webhooks)
  await app.register(events)
}

export default publicRoutes
