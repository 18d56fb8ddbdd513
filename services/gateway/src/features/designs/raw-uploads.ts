import type { FastifyInstance, FastifyRequest, FastifySchemaCompiler } from 'fastify'
import type { TSchema } from 'typebox'
import type { ApiError } from '../../common/errors.js'
import { spanishValidatorCompiler } from '../../common/validation.js'

/**
 * A scope whose bodies are files sent as they are (artwork, fonts): only there is a body of one
 * of `types` taken as raw bytes, and any other type is `unsupported` (a 415 of the route's own).
 */
export function takeRawBodies(app: FastifyInstance, types: readonly string[], unsupported: () => ApiError): void {
  for (const type of types) app.addContentTypeParser(type, { parseAs: 'buffer' }, (_request, body, done) => done(null, body))
  app.addContentTypeParser('*', (_request, _payload, done) => done(unsupported()))
}

/**
 * What a file upload route declares: one byte more than `maxBytes` (so that the limit itself is
 * the service's 413 with its message rather than the framework's), its body documented for each
 * type by `schema`, and left unchecked by the schema (the file's checker reads it with real parsers).
 */
export function rawUploadRoute(types: readonly string[], maxBytes: number, schema: TSchema) {
  const validatorCompiler: FastifySchemaCompiler<TSchema> = (route) =>
    route.httpPart === 'body' ? (data: unknown) => ({ value: data }) : spanishValidatorCompiler(route)
  return {
    bodyLimit: maxBytes + 1,
    validatorCompiler,
    body: { content: Object.fromEntries(types.map((type) => [type, { schema }])) },
  }
}

/** The uploaded file: its bytes and the Content-Type it was sent with (lower case, without parameters). */
export function uploadedFile(request: FastifyRequest, unsupported: () => ApiError): { contentType: string; data: Buffer } {
  const data = request.body
  if (!Buffer.isBuffer(data)) throw unsupported()
  return { contentType: (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase(), data }
}
