import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { NoBody, errorResponses, publicApi } from '@letters/contracts'
import { eraseCardPersonalData } from '../personal-data.js'

const erasure: FastifyPluginAsyncTypebox = async (app) => {
  // The recipient's right to erasure, asked of the client: the letter stays (status, history, cost), its recipient does not.
  app.delete(
    '/cards/:cardId/personal-data',
    {
      schema: {
        summary:
          "Erase a printed, mailed, cancelled, rejected or failed letter's recipient (all but the country), message and files now; the letter keeps its status, history and cost. Repeating it changes nothing",
        tags: ['Letters'],
        headers: publicApi.ApiKeyHeaders,
        params: publicApi.CardParams,
        body: NoBody,
        response: { 204: Type.Null({ description: 'Erased (now or before).' }), ...errorResponses(400, 401, 404, 409, 413, 415, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      await eraseCardPersonalData(app, request.caller!, request.params.cardId)
      return reply.status(204).send(null)
    },
  )
}

export default erasure
