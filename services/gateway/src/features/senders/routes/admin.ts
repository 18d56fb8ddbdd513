import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { IdParams, admin } from '@letters/contracts'
import { artworkUploads } from '../../designs/index.js'
import { createSender, updateSender } from '../senders.js'
import { createSignature, findSignature } from '../signatures.js'
import { adminWriteErrors } from '../../../common/route-parts.js'

/**
 * An account's senders (the name that signs its letters and the return address on their
 * envelopes) and its signatures, with their drawings.
 */
const senders: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/accounts/:id/senders',
    { schema: { params: IdParams, body: admin.CreateSenderBody, response: { 201: admin.Sender, ...adminWriteErrors } } },
    async (request, reply) => reply.status(201).send(await createSender(app.db, request.params.id, request.body)),
  )
  app.patch(
    '/accounts/:id/senders/:senderId',
    { schema: { params: admin.SenderParams, body: admin.UpdateSenderBody, response: { 200: admin.Sender, ...adminWriteErrors } } },
    async (request) => updateSender(app.db, request.params.id, request.params.senderId, request.body),
  )

  app.post(
    '/accounts/:id/signatures',
    { schema: { params: IdParams, body: admin.NamedEntryBody, response: { 201: admin.Signature, ...adminWriteErrors } } },
    async (request, reply) => reply.status(201).send(await createSignature(app.db, request.params.id, request.body.name)),
  )

  await app.register(
    artworkUploads([
      {
        owner: 'signatures',
        path: '/accounts/:id/signatures/:signatureId/artwork',
        params: admin.SignatureParams,
        ownerParam: 'signatureId',
        response: admin.Signature,
        view: findSignature,
      },
    ]),
  )
}

export default senders
