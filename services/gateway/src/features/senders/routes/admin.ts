import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { IdParams, admin, errorResponses } from '@letters/contracts'
import { createSender, updateSender } from '../senders.js'

const writeErrors = errorResponses(400, 401, 404, 415, 500)

/** An account's senders: the name that signs its letters and the return address on their envelopes. */
const senders: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/accounts/:id/senders',
    { schema: { params: IdParams, body: admin.CreateSenderBody, response: { 201: admin.Sender, ...writeErrors } } },
    async (request, reply) => reply.status(201).send(await createSender(app.db, request.params.id, request.body)),
  )
  app.patch(
    '/accounts/:id/senders/:senderId',
    { schema: { params: admin.SenderParams, body: admin.UpdateSenderBody, response: { 200: admin.Sender, ...writeErrors } } },
    async (request) => updateSender(app.db, request.params.id, request.params.senderId, request.body),
  )
}

export default senders
