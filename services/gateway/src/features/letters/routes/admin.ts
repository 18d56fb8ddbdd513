import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { IdParams, NoBody, admin, errorResponses, publicApi } from '@letters/contracts'
import { getAnyCard, listAnyCards } from '../cards.js'
import { markMailed } from '../lifecycle.js'

const cardsAdmin: FastifyPluginAsyncTypebox = async (app) => {
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
}

export default cardsAdmin
