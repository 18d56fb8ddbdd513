import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { IdParams, NoBody, admin, errorResponses, publicApi } from '@letters/contracts'
import { getAnyCard, listAnyCards } from '../../services/cards.js'
import { markMailed } from '../../services/letter-lifecycle.js'
import { listStuckLetters, reconcileNow, retryCard } from '../../services/stuck-letters.js'

const cards: FastifyPluginAsyncTypebox = async (app) => {
  // Every account's letters, for ops looking for one: the filters of the client's own list, and the account and mode.
  app.get('/cards', { schema: { querystring: admin.CardListQuery, response: { 200: admin.CardList, ...errorResponses(400, 401, 500) } } }, async (request) =>
    listAnyCards(app.db, request.query),
  )

  app.get('/cards/:id', { schema: { params: IdParams, response: { 200: admin.Card, ...errorResponses(400, 401, 404, 500) } } }, async (request) =>
    getAnyCard(app.db, request.params.id),
  )

  // The floor hands printed letters to the post in batches; ops record it here.
  app.post(
    '/cards/:id/mailed',
    { schema: { params: IdParams, body: NoBody, response: { 200: publicApi.Card, ...errorResponses(400, 401, 404, 409, 500) } } },
    async (request) => markMailed(app.db, { id: request.params.id }),
  )

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

export default cards
