import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { requireAdmin } from '../../plugins/app/token-auth.js'
import accounts from './accounts.js'
import campaigns from './campaigns.js'
import cards from './cards.js'
import companyData from './company-data.js'
import fonts from './fonts.js'
import returns from './returns.js'

/** Everything under /admin: one bearer-token guard for all of it. */
const adminRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', requireAdmin(app))
  await app.register(accounts)
  await app.register(companyData)
  await app.register(fonts)
  await app.register(campaigns)
  await app.register(cards)
  await app.register(returns)
}

export default adminRoutes
