import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { IdParams, dashboard, errorResponses } from '@letters/contracts'
import { accountNotFound, findAccount } from '../../accounts/index.js'
import { inviteAndSend } from '../invitations.js'

const invitations: FastifyPluginAsyncTypebox = async (app) => {
  // The first owner of an account is invited here (or with the CLI); owners invite the rest from the dashboard.
  app.post(
    '/accounts/:id/users',
    { schema: { params: IdParams, body: dashboard.InviteBody, response: { 201: dashboard.Invitation, ...errorResponses(400, 401, 404, 409, 415, 500) } } },
    async (request, reply) => {
      if (!(await findAccount(app.db, request.params.id))) throw accountNotFound()
      return reply.status(201).send(await inviteAndSend(app, request.params.id, request.body, request.log))
    },
  )
}

export default invitations
