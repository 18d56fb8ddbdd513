import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { IdParams, NoBody, admin, errorResponses } from '@letters/contracts'
import { listStuckLetters, reconcileNow, retryCard } from '../stuck-letters.js'

/** Letters that stopped on their way, for ops: listed, looked at again, sent back to production. */
const stuckLetters: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/stuck-letters',
    { schema: { querystring: admin.StuckLetterListQuery, response: { 200: admin.StuckLetterList, ...errorResponses(400, 401, 404, 500) } } },
    async (request) => listStuckLetters(app.db, app.config.reconcileAfterMs, request.query),
  )

  // After a restore: every letter waiting for a job is looked at now, not after RECONCILE_AFTER_MS.
  app.post('/reconcile', { schema: { body: NoBody, response: { 200: admin.Reconciled, ...errorResponses(400, 401, 500, 503) } } }, async () =>
    reconcileNow(app),
  )

  // A failed letter back to production, or a stuck one resumed; what the letter became is in its events.
  app.post(
    '/cards/:id/retry',
    { schema: { params: IdParams, body: NoBody, response: { 200: admin.Card, ...errorResponses(400, 401, 404, 409, 500) } } },
    async (request) => retryCard(app, request.params.id),
  )
}

export default stuckLetters
