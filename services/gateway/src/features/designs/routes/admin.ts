import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ARTWORK_MAX_BYTES, IdParams, admin, artworkContentTypes, errorResponses } from '@letters/contracts'
import { ApiError } from '../../../common/errors.js'
import {
  artworkOwners,
  createCardDesign,
  createEnvelopeDesign,
  createSignature,
  putArtwork,
  updateCardDesign,
  updateEnvelopeDesign,
  type ArtworkOwner,
} from '../designs.js'
import { rawUploadRoute, takeRawBodies, uploadedFile } from './raw-uploads.js'

const writeErrors = errorResponses(400, 401, 404, 415, 500)

/**
 * An account's card designs, envelope designs and signatures: created, changed, and given artwork.
 */
const companyData: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/accounts/:id/card-designs',
    { schema: { params: IdParams, body: admin.CreateCardDesignBody, response: { 201: admin.CardDesign, ...writeErrors } } },
    async (request, reply) => reply.status(201).send(await createCardDesign(app.db, request.params.id, request.body)),
  )
  app.patch(
    '/accounts/:id/card-designs/:designId',
    { schema: { params: admin.DesignParams, body: admin.UpdateCardDesignBody, response: { 200: admin.CardDesign, ...writeErrors } } },
    async (request) => updateCardDesign(app.db, request.params.id, request.params.designId, request.body),
  )

  app.post(
    '/accounts/:id/envelope-designs',
    { schema: { params: IdParams, body: admin.CreateEnvelopeDesignBody, response: { 201: admin.EnvelopeDesign, ...writeErrors } } },
    async (request, reply) => reply.status(201).send(await createEnvelopeDesign(app.db, request.params.id, request.body)),
  )
  app.patch(
    '/accounts/:id/envelope-designs/:designId',
    { schema: { params: admin.DesignParams, body: admin.UpdateEnvelopeDesignBody, response: { 200: admin.EnvelopeDesign, ...writeErrors } } },
    async (request) => updateEnvelopeDesign(app.db, request.params.id, request.params.designId, request.body),
  )

  app.post(
    '/accounts/:id/signatures',
    { schema: { params: IdParams, body: admin.NamedEntryBody, response: { 201: admin.Signature, ...writeErrors } } },
    async (request, reply) => reply.status(201).send(await createSignature(app.db, request.params.id, request.body.name)),
  )

  await app.register(artworkUploads)
}

const unsupportedArtwork = () =>
  new ApiError(415, `El archivo debe enviarse tal cual, con Content-Type ${artworkContentTypes.join(', ')} (para una firma: image/svg+xml o image/png)`)

/** PUT …/artwork, in a scope of its own: only here is a body an image or a PDF, and only here may it be this large. */
const artworkUploads: FastifyPluginAsyncTypebox = async (app) => {
  takeRawBodies(app, artworkContentTypes, unsupportedArtwork)
  const { body, ...upload } = rawUploadRoute(artworkContentTypes, ARTWORK_MAX_BYTES, admin.ArtworkUpload)

  const routes = {
    'card-designs': { path: '/accounts/:id/card-designs/:designId/artwork', params: admin.DesignParams, response: admin.CardDesign },
    'envelope-designs': { path: '/accounts/:id/envelope-designs/:designId/artwork', params: admin.DesignParams, response: admin.EnvelopeDesign },
    signatures: { path: '/accounts/:id/signatures/:signatureId/artwork', params: admin.SignatureParams, response: admin.Signature },
  } as const
  for (const owner of Object.keys(artworkOwners) as ArtworkOwner[]) {
    const { path, params, response } = routes[owner]
    app.put(
      path,
      // The file's bytes are checked by @letters/artwork, with real parsers: the schema only documents them.
      { ...upload, schema: { params, body, response: { 200: response, ...errorResponses(400, 401, 404, 413, 415, 500) } } },
      async (request) => {
        const ids = request.params as { id: string; designId?: string; signatureId?: string }
        return putArtwork(app.db, owner, ids.id, (ids.designId ?? ids.signatureId)!, uploadedFile(request, unsupportedArtwork))
      },
    )
  }
}

export default companyData
