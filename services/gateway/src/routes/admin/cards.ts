import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { IdParams, NoBody, errorResponses, publicApi } from '@letters/contracts'
import { markMailed } from '../../services/letter-lifecycle.js'

const cards: FastifyPluginAsyncTypebox = async (app) => {
  // The floor hands printed letters to the post in batches; ops record it here.
  app.post(
    '/cards/:id/mailed',
    { schema: { params: IdParams, body: NoBody, response: { 200: publicApi.Card, ...errorResponses(400, 401, 404, 409, 500) } } },
    async (request) => markMailed(app.db, request.params.id),
  )
}

export default cards
