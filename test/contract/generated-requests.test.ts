/**
 * Requests generated from /openapi.json, sent over HTTP to a real gateway, and every answer checked
 * against the same document: for each operation, requests whose path, query and body are drawn from
 * its schemas (fast-check arbitraries built from them), requests with one thing broken (a required
 * field left out, a wrong type, a value out of range, an unknown field, a malformed id), one without a
 * credential, and for each path a method it does not have. An answer must be documented for its
 * operation, have the documented Content-Type, body and headers, never be a 5xx; a request the
 * schemas refuse must not succeed, and one they accept must not be refused as malformed.
 *
 * Valid requests carry the credential the operation's client has (a test key; the live key for
 * the balance; the dashboard's session, CSRF token and Origin for the team, keys and session), and
 * every operation must have one answered past authentication (not 401 nor 403).
 *
 * What the gateway does apart from the document is listed once, in EXCEPTIONS, each with its reason;
 * anything else fails the test, with fast-check's smallest request that shows it.
 *
 * GENERATED_REQUESTS_SEED and GENERATED_REQUESTS_RUNS (runs per operation and kind) make it longer
 * or different locally; CI runs the fixed seed.
 */
import { expect } from 'vitest'
import fc from 'fast-check'
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import formats from 'ajv-formats'
import { it as base } from '@letters/test/support/fixtures'
import { adminAccount } from '@letters/test/support/accounts'
import { adminCampaign, issueTestKey } from '@letters/test/support/gateway'
import { singleLetter } from '@letters/test/support/factories'
import { DashboardBrowser, GOOD_PASSWORD, invitationToken, inviteThroughAdmin, signedInUser } from '@letters/test/support/dashboard'

const SEED = Number(process.env.GENERATED_REQUESTS_SEED ?? 20261130)
const RUNS = Number(process.env.GENERATED_REQUESTS_RUNS ?? 25)

/** Operations that draw a PDF or PNG per request: a few runs each, or they would take the file's whole time. */
const DRAWING = new Set([
  'POST /single/preview',
  'GET /cards/{cardId}/proof',
  'GET /cards/{cardId}/proof.png',
  'GET /card-designs/{id}/preview',
  'GET /envelope-designs/{id}/preview',
  'GET /signatures/{id}/preview',
  'GET /fonts/{name}/preview',
])
const runsOf = (operation: string) => (DRAWING.has(operation) ? Math.max(2, Math.ceil(RUNS / 4)) : RUNS)

type Schema = Record<string, unknown> & {
  type?: string | string[]
  enum?: unknown[]
  const?: unknown
  anyOf?: Schema[]
  oneOf?: Schema[]
  properties?: Record<string, Schema>
  required?: string[]
  additionalProperties?: boolean | Schema
  items?: Schema
  minItems?: number
  maxItems?: number
  uniqueItems?: boolean
  minLength?: number
  maxLength?: number
  pattern?: string
  format?: string
  minimum?: number
  maximum?: number
}
interface Parameter {
  in: 'path' | 'query' | 'header' | 'cookie'
  name: string
  required?: boolean
  schema: Schema
}
interface Response {
  headers?: Record<string, { schema: Schema; required?: boolean }>
  content?: Record<string, { schema: Schema }>
}
interface Operation {
  parameters?: Parameter[]
  requestBody?: { required?: boolean; content: Record<string, { schema: Schema }> }
  responses: Record<string, Response>
  security?: unknown[]
}
interface Document {
  paths: Record<string, Record<string, Operation>>
  security?: unknown[]
}

/** What a request is for: drawn from the schemas, one thing broken, or sent without a credential. */
type Kind = 'valid' | 'broken' | 'no credential' | 'other method'

interface Request {
  kind: Kind
  /** What was broken, for a broken request. */
  broken?: string
  /** Whether the document's schemas refuse it: it must then not succeed. */
  invalid: boolean
  method: string
  path: string
  params: Record<string, string>
  query: Record<string, string>
  headers: Record<string, string>
  /** undefined: no body at all. */
  body?: unknown
  /** A text/csv body (a string), instead of JSON. */
  csv?: boolean
  /** For a method the path has not, the methods it has. */
  allowed?: string[]
}

interface Answer {
  status: number
  headers: Headers
  text: string
  bytes: Buffer
}

type Check = 'server error' | 'undocumented status' | 'content type' | 'body schema' | 'headers' | 'invalid accepted' | 'valid refused' | 'method not allowed'

interface Problem {
  operation: string
  check: Check
  detail: string
}

/**
 * Where the gateway answers apart from the document: each by operation, status and check, with the
 * reason; `when` narrows it to the request or answer it is about. Nothing else is allowed.
 */
interface Exception {
  operation: string
  status: number
  check: Check
  reason: string
  when?: (request: Request, answer: Answer) => boolean
}

/** The JSON in `text`, or undefined where it is none. */
function json(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** The answer's message names this field (the gateway's messages quote it: 'cursor'), or says this. */
const about =
  (field: string | RegExp) =>
  (_request: Request, answer: Answer): boolean => {
    const message = (json(answer.text) as { message?: string } | undefined)?.message ?? ''
    return typeof field === 'string' ? message.includes(`'${field}'`) : field.test(message)
  }

/** One exception for each of `operations`. */
const each = (operations: string[], exception: Omit<Exception, 'operation'>): Exception[] => operations.map((operation) => ({ operation, ...exception }))

const PAGED = ['GET /cards', 'GET /events', 'GET /suppressions', 'GET /balance/movements', 'GET /webhooks/{id}/deliveries']
const RECIPIENTS = ['POST /single', 'POST /single/preview', 'POST /card', 'POST /cards/bulk']

const EXCEPTIONS: Exception[] = [
  {
    operation: 'POST /webhooks',
    status: 400,
    check: 'valid refused',
    reason: "a webhook's host must resolve (to a public address), which no schema can say",
    when: about(/^No se puede resolver el nombre/),
  },
  {
    operation: 'POST /webhooks',
    status: 400,
    check: 'valid refused',
    reason: 'an account has at most 10 webhooks of each mode, which only the answer says',
    when: about(/como mucho 10 webhooks/),
  },
  // A cursor is opaque: only a previous page's nextCursor is one, which no schema can say.
  ...each(PAGED, { status: 400, check: 'valid refused', reason: "a cursor is a previous page's nextCursor, not any string", when: about('cursor') }),
  ...each(['GET /cards', 'GET /cards/stats'], {
    status: 400,
    check: 'valid refused',
    reason: 'from and to must be ISO 8601 date-times with an offset, which only their errorMessage says (no format: date-time)',
    when: (request, answer) => about('from')(request, answer) || about('to')(request, answer),
  }),
  ...each(RECIPIENTS, {
    status: 400,
    check: 'valid refused',
    reason: 'trackingUrl must be an https:// URL without credentials, which only its description says (no format, no pattern)',
    when: about('trackingUrl'),
  }),
  // A postal code is checked against its country's format, which the schema (any text) does not say.
  ...each(RECIPIENTS, {
    status: 400,
    check: 'valid refused',
    reason: "zip is checked against the country's postal code format, which its schema (any non-blank text) does not say",
    when: about('zip'),
  }),
  // Met by most seeds (a generated name), not by every one: the fixed seed draws only the account's fonts.
  ...each(['POST /single', 'POST /single/preview'], {
    status: 400,
    check: 'valid refused',
    reason: 'fontName must name a font the account has (GET /fonts), which only its errorMessage says',
    when: about(/^La fuente '.*' no existe/s),
  }),
  ...each(['POST /card', 'POST /cards/bulk'], {
    status: 400,
    check: 'valid refused',
    reason: "variables' names (a CSV's extra columns) must be the campaign's, which no schema of the operation can say",
    when: about(/^La variable '.*' no existe en la campaña|^La columna '.*' del CSV no es un campo del destinatario ni una variable de la campaña/s),
  }),
  ...each(RECIPIENTS, {
    status: 400,
    check: 'valid refused',
    reason: 'sendAt must be an ISO 8601 date-time with an offset, 1 minute to 180 days ahead, which only its errorMessage and description say',
    when: about('sendAt'),
  }),
  ...each(RECIPIENTS, {
    status: 400,
    check: 'valid refused',
    reason: "text the letter's font has no glyph for is refused, which no schema says (it depends on the font)",
    when: about(/no puede escribir/),
  }),
  // Not a mismatch in kind: an id in the body of something the account does not have makes the request wrong (400), the path exists.
  ...each(RECIPIENTS, {
    status: 400,
    check: 'valid refused',
    reason: 'an id in the body of a design, sender, signature or campaign the account does not have is a 400',
    when: about(/no corresponde a ning/),
  }),
  {
    operation: 'POST /invitations/accept',
    status: 400,
    check: 'valid refused',
    reason: 'a new password must have 12 characters, not be a common one and not be guessable, which only the answer says',
    when: about(/^La contraseña debe tener|^Esa contraseña/),
  },
  // The document ties parameters to the operation, not to a media type: that the query's are for a
  // CSV body only is in their descriptions, which no generator reads.
  {
    operation: 'POST /cards/bulk',
    status: 400,
    check: 'valid refused',
    reason: 'its query parameters are for a text/csv body only (their descriptions say so); with a JSON body they are refused',
    when: (request) => !request.csv && Object.keys(request.query).length > 0,
  },
]

// ———————————————————————————————————— the document ————————————————————————————————————

/** The document with every local $ref replaced by what it points to (there are no cycles). */
function resolveRefs(node: unknown, root: unknown): unknown {
  if (Array.isArray(node)) return node.map((item) => resolveRefs(item, root))
  if (node === null || typeof node !== 'object') return node
  const ref = (node as { $ref?: unknown }).$ref
  if (typeof ref === 'string' && ref.startsWith('#/')) {
    const target = ref
      .slice(2)
      .split('/')
      .reduce<unknown>((at, key) => (at as Record<string, unknown>)[key.replace(/~1/g, '/').replace(/~0/g, '~')], root)
    return resolveRefs(target, root)
  }
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, resolveRefs(value, root)]))
}

// OpenAPI 3.1's schemas are JSON Schema 2020-12; `errorMessage` (the gateway's Spanish messages) and
// `example` are annotations to it, which strict mode would refuse.
const ajv = new Ajv2020({ strict: false, allErrors: false })
formats.default(ajv)
// An IRI is a URI that may hold non-ASCII characters: what WHATWG's URL parser takes, as the gateway's does.
ajv.addFormat('iri', (value: string) => URL.canParse(value))
const compiled = new WeakMap<Schema, ValidateFunction>()
const validatorOf = (schema: Schema) => {
  let validate = compiled.get(schema)
  if (!validate) compiled.set(schema, (validate = ajv.compile(schema)))
  return validate
}
const conforms = (schema: Schema, value: unknown) => validatorOf(schema)(value)

// ———————————————————————————————————— values from schemas ————————————————————————————————————

/** Values the account holds, by field or parameter name: drawn most of the time, so that requests reach past a 404. */
type Known = Record<string, string[]>

const text = (schema: Schema, ascii: boolean) => {
  const minLength = schema.minLength ?? 0
  const maxLength = Math.min(schema.maxLength ?? 40, minLength + 40)
  const fits = (value: string) => [...value].length >= minLength && [...value].length <= (schema.maxLength ?? Infinity)
  if (schema.format === 'uuid') return fc.uuid()
  if (schema.format === 'date-time')
    return fc.date({ noInvalidDate: true, min: new Date('2000-01-01'), max: new Date('2100-01-01') }).map((d) => d.toISOString())
  if (schema.format === 'uri' || schema.format === 'iri') return fc.webUrl()
  if (schema.pattern !== undefined) {
    const pattern = new RegExp(schema.pattern, 'u')
    return fc.stringMatching(pattern).filter((value) => fits(value) && (!ascii || /^[\x20-\x7e]*$/.test(value)))
  }
  const units = ascii
    ? fc.string({ minLength, maxLength })
    : fc.oneof(fc.string({ minLength, maxLength }), fc.string({ unit: 'grapheme', minLength, maxLength }))
  return units.filter(fits)
}

/** An arbitrary of the values `schema` accepts; `name` is the field's, for the account's own values. */
function valueOf(schema: Schema, known: Known, name?: string, ascii = false): fc.Arbitrary<unknown> {
  const own = name === undefined ? undefined : known[name]
  if (own?.length) {
    const generic = valueOf(schema, {}, undefined, ascii)
    return fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...own) }, { weight: 1, arbitrary: generic })
  }
  if (schema.const !== undefined) return fc.constant(schema.const)
  if (schema.enum) return fc.constantFrom(...schema.enum)
  const alternatives = schema.anyOf ?? schema.oneOf
  if (alternatives) return fc.oneof(...alternatives.map((alternative) => valueOf(alternative, known, name, ascii)))
  if (Array.isArray(schema.type)) return fc.oneof(...schema.type.map((type) => valueOf({ ...schema, type }, known, name, ascii)))
  switch (schema.type) {
    case 'null':
      return fc.constant(null)
    case 'boolean':
      return fc.boolean()
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1_000_000, max: schema.maximum ?? 1_000_000 })
    case 'number':
      return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true })
    case 'string':
      return text(schema, ascii)
    case 'array': {
      const items = valueOf(schema.items ?? {}, known, name, ascii)
      const constraints = { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 3, 3) }
      return schema.uniqueItems ? fc.uniqueArray(items, { ...constraints, selector: (item) => JSON.stringify(item) }) : fc.array(items, constraints)
    }
    case 'object':
    case undefined: {
      if (!schema.properties && schema.type === undefined) return fc.jsonValue()
      const properties = Object.fromEntries(Object.entries(schema.properties ?? {}).map(([key, property]) => [key, valueOf(property, known, key, ascii)]))
      const record = fc.record(properties, { requiredKeys: (schema.required ?? []).filter((key) => key in properties) })
      const extra = schema.additionalProperties
      if (typeof extra !== 'object') return record
      return fc
        .tuple(record, fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), valueOf(extra, known, undefined, ascii), { maxKeys: 3 }))
        .map(([fields, more]) => ({ ...more, ...fields }))
    }
    default:
      throw new Error(`no generator for the schema type ${String(schema.type)}`)
  }
}

/** How a parameter's value travels in a URL or header. */
const serialize = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value))

/** The columns a CSV of recipients may have, as the text/csv body's description lists them; then one per variable. */
const CSV_COLUMNS = ['name', 'surname', 'address', 'zip', 'city', 'country', 'company', 'province', 'inkColor', 'trackingUrl']

/** Recipients as a CSV, the way a spreadsheet writes them: a header row, fields quoted where they hold a separator, a quote or a line break. */
function csvOf(recipients: Array<Record<string, unknown>>): string {
  const cells = recipients.map((recipient) => {
    // A header cell is trimmed and names one column: a variable named otherwise has no column.
    const variables = Object.entries((recipient.variables as Record<string, string> | undefined) ?? {})
    const row = Object.fromEntries(variables.filter(([name]) => name !== '' && name === name.trim() && !CSV_COLUMNS.includes(name)))
    for (const column of CSV_COLUMNS) if (typeof recipient[column] === 'string') row[column] = recipient[column]
    return row
  })
  const columns = [...new Set(cells.flatMap((row) => Object.keys(row)))]
  const field = (value: string) => (/[",;\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value)
  return [columns, ...cells.map((row) => columns.map((column) => row[column] ?? ''))].map((line) => line.map(field).join(',')).join('\r\n')
}

// ———————————————————————————————————— breaking one thing ————————————————————————————————————

const WRONG_TYPES: unknown[] = [12345, 'texto', true, null, [], {}]

/** Every way to break `value` once, by what `schema` says of it: each returns a value the schema refuses (checked after). */
function breakages(schema: Schema, value: unknown): Array<[string, unknown]> {
  const ways: Array<[string, unknown]> = WRONG_TYPES.map((wrong) => [`a ${JSON.stringify(wrong)} instead`, wrong])
  const simple = schema.anyOf?.find((alternative) => alternative.type !== 'null') ?? schema
  if (simple.maxLength !== undefined) ways.push([`${simple.maxLength + 1} characters`, 'x'.repeat(simple.maxLength + 1)])
  if (simple.minLength !== undefined && simple.minLength > 0) ways.push(['empty', ''])
  if (simple.maximum !== undefined) ways.push([`${simple.maximum + 1}`, simple.maximum + 1])
  if (simple.minimum !== undefined) ways.push([`${simple.minimum - 1}`, simple.minimum - 1])
  if (simple.enum) ways.push(['a value outside its enum', 'no-es-valido'])
  if (simple.format === 'uuid') ways.push(['not a UUID', 'no-es-un-uuid'])
  if (simple.pattern !== undefined) ways.push(['against its pattern', ' '])
  if (simple.type === 'object' && value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const object = value as Record<string, unknown>
    for (const key of simple.required ?? []) {
      const { [key]: _left, ...rest } = object
      ways.push([`without its required ${key}`, rest])
    }
    if (simple.additionalProperties === false) ways.push(['with an unknown field', { ...object, campoDesconocido: 1 }])
    for (const [key, property] of Object.entries(simple.properties ?? {})) {
      for (const [how, broken] of breakages(property, object[key])) ways.push([`${key}: ${how}`, { ...object, [key]: broken }])
    }
  }
  return ways
}

/** Every way to break a query or path parameter's value once, as text (a query string has no types). */
function parameterBreakages(schema: Schema): Array<[string, string]> {
  const ways: Array<[string, string]> = []
  if (schema.type === 'integer') {
    for (const odd of ['true', '0x5', '1e1', ' 1', '1.5', 'abc']) ways.push([`${JSON.stringify(odd)} for an integer`, odd])
    if (schema.maximum !== undefined) ways.push([`${schema.maximum + 1}, over its maximum`, String(schema.maximum + 1)])
    if (schema.minimum !== undefined) ways.push([`${schema.minimum - 1}, under its minimum`, String(schema.minimum - 1)])
  }
  const simple = schema.anyOf?.find((alternative) => alternative.type !== 'null') ?? schema
  if (simple.enum || schema.anyOf?.every((alternative) => alternative.enum)) ways.push(['a value outside its enum', 'no-es-valido'])
  if (simple.format === 'uuid') ways.push(['not a UUID', 'no-es-un-uuid'])
  if (simple.maxLength !== undefined) ways.push([`${simple.maxLength + 1} characters`, 'x'.repeat(simple.maxLength + 1)])
  // A text parameter's value is judged as the text it is; an integer's above, as the text a URL carries.
  return ways.filter(([, value]) => schema.type === 'integer' || !conforms(schema, value))
}

// ———————————————————————————————————— requests of an operation ————————————————————————————————————

interface Subject {
  method: string
  path: string
  operation: Operation
  /** The JSON body's schema, when the operation takes one. */
  body?: Schema
}

const label = (subject: { method: string; path: string }) => `${subject.method} ${subject.path}`

/** The fields of a body drawn from the account's own values most of the time. */
const BODY_KNOWN = [
  'cardDesignId',
  'envelopeDesignId',
  'senderId',
  'signatureId',
  'campaignId',
  'country',
  'zip',
  'url',
  'fontName',
  'email',
  'password',
  'token',
]

/** The dashboard's operations: a session's cookie, its CSRF token and the dashboard's Origin, not an API key. */
const DASHBOARD_PATH = /^\/(users|api-keys|session|invitations)(\/|$)/
/** The dashboard's operations of someone not signed in yet: from the dashboard's Origin, without a session. */
const SIGNING_IN = ['POST /session', 'POST /invitations/lookup', 'POST /invitations/accept']

/** Path and query parameters' values that the URL would not carry as themselves (a dot segment, nothing). */
const travels = (value: string) => value !== '' && value !== '.' && value !== '..'

function validRequests(subject: Subject, known: (name: string) => string[] | undefined, headers: Record<string, string>): fc.Arbitrary<Request> {
  const parameters = subject.operation.parameters ?? []
  const inOf = (where: Parameter['in']) => parameters.filter((parameter) => parameter.in === where)
  const group = (where: Parameter['in']) =>
    fc
      .record(
        Object.fromEntries(
          inOf(where).map((parameter) => {
            const own = known(parameter.name)
            return [
              parameter.name,
              // A null (a parameter that may be null) is a parameter left out: a URL has no null.
              valueOf(parameter.schema, own ? { [parameter.name]: own } : {}, parameter.name, where === 'header')
                .map((value) => (value === null ? undefined : serialize(value)))
                .filter((value) => value === undefined || travels(value)),
            ]
          }),
        ),
        {
          requiredKeys: inOf(where)
            .filter((parameter) => parameter.required || where === 'path')
            .map((parameter) => parameter.name),
        },
      )
      .map((values) => Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as Record<string, string>)
  const bodyKnown = Object.fromEntries([...BODY_KNOWN].flatMap((name) => (known(name) ? [[name, known(name)!]] : [])))
  const body: fc.Arbitrary<unknown> = subject.body
    ? subject.operation.requestBody?.required
      ? valueOf(subject.body, bodyKnown)
      : fc.option(valueOf(subject.body, bodyKnown), { nil: undefined })
    : fc.constant(undefined)
  // A text/csv body, where the operation takes one beside JSON: its rows from the JSON body's recipients.
  const recipients = subject.operation.requestBody?.content['text/csv'] && subject.body?.properties?.recipients
  const csv = recipients
    ? fc.option(
        valueOf(recipients, bodyKnown).map((rows) => csvOf(rows as Array<Record<string, unknown>>)),
        { nil: undefined },
      )
    : fc.constant(undefined)
  const parts = { params: group('path'), query: group('query'), headerParams: group('header'), body, csv }
  return fc.record(parts).map(({ params, query, headerParams, body, csv }) => ({
    kind: 'valid' as const,
    invalid: false,
    method: subject.method,
    path: subject.path,
    params,
    query,
    headers: { ...headers, ...headerParams },
    // A CSV names its campaign in the query (its description says so: required with a CSV).
    ...(csv === undefined ? { body } : { body: csv, csv: true, query: { campaignId: known('campaignId')?.[0] ?? '', ...query } }),
  }))
}

function brokenRequests(subject: Subject, valid: fc.Arbitrary<Request>): fc.Arbitrary<Request> | undefined {
  const parameters = (subject.operation.parameters ?? []).filter((parameter) => parameter.in === 'path' || parameter.in === 'query')
  const optional = new Set((subject.operation.parameters ?? []).filter((parameter) => !parameter.required).map((parameter) => parameter.name))
  const requiredFields = subject.body?.required ?? []
  const only = (values: Record<string, string>) => Object.fromEntries(Object.entries(values).filter(([name]) => !optional.has(name)))
  // Only what the operation requires beside the broken part: an optional value the gateway refuses
  // for a rule of its own (a cursor, a date) would hide whether it accepts the broken one.
  const minimal = (request: Request): Request => ({
    ...request,
    query: only(request.query),
    headers: only(request.headers),
    body:
      request.body !== null && typeof request.body === 'object' && !Array.isArray(request.body)
        ? Object.fromEntries(Object.entries(request.body).filter(([key]) => requiredFields.includes(key)))
        : request.body,
  })
  const ways = (full: Request): Array<[string, Request]> => {
    const request = minimal(full)
    return [
      ...parameters.flatMap((parameter) =>
        parameterBreakages(parameter.schema).map(([how, value]): [string, Request] => {
          const where = parameter.in === 'path' ? 'params' : 'query'
          return [`${parameter.in} ${parameter.name}: ${how}`, { ...request, [where]: { ...request[where], [parameter.name]: value } }]
        }),
      ),
      ...(subject.body && request.body !== undefined && !request.csv
        ? breakages(subject.body, request.body)
            .filter(([, body]) => !conforms(subject.body!, body))
            .map(([how, body]): [string, Request] => [`body: ${how}`, { ...request, body }])
        : []),
    ]
  }
  const probe = fc.sample(valid, { numRuns: 1, seed: SEED })[0]!
  if (ways(probe).length === 0) return undefined
  return valid.chain((request) =>
    fc
      .constantFrom(...(ways(request).length > 0 ? ways(request) : ways(probe)))
      .map(([broken, changed]) => ({ ...changed, kind: 'broken' as const, broken, invalid: true })),
  )
}

/** A path's id that the schema allows but no client would send: far longer than an id, or of unusual characters. */
function oddIdRequests(subject: Subject, valid: fc.Arbitrary<Request>): fc.Arbitrary<Request> | undefined {
  const path = (subject.operation.parameters ?? []).filter((parameter) => parameter.in === 'path' && parameter.schema.format === undefined)
  if (path.length === 0) return undefined
  return fc
    .tuple(valid, fc.constantFrom(...path), fc.constantFrom('x'.repeat(101), 'x'.repeat(300), 'ñandú', '%', ' espacio ', '\u0000'))
    .map(([request, parameter, value]) => ({
      ...request,
      kind: 'broken' as const,
      broken: `path ${parameter.name}: ${JSON.stringify(value.length > 20 ? `${value.length} characters` : value)}`,
      params: { ...request.params, [parameter.name]: value },
    }))
}

// ———————————————————————————————————— sending and checking ————————————————————————————————————

let sent = 0
/** Answers by kind of request and status class ('valid 2xx'), for the summary. */
const tally = new Map<string, number>()

async function send(baseUrl: string, request: Request): Promise<Answer> {
  const path = request.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(request.params[name] ?? ''))
  const query = new URLSearchParams(request.query).toString()
  const hasBody = request.body !== undefined
  sent += 1
  const response = await fetch(`${baseUrl}${path}${query ? `?${query}` : ''}`, {
    method: request.method,
    redirect: 'manual',
    headers: { ...request.headers, ...(hasBody ? { 'content-type': request.csv ? 'text/csv' : 'application/json' } : {}) },
    ...(hasBody ? { body: request.csv ? String(request.body) : JSON.stringify(request.body) } : {}),
  })
  const bytes = Buffer.from(await response.arrayBuffer())
  const bucket = `${request.kind} ${String(response.status).slice(0, 1)}xx`
  tally.set(bucket, (tally.get(bucket) ?? 0) + 1)
  return { status: response.status, headers: response.headers, bytes, text: bytes.toString('utf8') }
}

const MAGIC: Record<string, Buffer> = { 'image/png': Buffer.from([0x89, 0x50, 0x4e, 0x47]), 'application/pdf': Buffer.from('%PDF') }

/** What in this answer the document does not say. */
function problemsOf(subject: Subject | undefined, request: Request, answer: Answer): Array<{ check: Check; detail: string }> {
  const problems: Array<{ check: Check; detail: string }> = []
  if (answer.status >= 500) problems.push({ check: 'server error', detail: answer.text.slice(0, 300) })
  if (request.kind === 'other method') {
    const allow = answer.headers.get('allow')?.split(/\s*,\s*/) ?? []
    const missing = request.allowed?.filter((method) => !allow.includes(method)) ?? []
    if (answer.status !== 405 || missing.length > 0) problems.push({ check: 'method not allowed', detail: `${answer.status}, Allow: ${allow.join(', ')}` })
    // The document's Error, as every error of the gateway.
    const error = subject?.operation.responses['400']?.content?.['application/json']?.schema
    if (error && !conforms(error, json(answer.text))) problems.push({ check: 'body schema', detail: answer.text.slice(0, 300) })
    return problems
  }
  if (!subject) return problems
  if (request.invalid && answer.status < 400) problems.push({ check: 'invalid accepted', detail: `${request.broken} answered ${answer.status}` })
  if (request.kind === 'valid' && [400, 413, 415].includes(answer.status)) problems.push({ check: 'valid refused', detail: answer.text.slice(0, 300) })
  const documented = subject.operation.responses[String(answer.status)] ?? subject.operation.responses.default
  if (!documented) {
    problems.push({ check: 'undocumented status', detail: `${answer.status}: ${answer.text.slice(0, 200)}` })
    return problems
  }
  const contentType = answer.headers.get('content-type')?.split(';')[0]?.trim()
  const media = Object.entries(documented.content ?? {})
  if (media.length === 0) {
    if (answer.bytes.length > 0) problems.push({ check: 'content type', detail: `a body (${contentType}) where the document has none` })
  } else {
    const match = media.find(([type]) => type === contentType)
    if (!match) problems.push({ check: 'content type', detail: `${contentType} instead of ${media.map(([type]) => type).join(', ')}` })
    else if (contentType === 'application/json') {
      const body = json(answer.text)
      if (body === undefined) problems.push({ check: 'body schema', detail: `not JSON: ${answer.text.slice(0, 100)}` })
      const validate = validatorOf(match[1].schema)
      if (body !== undefined && !validate(body))
        problems.push({ check: 'body schema', detail: `${ajv.errorsText(validate.errors)}: ${answer.text.slice(0, 300)}` })
    } else if (MAGIC[contentType!] && !answer.bytes.subarray(0, 4).equals(MAGIC[contentType!]!)) {
      problems.push({ check: 'body schema', detail: `not a ${contentType}` })
    }
  }
  for (const [name, header] of Object.entries(documented.headers ?? {})) {
    const value = answer.headers.get(name)
    if (value === null) problems.push({ check: 'headers', detail: `no ${name}` })
    else if (header.schema.type === 'integer' && !/^-?\d+$/.test(value)) problems.push({ check: 'headers', detail: `${name}: ${value} is not an integer` })
  }
  return problems
}

const excusedCounts = new Map<Exception, number>()

/** The answer once per problem its `details` name: an answer that names several is excused only if each of them is. */
function eachNamed(answer: Answer): Answer[] {
  const details = (json(answer.text) as { details?: Array<{ message: string }> } | undefined)?.details
  if (!details || details.length < 2) return [answer]
  return details.map((detail) => ({ ...answer, text: JSON.stringify({ message: detail.message }) }))
}

/** The problems no exception covers; the covered ones are counted against their exception. */
function unexcused(operation: string, request: Request, answer: Answer, problems: Array<{ check: Check; detail: string }>): Problem[] {
  return problems.flatMap((problem) => {
    const exceptions = eachNamed(answer).map((named) =>
      EXCEPTIONS.find(
        (candidate) =>
          candidate.operation === operation &&
          candidate.status === answer.status &&
          candidate.check === problem.check &&
          (candidate.when?.(request, named) ?? true),
      ),
    )
    if (exceptions.some((exception) => !exception)) return [{ operation, ...problem }]
    for (const exception of exceptions) excusedCounts.set(exception!, (excusedCounts.get(exception!) ?? 0) + 1)
    return []
  })
}

const describeRequest = (request: Request) =>
  JSON.stringify({
    kind: request.kind,
    broken: request.broken,
    params: request.params,
    query: request.query,
    body: request.body,
    headers: { ...request.headers, 'x-api-key': undefined },
  })

// ———————————————————————————————————— the test ————————————————————————————————————

const it = base.extend({
  gatewayOptions: {
    isolate: 'generated',
    // This file checks every answer against the document itself, with its exceptions listed above.
    checkContract: false,
    // Hundreds of requests a second from one key and address: the limits are other tests' subject.
    env: { RATE_LIMIT_MAX: '1000000', PROOF_RATE_LIMIT_MAX: '1000000' },
  },
})

it('answers requests generated from /openapi.json as the document says, for every operation', { timeout: 600_000 }, async ({ gateway }) => {
  const started = Date.now()
  const baseUrl = await gateway.listen({ host: '127.0.0.1', port: 0 })
  const raw = (await (await fetch(`${baseUrl}/openapi.json`)).json()) as Document
  const document = resolveRefs(raw, raw) as Document

  // The account's own ids, so that generated requests reach past a 404; a test key, so that the
  // letters they create are free and go no further than the test mode's own steps.
  const account = await adminAccount(gateway, 1_000_000)
  const testKey = await issueTestKey(gateway, account.id)
  const campaignId = await adminCampaign(gateway, account, {
    variables: [
      { name: 'nombre', maxSize: 40, defaultValue: 'amigo', example: 'Lucía' },
      { name: 'cupon', maxSize: 10, defaultValue: 'OTONO10', example: 'OTONO10' },
    ],
  })
  const headers = { 'x-api-key': testKey }
  // A test key cannot see the balance: the account's own live key reads it.
  const liveHeaders = { 'x-api-key': account.apiKey }
  // The dashboard's people: the owner whose session the team and key operations use, another
  // session of that owner for DELETE /session alone (it signs out), and a member to change or
  // remove. Invitations whose links POST /invitations/* can look up and accept.
  const owner = await signedInUser(gateway, account.id, 'owner')
  const leaving = new DashboardBrowser(gateway)
  await leaving.signIn(owner.email)
  const member = await signedInUser(gateway, account.id, 'member')
  const invitations = await Promise.all([1, 2, 3].map((n) => inviteThroughAdmin(gateway, account.id, `invitada-${n}@example.com`, 'viewer')))
  const disposableKey = (await owner.browser.post('/api-keys', { mode: 'test' })).json<{ id: string }>().id
  const signedIn = (browser: DashboardBrowser) => ({
    cookie: [...browser.cookies].map(([name, value]) => `${name}=${value}`).join('; '),
    'x-csrf-token': browser.cookies.get('letters_csrf')!,
    origin: browser.origin,
  })
  /** The credential an operation's valid requests carry: what a client of that operation has. */
  const credentialOf = (subject: Subject): Record<string, string> => {
    if (subject.path.startsWith('/balance')) return liveHeaders
    if (label(subject) === 'DELETE /session') return signedIn(leaving)
    // Someone signing in has no session yet (and a sign-in ends the browser's previous one).
    if (SIGNING_IN.includes(label(subject))) return { origin: owner.browser.origin }
    if (DASHBOARD_PATH.test(subject.path)) return signedIn(owner.browser)
    return headers
  }
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    const answer = await response.text()
    expect(response.status, `${path}: ${answer}`).toBeLessThan(300)
    return JSON.parse(answer) as Record<string, string>
  }
  const cardIds = [(await post('/single', singleLetter(account))).cardId!, (await post('/single', singleLetter(account))).cardId!]
  const cards = await Promise.all(cardIds.map(async (id) => (await (await fetch(`${baseUrl}/cards/${id}`, { headers })).json()) as { code: string }))
  const webhookId = (await post('/webhooks', { url: 'https://93.184.216.34/hooks/cartas' })).id!
  const fonts = ((await (await fetch(`${baseUrl}/fonts`, { headers })).json()) as { data: Array<{ name: string }> }).data.map((font) => font.name)
  const byPath: Record<string, Record<string, string[]>> = {
    '/card-designs/{id}': { id: [account.cardDesignId] },
    '/card-designs/{id}/preview': { id: [account.cardDesignId] },
    '/envelope-designs/{id}': { id: [account.envelopeDesignId] },
    '/envelope-designs/{id}/preview': { id: [account.envelopeDesignId] },
    '/signatures/{id}': { id: [account.signatureId] },
    '/signatures/{id}/preview': { id: [account.signatureId] },
    '/webhooks/{id}': { id: [webhookId] },
    '/webhooks/{id}/test': { id: [webhookId] },
    '/webhooks/{id}/deliveries': { id: [webhookId] },
    '/webhooks/{id}/deliveries/{deliveryId}/retry': { id: [webhookId] },
    '/fonts/{name}/preview': { name: fonts },
    '/q/{code}': { code: cards.map((card) => card.code) },
    '/users/{id}': { id: [member.user.id] },
    '/api-keys/{id}': { id: [disposableKey] },
  }
  const byName: Record<string, string[]> = {
    cardDesignId: [account.cardDesignId],
    envelopeDesignId: [account.envelopeDesignId],
    senderId: [account.senderId],
    signatureId: [account.signatureId],
    campaignId: [campaignId],
    cardId: cardIds,
    // A recipient's address the gateway takes, and a webhook's URL it can reach: with generated
    // values beside them, some letters and endpoints are created and their answers checked too.
    country: ['ES'],
    zip: ['28013'],
    url: ['https://93.184.216.34/hooks/cartas'],
    fontName: fonts,
    // The owner signs in with these; an invitation's link is followed with the password.
    email: [owner.email],
    password: [GOOD_PASSWORD],
    token: invitations.map(invitationToken),
  }

  const subjects: Subject[] = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({
      method: method.toUpperCase(),
      path,
      operation,
      body: operation.requestBody?.content['application/json']?.schema,
    })),
  )
  expect(subjects.length).toBeGreaterThan(40)

  const failures: string[] = []
  /** Operations a valid request of which got past authentication and authorization. */
  const reached = new Set<string>()
  const exchange = async (subject: Subject | undefined, request: Request, operation: string) => {
    const answer = await send(baseUrl, request)
    if (request.kind === 'valid' && answer.status !== 401 && answer.status !== 403) reached.add(operation)
    return { answer, problems: unexcused(operation, request, answer, problemsOf(subject, request, answer)) }
  }

  for (const subject of subjects) {
    const operation = label(subject)
    const known = (name: string) => byPath[subject.path]?.[name] ?? byName[name]
    const valid = validRequests(subject, known, credentialOf(subject))
    const kinds: Array<[string, fc.Arbitrary<Request> | undefined]> = [
      ['valid', valid],
      ['broken', brokenRequests(subject, valid)],
      ['odd id', oddIdRequests(subject, valid)],
    ]
    for (const [kind, arbitrary] of kinds) {
      if (!arbitrary) continue
      let last: string | undefined
      const result = await fc.check(
        fc.asyncProperty(arbitrary, async (request) => {
          const { answer, problems } = await exchange(subject, request, operation)
          if (problems.length === 0) return true
          last = `${operation} (${kind}) ${describeRequest(request)} → ${answer.status} ${answer.headers.get('content-type')}: ${problems.map((p) => `${p.check}: ${p.detail}`).join('; ')}`
          return false
        }),
        { seed: SEED, numRuns: kind === 'odd id' ? Math.max(2, Math.ceil(runsOf(operation) / 3)) : runsOf(operation) },
      )
      if (result.failed) failures.push(last ?? `${operation} (${kind}): ${String(result.errorInstance)}`)
    }
    if ((subject.operation.security ?? document.security ?? []).length > 0) {
      const [request] = fc.sample(valid, { numRuns: 1, seed: SEED })
      const withoutKey = { ...request!, kind: 'no credential' as const, headers: {} }
      const { answer, problems } = await exchange(subject, withoutKey, operation)
      if (answer.status !== 401) problems.push({ operation, check: 'undocumented status', detail: `${answer.status} without a credential, not 401` })
      for (const problem of problems) failures.push(`${operation} (no credential) → ${answer.status}: ${problem.check}: ${problem.detail}`)
    }
  }

  // A path the document has, with a method it has not: 405, saying in Allow which it has, with the
  // document's Error (as POST /single's 400 has it).
  const errorSubject = subjects.find((subject) => label(subject) === 'POST /single')
  for (const [path, item] of Object.entries(document.paths)) {
    const methods = Object.keys(item).map((method) => method.toUpperCase())
    const other = ['PUT', 'PATCH', 'POST', 'DELETE', 'GET'].find((method) => !methods.includes(method))!
    const concrete = path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000')
    const request: Request = { kind: 'other method', invalid: true, method: other, path: concrete, params: {}, query: {}, headers, allowed: methods }
    const { answer, problems } = await exchange(errorSubject, request, `${other} ${path}`)
    for (const problem of problems) failures.push(`${other} ${path} (a method it has not) → ${answer.status}: ${problem.check}: ${problem.detail}`)
  }

  const seconds = ((Date.now() - started) / 1000).toFixed(1)
  const excused = new Map<string, number>()
  for (const [exception, count] of excusedCounts) {
    const key = `${exception.status} ${exception.check}: ${exception.reason}`
    excused.set(key, (excused.get(key) ?? 0) + count)
  }
  console.log(
    [
      `${sent} generated requests to ${subjects.length} operations in ${seconds} s (seed ${SEED}, ${RUNS} runs per operation and kind)`,
      `answers: ${[...tally].map(([bucket, count]) => `${bucket} ${count}`).join(', ')}`,
      `operations a valid request reached past authentication: ${reached.size} of ${subjects.length}`,
      'excused:',
      ...[...excused].map(([key, count]) => `  ${count}× ${key}`),
      // An exception no run meets any longer is one to take out of the list.
      'no answer met, for any of their operations:',
      ...new Set(
        EXCEPTIONS.filter(({ reason }) => !EXCEPTIONS.some((exception) => exception.reason === reason && excusedCounts.has(exception))).map(
          ({ status, check, reason }) => `  ${status} ${check}: ${reason}`,
        ),
      ),
    ].join('\n'),
  )
  for (const failure of failures) console.log(failure)
  expect(failures).toEqual([])
  // Each operation was tried as its client would call it, not only refused at the door.
  expect(subjects.map(label).filter((operation) => !reached.has(operation))).toEqual([])
  // Every operation got its valid, broken and keyless requests, and every path its other method.
  expect(sent).toBeGreaterThanOrEqual(subjects.length * (RUNS / 4 + 1) + Object.keys(document.paths).length)
})
