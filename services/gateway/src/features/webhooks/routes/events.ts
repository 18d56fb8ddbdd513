import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { EVENT_ORDER_NOTE, EVENT_RETENTION_DAYS, EventList, EventListQuery, errorResponses, publicApi } from '@letters/contracts'
import { listEvents } from '../events.js'

/** The account's letter events, for a client catching up on what its webhooks missed (or that had no endpoint to go to). */
const events: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/events',
    {
      schema: {
        summary: `Your letter events of the last ${EVENT_RETENTION_DAYS} days, newest first (filter by type or card; paginate with cursor)`,
        description:
          `Every status change of a letter of the key's mode, whether or not a webhook endpoint existed to receive it, kept ${EVENT_RETENTION_DAYS} days. ` +
          'Each item is the exact body a webhook carries for it. ' +
          EVENT_ORDER_NOTE,
        headers: publicApi.ApiKeyHeaders,
        querystring: EventListQuery,
        response: { 200: EventList, ...errorResponses(400, 401, 429, 500, 503) },
      },
    },
    async (request) => listEvents(app.db, request.caller!, request.query),
  )
}

export default events
