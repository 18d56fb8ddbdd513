import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errorResponses, floor } from '@letters/contracts'
import { floorOverview } from '../../services/floor.js'
import { floorPage } from './page-html.js'
import { SCAN_SCRIPT } from './scan-script.js'

const page: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/', { schema: { response: { 200: floor.FloorPage, ...errorResponses(401, 404, 429, 500) } } }, async (_request, reply) => {
    const overview = await floorOverview(app.db, app.config.reconcileAfterMs)
    const { maxLetters, maxWaitMs } = app.config.batch
    return reply
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .send(floorPage(overview, { batchMaxLetters: maxLetters, batchMaxWaitMs: maxWaitMs, printer: app.config.printer, now: new Date() }))
  })

  app.get('/scan.js', { schema: { response: { 200: floor.FloorScript, ...errorResponses(401, 404, 429, 500) } } }, async (_request, reply) =>
    reply.type('text/javascript; charset=utf-8').header('cache-control', 'no-cache').send(SCAN_SCRIPT),
  )
}

export default page
