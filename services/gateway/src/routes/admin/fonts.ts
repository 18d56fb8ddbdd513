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
import { ApiError } from '../../errors.js'
import { spanishValidatorCompiler } from '../../plugins/app/validation.js'
import { createAccountFont, listAccountFonts, putAccountFontFile } from '../../services/fonts.js'

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

/**
 * PUT …/fonts/{name}/file, in a scope of its own: only here is a body a font file, taken as raw
 * bytes, and only here may it be this large (one byte more than the limit, so that the limit
 * itself is the service's 413 with its message rather than the framework's).
 */
const fontUploads: FastifyPluginAsyncTypebox = async (app) => {
  for (const type of fontContentTypes) app.addContentTypeParser(type, { parseAs: 'buffer' }, (_request, body, done) => done(null, body))
  app.addContentTypeParser('*', (_request, _payload, done) => done(unsupportedFont()))
  app.put(
    '/accounts/:id/fonts/:name/file',
    {
      bodyLimit: FONT_MAX_BYTES + 1,
      // The file's bytes are checked by @letters/artwork's inspectFont, with a real parser in a child process: the schema only documents them.
      validatorCompiler: (route) => (route.httpPart === 'body' ? (data: unknown) => ({ value: data }) : spanishValidatorCompiler(route)),
      schema: {
        params: AccountFontParams,
        body: { content: Object.fromEntries(fontContentTypes.map((type) => [type, { schema: FontUpload }])) },
        response: { 200: AccountFont, ...errorResponses(400, 401, 404, 413, 415, 500) },
      },
    },
    async (request) => {
      const data = request.body
      if (!Buffer.isBuffer(data)) throw unsupportedFont()
      const contentType = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase()
      return putAccountFontFile(app.db, request.params.id, request.params.name, { contentType, data })
    },
  )
}

export default fonts
