import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errorResponses, floor } from '@letters/contracts'
import { floorOverview } from '../floor.js'
import { Type } from 'typebox'
import { floorPage, SCAN_MODE_QUERY, type ScanMode } from './page-html.js'
import { SCAN_SCRIPT } from './scan-script.js'

/** `?modo=devuelta` opens the page in the "Devuelta" mode; anything else, or nothing, in the first one (never a 400: it is a page). */
const PageQuery = Type.Object({ modo: Type.Optional(Type.Unknown()) })
const modeOf = (modo: unknown): ScanMode => (modo === SCAN_MODE_QUERY.returned ? 'returned' : 'mailed')

const page: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/', { schema: { querystring: PageQuery, response: { 200: floor.FloorPage, ...errorResponses(401, 404, 429, 500) } } }, async (request, reply) => {
    const overview = await floorOverview(app.db, app.config.reconcileAfterMs)
    const { maxLetters, maxWaitMs } = app.config.batch
    return reply
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .send(
        floorPage(overview, {
          batchMaxLetters: maxLetters,
          batchMaxWaitMs: maxWaitMs,
          printer: app.config.printer,
          now: new Date(),
          scanMode: modeOf(request.query.modo),
        }),
      )
  })

  app.get('/scan.js', { schema: { response: { 200: floor.FloorScript, ...errorResponses(401, 404, 429, 500) } } }, async (_request, reply) =>
    reply.type('text/javascript; charset=utf-8').header('cache-control', 'no-cache').send(SCAN_SCRIPT),
  )
}

export default page
