import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { IdParams, NoBody, ReturnBody, SuppressionList, admin, errorResponses } from '@letters/contracts'
import { accountNotFound, findAccount } from '../../accounts/index.js'
import { markReturned } from '../../letters/index.js'
import { liftSuppression, listSuppressions } from '../suppressions.js'

/** An account's list, of the mode the query names (live unless it says test), once the account is known to exist. */
async function scopeOf(app: Parameters<FastifyPluginAsyncTypebox>[0], accountId: string, mode: 'live' | 'test' | undefined) {
  if (!(await findAccount(app.db, accountId))) throw accountNotFound()
  return { accountId, livemode: mode !== 'test' }
}

/** What happens after the mailbox, for ops: a letter the post brought back, and the addresses an account no longer writes to. */
const returns: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/cards/:id/returned',
    { schema: { params: IdParams, body: ReturnBody, response: { 200: admin.ReturnedLetter, ...errorResponses(400, 401, 404, 409, 415, 500) } } },
    async (request) => markReturned(app.db, { id: request.params.id }, request.body.reason),
  )

  app.get(
    '/accounts/:id/suppressions',
    { schema: { params: IdParams, querystring: admin.SuppressionListQuery, response: { 200: SuppressionList, ...errorResponses(400, 401, 404, 500) } } },
    async (request) => {
      const { mode, ...page } = request.query
      return listSuppressions(app.db, await scopeOf(app, request.params.id, mode), page)
    },
  )

  app.delete(
    '/accounts/:id/suppressions/:suppressionId',
    {
      schema: {
        params: admin.AccountSuppressionParams,
        querystring: admin.SuppressionModeQuery,
        body: NoBody,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 404, 500) },
      },
    },
    async (request, reply) => {
      await liftSuppression(app.db, await scopeOf(app, request.params.id, request.query.mode), request.params.suppressionId)
      return reply.status(204).send(null)
    },
  )
}

export default returns
