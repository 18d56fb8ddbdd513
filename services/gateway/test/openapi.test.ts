import { describe, expect } from 'vitest'
import { Validator } from '@seriousme/openapi-schema-validator'
import { letterEventTypes } from '@letters/contracts'
import { it as base } from '@letters/test/support/fixtures'
import { isInternal, openapiPath, registeredRoutes } from '@letters/test/support/contract'
import { UNKNOWN_ID, adminAccount, startGateway } from './helpers.js'

interface Operation {
  parameters?: Array<{ in: string; name: string }>
  requestBody?: { required?: boolean; content: Record<string, { schema: { examples?: unknown[] }; example?: unknown }> }
  responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, { schema: unknown }> }>
  security?: unknown
}
interface Document {
  openapi: string
  info: { version: string }
  components: { securitySchemes: Record<string, unknown> }
  paths: Record<string, Record<string, Operation>>
}

/** The gateway's /openapi.json, read once for the file. */
const it = base.extend('document', { scope: 'file' }, async ({ gateway }) => {
  const response = await gateway.inject({ method: 'GET', url: '/openapi.json' })
  expect(response.statusCode).toBe(200)
  return response.json<Document>()
})

/** The short link of a letter's QR code, opened without a key. */
const QR_LINK = '/q/{code}'

const operations = (document: Document) =>
  Object.entries(document.paths).flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ path, method, operation })))

describe('GET /openapi.json', () => {
  // @seriousme/openapi-schema-validator checks the document against the OpenAPI Initiative's
  // own published JSON Schemas (3.1 with its 2020-12 dialect) through Ajv: maintained, small,
  // and it judges the document by the specification rather than by one tool's reading of it.
  it('is a valid OpenAPI 3.1 document, version 1.0.0, served without a key', async ({ document }) => {
    const result = await new Validator().validate(document as never)
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 2)).toEqual([])
    expect(result.valid).toBe(true)
    expect(document.openapi).toMatch(/^3\.1\./)
    expect(document.info.version).toBe('1.0.0')
  })

  it('lists every public route the gateway registered, and nothing internal', ({ gateway: app, document }) => {
    const registered = registeredRoutes(app)
    expect(registered.length).toBeGreaterThan(10)
    const publicRoutes = registered.filter((route) => !isInternal(route.url)).map((route) => `${route.method} ${openapiPath(route.url)}`)
    const documented = operations(document).map(({ path, method }) => `${method.toUpperCase()} ${path}`)
    expect(publicRoutes).toContain('POST /single')
    expect(documented.sort()).toEqual([...new Set(publicRoutes)].sort())
    expect(Object.keys(document.paths).filter(isInternal)).toEqual([])
  })

  it('asks for X-API-KEY or a dashboard session through security schemes on every operation but signing in and the QR link', ({ document }) => {
    expect(document.components.securitySchemes).toEqual({
      ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-KEY' },
      Session: { type: 'apiKey', in: 'cookie', name: 'letters_session' },
    })
    for (const { path, method, operation } of operations(document)) {
      const withoutCredential = path === '/session' || path.startsWith('/invitations/') || path === QR_LINK
      expect(operation.security, `${method} ${path}`).toEqual(withoutCredential ? [] : [{ ApiKey: [] }, { Session: [] }])
      expect(operation.parameters?.some((parameter) => parameter.name.toLowerCase() === 'x-api-key') ?? false).toBe(false)
    }
  })

  it('gives every answer the shared error schema and the rate-limit headers, Retry-After on 429; the QR link its Location and its page', ({ document }) => {
    for (const { path, method, operation } of operations(document)) {
      const statuses = Object.keys(operation.responses)
      // Signing in and following an invitation need no credential: they cannot be refused one.
      const authenticated = (operation.security as unknown[] | undefined)?.length !== 0
      expect(statuses, `${method} ${path}`).toEqual(expect.arrayContaining([...(authenticated ? ['401', '403'] : []), '429', '500', '503']))
      for (const [status, response] of Object.entries(operation.responses)) {
        // The QR link is opened by a phone's camera: its 302 says where to, its 404 is a page for a person.
        const redirect = path === QR_LINK && status === '302'
        expect(Object.keys(response.headers ?? {}).sort(), `${method} ${path} ${status}`).toEqual(
          [
            'X-RateLimit-Limit',
            'X-RateLimit-Remaining',
            'X-RateLimit-Reset',
            ...(status === '429' ? ['Retry-After'] : []),
            ...(redirect ? ['Location'] : []),
          ].sort(),
        )
        if (path === QR_LINK && status === '404') expect(Object.keys(response.content ?? {})).toEqual(['text/html'])
        else if (Number(status) >= 400) expect(response.content?.['application/json']?.schema).toEqual({ $ref: '#/components/schemas/Error' })
      }
    }
  })

  it('documents the Idempotency-Key header and a Spanish example on each creation', ({ document }) => {
    for (const path of ['/single', '/card', '/cards/bulk']) {
      const operation = document.paths[path]!.post!
      expect(operation.parameters).toContainEqual(expect.objectContaining({ in: 'header', name: 'idempotency-key' }))
      const media = operation.requestBody!.content['application/json']!
      expect(JSON.stringify(media.example ?? media.schema.examples)).toMatch(/"country":"ES"/)
    }
    expect(JSON.stringify(document.paths['/single']!.post!.requestBody)).toMatch(/Querida Lucía/)
  })

  it('documents POST /cards/bulk as JSON, its recipients in the shape POST /card takes, and as CSV with the campaign in the query', ({ document }) => {
    const operation = document.paths['/cards/bulk']!.post!
    const content = operation.requestBody!.content
    expect(Object.keys(content).sort()).toEqual(['application/json', 'text/csv'])
    const json = content['application/json']!.schema as {
      properties: { recipients: { maxItems: number; items: { required: string[]; properties: Record<string, unknown> } } }
    }
    expect(json.properties.recipients.maxItems).toBe(1000)
    expect(json.properties.recipients.items.required).toEqual(['name', 'surname', 'address', 'zip', 'city', 'country'])
    const card = document.paths['/card']!.post!.requestBody!.content['application/json']!.schema as { properties: Record<string, unknown> }
    // POST /card's fields but the two a bulk request gives once for all its recipients.
    const { campaignId: _campaignId, sendAt, signatureId, ...cardRecipient } = card.properties
    expect(json.properties.recipients.items.properties).toEqual(cardRecipient)
    expect((json.properties as Record<string, unknown>).sendAt).toEqual(sendAt)
    expect((json.properties as Record<string, unknown>).signatureId).toEqual(signatureId)
    expect(content['text/csv']!.schema).toMatchObject({ type: 'string' })
    expect(operation.parameters).toContainEqual(expect.objectContaining({ in: 'query', name: 'campaignId', required: false }))
    expect(operation.parameters).toContainEqual(expect.objectContaining({ in: 'query', name: 'sendAt', required: false }))
    expect(operation.parameters).toContainEqual(expect.objectContaining({ in: 'query', name: 'signatureId', required: false }))
    expect(Object.keys(operation.responses).sort()).toEqual(['200', '400', '401', '402', '403', '409', '413', '415', '422', '429', '500', '503'])
  })

  it('documents scheduling and test mode: sendAt on the creations, livemode and sendAt on the letter, letter.scheduled among the event types', ({
    document,
  }) => {
    type Schema = { properties: Record<string, unknown>; required?: string[] }
    const jsonOf = (content: Record<string, { schema: unknown }> | undefined) => content!['application/json']!.schema as Schema
    for (const path of ['/single', '/card']) {
      const body = jsonOf(document.paths[path]!.post!.requestBody!.content)
      expect(body.properties, path).toHaveProperty('sendAt')
      expect(body.required, path).not.toContain('sendAt')
    }
    const letter = jsonOf(document.paths['/cards/{cardId}']!.get!.responses['200']!.content)
    const listed = (jsonOf(document.paths['/cards']!.get!.responses['200']!.content).properties.data as { items: Schema }).items
    for (const shown of [letter, listed]) {
      expect(shown.properties).toMatchObject({ livemode: { type: 'boolean' }, sendAt: expect.anything() })
      expect(shown.required).toEqual(expect.arrayContaining(['livemode', 'sendAt']))
    }
    const events = jsonOf(document.paths['/webhooks']!.post!.requestBody!.content).properties.events as { items: { anyOf: Array<{ enum: string[] }> } }
    expect(events.items.anyOf.flatMap((choice) => choice.enum)).toEqual([...letterEventTypes])
    expect(letterEventTypes).toContain('letter.scheduled')
  })

  it("shows the admin API's test-key body on no public route (an owner's own keys have a schema of their own)", ({ document }) => {
    const propertyNames = (node: unknown): string[] =>
      node === null || typeof node !== 'object'
        ? []
        : Object.entries(node).flatMap(([key, value]) => [
            ...(key === 'properties' && value && typeof value === 'object' ? Object.keys(value) : []),
            ...propertyNames(value),
          ])
    const { '/api-keys': ownKeys, '/api-keys/{id}': ownKey, ...others } = document.paths
    expect(propertyNames(others)).not.toContain('mode')
    // Its schema's own words (admin.IssueApiKeyBody's) appear nowhere either; POST /api-keys names only its own field.
    expect(JSON.stringify(document)).not.toContain("El cuerpo admite solo el campo 'mode'")
    expect(Object.keys(document.paths).filter((path) => path.includes('api-keys'))).toEqual(['/api-keys', '/api-keys/{id}'])
    expect(JSON.stringify(ownKeys?.post?.requestBody)).toMatch(/"required":\["mode"\]/)
    expect(ownKey).toBeDefined()
  })

  it('lets a route that takes no body be called without one', ({ document }) => {
    expect(document.paths['/cards/{cardId}']!.delete!.requestBody).toMatchObject({ required: false })
    expect(document.paths['/single']!.post!.requestBody).toMatchObject({ required: true })
  })

  it('describes the proof as a PDF', ({ document }) => {
    expect(Object.keys(document.paths['/cards/{cardId}/proof']!.get!.responses['200']!.content!)).toEqual(['application/pdf'])
  })
})

describe('the status check of every test gateway (contract.ts)', () => {
  it('fails the closing of a gateway that answered a status missing from the document', async () => {
    const gateway = await startGateway()
    const account = await adminAccount(gateway)
    // The document is built once and cached: take the 404 out of it, as if the route had never declared it.
    const cached = gateway.swagger() as unknown as Document
    delete cached.paths['/cards/{cardId}']!.get!.responses['404']
    const response = await gateway.inject({ method: 'GET', url: `/cards/${UNKNOWN_ID}`, headers: { 'x-api-key': account.apiKey } })
    expect(response.statusCode).toBe(404)
    await expect(gateway.close()).rejects.toThrow('Answers missing from /openapi.json: GET /cards/:cardId → 404')
  })

  it('fails the closing of a gateway that answered 405 while the document has no MethodNotAllowed response', async () => {
    const gateway = await startGateway()
    const cached = gateway.swagger() as unknown as { components: { responses?: Record<string, unknown> } }
    expect(cached.components.responses).toHaveProperty('MethodNotAllowed')
    delete cached.components.responses!.MethodNotAllowed
    const response = await gateway.inject({ method: 'PUT', url: '/cards' })
    expect(response.statusCode).toBe(405)
    await expect(gateway.close()).rejects.toThrow('Answers missing from /openapi.json: PUT /cards → 405')
  })

  it("keeps each gateway's document its own: a change to one gateway's components leaves another's whole", async () => {
    const [first, second] = [await startGateway(), await startGateway()]
    try {
      const components = (gateway: typeof first) => (gateway.swagger() as unknown as { components: { responses: Record<string, unknown> } }).components
      expect(components(first).responses).not.toBe(components(second).responses)
      delete components(first).responses.MethodNotAllowed
      expect(components(second).responses).toHaveProperty('MethodNotAllowed')
      const response = await second.inject({ method: 'PUT', url: '/cards' })
      expect(response.statusCode).toBe(405)
    } finally {
      await first.close().catch(() => {})
      await second.close()
    }
  })
})
