import contentType from 'content-type'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest, FastifySchemaCompiler } from 'fastify'
import { Type, type TSchema } from 'typebox'
import { errorResponses, publicApi, strict } from '@letters/contracts'
import { ApiError, badRequest } from '../../../common/errors.js'
import { decodeCsv } from '../bulk-csv.js'
import { createBulk, noRecipients, type BulkEnvelope, type BulkRequest } from '../create-bulk.js'
import { spanishValidatorCompiler } from '../../../common/validation.js'
import { creationContext, creationHeaders, sendCreation } from './create.js'

/**
 * 8 MiB, this route only: 1,000 recipients of a few kilobytes each (long addresses, a campaign's
 * variables), where a single letter's 64 KiB would refuse an ordinary campaign.
 */
const BULK_BODY_LIMIT_BYTES = 8 * 1024 * 1024

const response = { 200: publicApi.BulkLettersCreated, ...errorResponses(400, 401, 402, 409, 413, 415, 422, 429, 500, 503) }

/**
 * What Fastify checks of a JSON body: the documented schema, except for the recipients
 * themselves, which the creation checks one by one (a bad recipient is listed in `errors`, not
 * the whole request refused), and for their maximum, whose excess is a 413 naming the count.
 */
const JsonEnvelope = Type.Object(
  {
    ...publicApi.BulkLetterBody.properties,
    recipients: Type.Array(Type.Unknown(), {
      minItems: 1,
      errorMessage: noRecipients.json,
    }),
  },
  strict,
)

/**
 * The route's validation: the gateway's own (Spanish messages) for the headers and the query, the
 * envelope for a JSON body, nothing more for a CSV, which the parser below decoded and the
 * creation reads. The documented body schemas stay the full ones.
 */
const bulkValidatorCompiler: FastifySchemaCompiler<TSchema> = (route) => {
  if (route.httpPart !== 'body') return spanishValidatorCompiler(route)
  if (route.contentType === 'text/csv') return (text: unknown) => ({ value: text })
  return spanishValidatorCompiler({ ...route, schema: JsonEnvelope })
}

const unsupportedMediaType = () => new ApiError(415, 'El tipo de contenido no está admitido: envía Content-Type: application/json o text/csv')

function bulkRequest(request: FastifyRequest): BulkRequest {
  const query = request.query as publicApi.BulkLetterQuery
  if (typeof request.body === 'string') return { kind: 'csv', text: request.body, query }
  // No body at all (and so no media type to validate it by).
  if (request.body === undefined || request.body === null) throw badRequest('El cuerpo de la petición está vacío: envía un objeto JSON o un CSV')
  return { kind: 'json', body: request.body as BulkEnvelope, query }
}

/**
 * POST /cards/bulk, in a scope of its own: only here is `text/csv` a body (decoded as UTF-8 before
 * anything else) and a body may be this large.
 */
const bulk: FastifyPluginAsyncTypebox = async (app) => {
  const deps = { db: app.db, intake: app.intake, letterCosts: app.config.letterCosts }

  app.addContentTypeParser('text/csv', { parseAs: 'buffer' }, (request, body, done) => {
    try {
      done(null, decodeCsv(body as Buffer, charsetOf(request)))
    } catch (error) {
      done(error as Error)
    }
  })
  // Any other media type: the same 415 as the rest of the API, naming both this route takes.
  app.addContentTypeParser('*', (_request, _payload, done) => done(unsupportedMediaType()))

  app.post(
    '/cards/bulk',
    {
      bodyLimit: BULK_BODY_LIMIT_BYTES,
      validatorCompiler: bulkValidatorCompiler,
      // The intake never writes an order abandoned at its deadline: a 503 then is true.
      config: { honorsDeadline: true },
      schema: {
        summary: 'Send letters of one of your active campaigns to up to 1,000 recipients, as JSON or as a CSV file',
        description:
          'Each recipient is checked as POST /card checks it: the valid ones become letters, charged and stored together (all or nothing: a balance that cannot pay for all of them is a 402 and nothing is created), ' +
          'the invalid ones are listed in `errors` with their position and the 400 a POST /card would get. More than 1,000 recipients is a 413. ' +
          'As `text/csv`, the campaign and sendAt go in the query (`?campaignId=…&sendAt=…`); sendAt, if given, schedules every letter of the request.',
        tags: ['Letters'],
        headers: creationHeaders,
        querystring: publicApi.BulkLetterQuery,
        body: { content: { 'application/json': { schema: publicApi.BulkLetterBody }, 'text/csv': { schema: publicApi.BulkLetterCsv } } },
        response,
      },
    },
    async (request, reply) => sendCreation(reply, await createBulk(deps, request.caller!, bulkRequest(request), creationContext(request))),
  )
}

/** The `charset` parameter of the request's Content-Type, if it has one. */
function charsetOf(request: FastifyRequest): string | undefined {
  try {
    return contentType.parse(request).parameters.charset
  } catch {
    throw badRequest(`La cabecera Content-Type ('${request.headers['content-type']}') no es válida`)
  }
}

export default bulk
