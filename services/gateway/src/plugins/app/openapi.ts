import { STATUS_CODES } from 'node:http'
import fp from 'fastify-plugin'
import swagger, { type FastifyDynamicSwaggerOptions } from '@fastify/swagger'
import type { RouteOptions } from 'fastify'
import { ErrorResponse, SESSION_COOKIE } from '@letters/contracts'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set on every route of the public API's scopes (plugins/app/scopes.ts): only those are in /openapi.json. */
    publicApi?: boolean
  }
}

export const API_KEY_SCHEME = 'ApiKey'
/** A person signed in to the dashboard: the session's cookie (HttpOnly), with X-CSRF-Token on every change. */
export const SESSION_SCHEME = 'Session'

type Json = Record<string, unknown>
interface Operation {
  parameters?: Array<{ in: string; name: string }>
  requestBody?: { required?: boolean; content?: Record<string, { schema: unknown }> }
  responses: Record<string, Json>
  security?: unknown
  tags?: string[]
}

const integerHeader = (description: string) => ({ schema: { type: 'integer' as const }, description })

/** What @fastify/rate-limit sends on every answer of a public route, the refused ones included. */
const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': integerHeader('Requests allowed per window for this account (or, before a valid key, this IP).'),
  'X-RateLimit-Remaining': integerHeader('Requests left in the current window.'),
  'X-RateLimit-Reset': integerHeader('Seconds until the current window ends.'),
}
const RETRY_AFTER = { 'Retry-After': integerHeader('Seconds to wait before trying again.') }

/**
 * A path's other methods are answered 405: the answer of no operation, so a response of the
 * document's own rather than one repeated on every operation.
 */
const METHOD_NOT_ALLOWED = 'MethodNotAllowed'
const METHOD_NOT_ALLOWED_RESPONSE = {
  description: 'The path exists but not with this method. `Allow` lists the methods it has.',
  headers: { Allow: { schema: { type: 'string' as const }, description: 'The methods of the path, comma-separated (GET, HEAD, POST).' } },
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
}

const headerRefs = (names: string[]) => Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]))
const ERROR_SCHEMA_REF = { $ref: '#/components/schemas/Error' }
const ERROR_SCHEMA_JSON = JSON.stringify(ErrorResponse)

/** The group of a route that names none in its schema's `tags`: its first path segment (/webhooks/{id} → webhooks). */
const tagOf = (url: string) => url.split('/')[1] ?? ''

/**
 * Marks the routes of a scope as public: `app.addHook('onRoute', markPublic)` in that scope,
 * so a route added there later (webhooks…) is documented without a list kept anywhere else.
 */
export function markPublic(route: RouteOptions) {
  route.config = { ...route.config, publicApi: true }
}

/**
 * What the document says beyond the routes' own schemas, which stay the one home of every
 * body, parameter and status: the X-API-KEY scheme (in place of the header parameter the
 * schemas declare so that Fastify reads it), the rate-limit headers on every answer, and a
 * media type taken from `contentMediaType` (the proof is a PDF, not JSON).
 */
function decorate(operation: Operation, url: string) {
  operation.parameters = operation.parameters?.filter((parameter) => !(parameter.in === 'header' && parameter.name === 'x-api-key'))
  if (operation.parameters?.length === 0) delete operation.parameters
  // A body schema that accepts null (NoBody) means the request may have no body at all.
  const body = operation.requestBody?.content?.['application/json']?.schema as { anyOf?: Json[] } | undefined
  if (operation.requestBody && body?.anyOf?.some((option) => option.type === 'null')) operation.requestBody.required = false
  // A route that declares its own (signing in: none) keeps it.
  operation.security ??= [{ [API_KEY_SCHEME]: [] }, { [SESSION_SCHEME]: [] }]
  operation.tags ??= [tagOf(url)]
  for (const [status, response] of Object.entries(operation.responses)) {
    response.description = STATUS_CODES[status] ?? status
    response.headers = {
      ...(response.headers as Json | undefined),
      ...headerRefs(Object.keys(status === '429' ? { ...RATE_LIMIT_HEADERS, ...RETRY_AFTER } : RATE_LIMIT_HEADERS)),
    }
    const content = response.content as Record<string, { schema: Json }> | undefined
    const json = content?.['application/json']
    // Every error is the one shared schema: one named type for the SDK, one entry in the page.
    if (json && JSON.stringify(json.schema) === ERROR_SCHEMA_JSON) json.schema = ERROR_SCHEMA_REF
    const mediaType = json?.schema.contentMediaType
    if (content && json && typeof mediaType === 'string') {
      delete content['application/json']
      content[mediaType] = json
    }
  }
}

/**
 * The document's options, made anew for each app: @fastify/swagger keeps the objects it is given
 * in the document it caches, so two apps in one process (the tests') given one object would share
 * their documents' components, and a change to one would be seen by the other.
 */
const openapiOptions = (): FastifyDynamicSwaggerOptions => ({
  openapi: {
    openapi: '3.1.0',
    info: {
      title: 'Letters API',
      version: '1.0.0',
      description:
        'Handwritten letters, printed and posted. Every route needs the account key in `X-API-KEY`, or the dashboard session of a person of the account, limited by their role. ' +
        'Creations accept an `Idempotency-Key`: a retry with the same key returns the first answer and charges nothing twice. ' +
        'Errors are `{ error, message, requestId }`, with `message` in Spanish. ' +
        'Every answer carries the rate-limit headers; a 429 also carries `Retry-After`. ' +
        'A path of this document asked with a method it does not list is answered 405 with `Allow` (the shared `MethodNotAllowed` response); an unknown path, 404.',
    },
    components: {
      securitySchemes: {
        [API_KEY_SCHEME]: { type: 'apiKey', in: 'header', name: 'X-API-KEY' },
        [SESSION_SCHEME]: { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE },
      },
      schemas: { Error: ErrorResponse },
      headers: { ...RATE_LIMIT_HEADERS, ...RETRY_AFTER },
      responses: { [METHOD_NOT_ALLOWED]: METHOD_NOT_ALLOWED_RESPONSE },
    },
    security: [{ [API_KEY_SCHEME]: [] }, { [SESSION_SCHEME]: [] }],
  },
  // Only the public routes: admin, ops, metrics and health stay out of the client's contract.
  transform: ({ schema, url, route }) => ({ schema: route.config?.publicApi ? schema : { ...schema, hide: true }, url }),
  transformObject: (documentObject) => {
    const document = 'openapiObject' in documentObject ? documentObject.openapiObject : documentObject.swaggerObject
    for (const [url, pathItem] of Object.entries(document.paths ?? {})) {
      for (const operation of Object.values(pathItem as Record<string, Operation>)) decorate(operation, url)
    }
    return document
  },
})

/** Builds the OpenAPI 3.1 document from the schemas of the routes registered after it. */
export default fp(
  async (app) => {
    await app.register(swagger, openapiOptions())
  },
  { name: 'openapi' },
)
