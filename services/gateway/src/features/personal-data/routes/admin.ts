import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { IdParams, NoBody, admin, errorResponses } from '@letters/contracts'
import { eraseAccountPersonalData } from '../personal-data.js'

const accountErasure: FastifyPluginAsyncTypebox = async (app) => {
  // Ops erase a whole account's recipients at once (the client asked, or leaves); letters not printed yet are left.
  app.delete(
    '/accounts/:id/personal-data',
    {
      schema: {
        params: IdParams,
        body: NoBody,
        // 413 and 415: a body too large or not JSON; 429: a wrong token from an address locked out
        // (AuthFailures); 503: the gateway shedding load (under-pressure), before any of it is erased.
        response: { 200: admin.PersonalDataErased, ...errorResponses(400, 401, 404, 413, 415, 429, 500, 503) },
      },
    },
    // Half the request's time, as a proof: the answer always goes out before the connection is cut.
    async (request) => eraseAccountPersonalData(app, request.params.id, app.config.http.requestTimeoutMs / 2),
  )
}

export default accountErasure
