import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { requireFloor } from '../../plugins/app/token-auth.js'
import batchFiles from './batch-files.js'
import page from './page.js'
import scan from './scan.js'

/**
 * Everything under /floor, for the people on the production floor: FLOOR_TOKEN and nothing
 * else opens it (a browser asks for it as the password), and it opens nothing else. Not part of
 * the public contract: no route here is marked public, so none is in /openapi.json.
 */
const floorRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', requireFloor(app))
  await app.register(page)
  await app.register(batchFiles)
  await app.register(scan)
}

export default floorRoutes
