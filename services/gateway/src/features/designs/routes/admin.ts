import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { IdParams, admin } from '@letters/contracts'
import { artworkUploads } from '../artwork-uploads.js'
import { createCardDesign, createEnvelopeDesign, findCardDesign, findEnvelopeDesign, updateCardDesign, updateEnvelopeDesign } from '../designs.js'
import { adminWriteErrors } from '../../../common/route-parts.js'

/**
 * An account's card designs and envelope designs: created, changed, and given artwork.
 */
const designsAdmin: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/accounts/:id/card-designs',
    { schema: { params: IdParams, body: admin.CreateCardDesignBody, response: { 201: admin.CardDesign, ...adminWriteErrors } } },
    async (request, reply) => reply.status(201).send(await createCardDesign(app.db, request.params.id, request.body)),
  )
  app.patch(
    '/accounts/:id/card-designs/:designId',
    { schema: { params: admin.DesignParams, body: admin.UpdateCardDesignBody, response: { 200: admin.CardDesign, ...adminWriteErrors } } },
    async (request) => updateCardDesign(app.db, request.params.id, request.params.designId, request.body),
  )

  app.post(
    '/accounts/:id/envelope-designs',
    { schema: { params: IdParams, body: admin.CreateEnvelopeDesignBody, response: { 201: admin.EnvelopeDesign, ...adminWriteErrors } } },
    async (request, reply) => reply.status(201).send(await createEnvelopeDesign(app.db, request.params.id, request.body)),
  )
  app.patch(
    '/accounts/:id/envelope-designs/:designId',
    { schema: { params: admin.DesignParams, body: admin.UpdateEnvelopeDesignBody, response: { 200: admin.EnvelopeDesign, ...adminWriteErrors } } },
    async (request) => updateEnvelopeDesign(app.db, request.params.id, request.params.designId, request.body),
  )

  await app.register(
    artworkUploads([
      {
        owner: 'card-designs',
        path: '/accounts/:id/card-designs/:designId/artwork',
        params: admin.DesignParams,
        ownerParam: 'designId',
        response: admin.CardDesign,
        view: findCardDesign,
      },
      {
        owner: 'envelope-designs',
        path: '/accounts/:id/envelope-designs/:designId/artwork',
        params: admin.DesignParams,
        ownerParam: 'designId',
        response: admin.EnvelopeDesign,
        view: findEnvelopeDesign,
      },
    ]),
  )
}

export default designsAdmin
