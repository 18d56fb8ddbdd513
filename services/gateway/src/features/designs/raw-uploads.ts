import type { FastifyInstance, FastifyRequest, FastifySchemaCompiler } from 'fastify'
import type { TSchema } from 'typebox'
import { mediaType } from '@letters/contracts'
import type { ApiError } from '../../common/errors.js'
import { spanishValidatorCompiler } from '../../common/validation.js'

/**
 * A scope whose bodies are files sent as they are (artwork, fonts): only there is a body of one
 * of `types` taken as raw bytes, and any other type is `unsupported` (a 415 of the route's own).
 * A header the framework cannot parse (empty, or a list of types) is refused here too, before
 * it would reach the parsers and get the JSON routes' advice; so the catch-all parser is reached
 * only by a request that sent no Content-Type at all.
 */
export function takeRawBodies(app: FastifyInstance, types: readonly string[], unsupported: () => ApiError): void {
  for (const type of types) app.addContentTypeParser(type, { parseAs: 'buffer' }, (_request, body, done) => done(null, body))
  app.addContentTypeParser('*', (_request, _payload, done) => done(unsupported()))
  app.addHook('preParsing', async (request) => {
    const header = request.headers['content-type']
    if (header !== undefined && !types.includes(mediaType(header))) throw unsupported()
  })
}

/**
 * What a file upload route declares: one byte more than `maxBytes` (so that the limit itself is
 * the service's 413 with its message rather than the framework's), its body documented for each
 * type by `schema`, and left unchecked by the schema (the file's checker reads it with real parsers).
 * It honours its deadline: its version is written only while its request waits (writeByDeadline).
 */
export function rawUploadRoute(types: readonly string[], maxBytes: number, schema: TSchema) {
  const validatorCompiler: FastifySchemaCompiler<TSchema> = (route) =>
    route.httpPart === 'body' ? (data: unknown) => ({ value: data }) : spanishValidatorCompiler(route)
  return {
    bodyLimit: maxBytes + 1,
    validatorCompiler,
    config: { honorsDeadline: true },
    body: { content: Object.fromEntries(types.map((type) => [type, { schema }])) },
  }
}

/** The uploaded file: its bytes and the Content-Type it was sent with (lower case, without parameters). */
export function uploadedFile(request: FastifyRequest, unsupported: () => ApiError): { contentType: string; data: Buffer } {
  const data = request.body
  if (!Buffer.isBuffer(data)) throw unsupported()
  return { contentType: mediaType(request.headers['content-type'] ?? ''), data }
}
