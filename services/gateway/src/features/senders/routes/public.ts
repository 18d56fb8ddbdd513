import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errorResponses, publicApi } from '@letters/contracts'
import { listEntries } from '../../designs/index.js'

const senders: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/senders',
    {
      schema: {
        summary: 'Your senders',
        tags: ['Catalog'],
        headers: publicApi.ApiKeyHeaders,
        response: { 200: publicApi.NamedList, ...errorResponses(401, 429, 500, 503) },
      },
    },
    async (request) => ({ data: await listEntries(app.db, 'senders', request.caller!.accountId) }),
  )
}

export default senders
