import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import {
  AccountFont,
  AccountFontParams,
  CreateAccountFontBody,
  FONT_MAX_BYTES,
  FontUpload,
  IdParams,
  errorResponses,
  fontContentTypes,
} from '@letters/contracts'
import { ApiError } from '../../../common/errors.js'
import { createAccountFont, listAccountFonts, putAccountFontFile } from '../fonts.js'
import { rawUploadRoute, takeRawBodies, uploadedFile } from '../raw-uploads.js'

/** An account's own handwriting fonts: created by name, then given a file (each upload a new version). */
const fonts: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/accounts/:id/fonts',
    { schema: { params: IdParams, body: CreateAccountFontBody, response: { 201: AccountFont, ...errorResponses(400, 401, 404, 409, 415, 500) } } },
    async (request, reply) => reply.status(201).send(await createAccountFont(app.db, request.params.id, request.body)),
  )
  app.get(
    '/accounts/:id/fonts',
    { schema: { params: IdParams, response: { 200: Type.Object({ data: Type.Array(AccountFont) }), ...errorResponses(400, 401, 404, 500) } } },
    async (request) => ({ data: await listAccountFonts(app.db, request.params.id) }),
  )
  await app.register(fontUploads)
}

const unsupportedFont = () => new ApiError(415, `El archivo de la fuente debe enviarse tal cual, con Content-Type ${fontContentTypes.join(', ')}`)

/** PUT …/fonts/{name}/file, in a scope of its own: only here is a body a font file, and only here may it be this large. */
const fontUploads: FastifyPluginAsyncTypebox = async (app) => {
  takeRawBodies(app, fontContentTypes, unsupportedFont)
  const { body, ...upload } = rawUploadRoute(fontContentTypes, FONT_MAX_BYTES, FontUpload)
  app.put(
    '/accounts/:id/fonts/:name/file',
    // The file's bytes are checked by @letters/artwork's inspectFont, with a real parser in a child process: the schema only documents them.
    { ...upload, schema: { params: AccountFontParams, body, response: { 200: AccountFont, ...errorResponses(400, 401, 404, 413, 415, 500, 503) } } },
    async (request) => putAccountFontFile(app.db, request.params.id, request.params.name, uploadedFile(request, unsupportedFont), request.deadline),
  )
}

export default fonts
