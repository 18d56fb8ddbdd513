import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errorResponses, publicApi } from '@letters/contracts'
import { getCard, listCards } from '../../services/cards.js'

const cards: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/cards',
    { schema: { headers: publicApi.ApiKeyHeaders, querystring: publicApi.CardListQuery, response: { 200: publicApi.CardList, ...errorResponses(400, 401, 429, 500, 503) } } },
    async (request) => listCards(app.db, request.caller!.accountId, request.query),
  )

  app.get(
    '/cards/:cardId',
    { schema: { headers: publicApi.ApiKeyHeaders, params: publicApi.CardParams, response: { 200: publicApi.Card, ...errorResponses(401, 404, 429, 500, 503) } } },
    async (request) => getCard(app.db, request.caller!.accountId, request.params.cardId),
  )
}

export default cards
