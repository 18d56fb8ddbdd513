import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { NoBody, SuppressionList, SuppressionListQuery, SuppressionParams, errorResponses, publicApi } from '@letters/contracts'
import { liftSuppression, listSuppressions } from '../suppressions.js'

const tags = ['Suppressions']

/** The account's addresses a letter came back from, which its new letters are refused for unless they say `ignoreSuppression`. */
const suppressions: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/suppressions',
    {
      schema: {
        summary: 'Your suppression list: addresses a letter came back from, newest first (paginate with cursor)',
        description:
          'A letter the post brings back (status `returned`) puts its address here, unless the reason is `refused`. A new letter to such an address is a 400 naming the reason and the date, unless its request says `ignoreSuppression: true`. ' +
          'An entry keeps the postal code and the country; the street is kept only as a hash, and no name, so the entry outlives the letter’s erasure. Test keys see the test list.',
        tags,
        headers: publicApi.ApiKeyHeaders,
        querystring: SuppressionListQuery,
        response: { 200: SuppressionList, ...errorResponses(400, 401, 429, 500, 503) },
      },
    },
    async (request) => listSuppressions(app.db, request.caller!, request.query),
  )

  app.delete(
    '/suppressions/:suppressionId',
    {
      schema: {
        summary: 'Lift an entry of your suppression list: letters to that address are sent again',
        tags,
        headers: publicApi.ApiKeyHeaders,
        params: SuppressionParams,
        body: NoBody,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 404, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      await liftSuppression(app.db, request.caller!, request.params.suppressionId)
      return reply.status(204).send(null)
    },
  )
}

export default suppressions
