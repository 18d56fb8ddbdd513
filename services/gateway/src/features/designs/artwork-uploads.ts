import type { TSchema } from 'typebox'
import { ARTWORK_MAX_BYTES, admin, artworkContentTypes, errorResponses } from '@letters/contracts'
import type { Executor } from '@letters/db'
import { ApiError } from '../../common/errors.js'
import type { Routes } from '../../common/feature.js'
import { rawUploadRoute, takeRawBodies, uploadedFile } from './raw-uploads.js'
import { putArtwork, type ArtworkOwner } from './designs.js'

const unsupportedArtwork = () =>
  new ApiError(415, `El archivo debe enviarse tal cual, con Content-Type ${artworkContentTypes.join(', ')} (para una firma: image/svg+xml o image/png)`)

/** One owner's PUT …/artwork: its path, the parameter naming the owner, and how the owner is shown once it has the new version. */
export interface ArtworkUpload {
  owner: ArtworkOwner
  path: string
  params: TSchema
  /** The parameter of `path` that holds the owner's id (the account's is `id`). */
  ownerParam: string
  response: TSchema
  view: (ex: Executor, accountId: string, ownerId: string) => Promise<object | undefined>
}

/**
 * PUT …/artwork for each owner, in a scope of its own: only here is a body an image or a PDF, and
 * only here may it be this large. The designs' and the signatures' routes are built by this one
 * function, so every artwork upload takes the same types, limits and errors.
 */
export const artworkUploads =
  (uploads: readonly ArtworkUpload[]): Routes =>
  async (app) => {
    takeRawBodies(app, artworkContentTypes, unsupportedArtwork)
    const { body, ...upload } = rawUploadRoute(artworkContentTypes, ARTWORK_MAX_BYTES, admin.ArtworkUpload)
    for (const { owner, path, params, ownerParam, response, view } of uploads) {
      app.put(
        path,
        // The file's bytes are checked by @letters/artwork, with real parsers: the schema only documents them.
        { ...upload, schema: { params, body, response: { 200: response, ...errorResponses(400, 401, 404, 413, 415, 500, 503) } } },
        async (request) => {
          const ids = request.params as Record<string, string>
          const file = uploadedFile(request, unsupportedArtwork)
          return putArtwork(app.db, owner, { accountId: ids.id!, ownerId: ids[ownerParam]! }, file, view, request.deadline)
        },
      )
    }
  }
