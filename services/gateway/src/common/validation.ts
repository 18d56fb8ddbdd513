import type { FastifySchemaCompiler } from 'fastify'
import type { TSchema } from 'typebox'
import { Compile } from 'typebox/compile'
import { Settings } from 'typebox/system'
import { Value } from 'typebox/value'
import { NON_BLANK } from '@letters/contracts'
import { ApiError } from './errors.js'
import { compiledOnce } from './compiled-once.js'

interface SchemaError {
  keyword: string
  schemaPath: string
  instancePath: string
  params: Record<string, unknown>
}

type HttpPart = 'body' | 'querystring' | 'params' | 'headers'

const subject: Record<HttpPart, string> = {
  body: 'El campo',
  querystring: 'El parámetro',
  params: 'El parámetro de ruta',
  headers: 'La cabecera',
}

const typeNames: Record<string, string> = {
  string: 'un texto',
  integer: 'un número entero',
  number: 'un número',
  boolean: 'true o false',
  object: 'un objeto',
  array: 'una lista',
  null: 'null',
}

/** A property name as one segment of a JSON pointer: `a/b` → `a~1b`. */
const pointerSegment = (name: string) => name.replace(/~/g, '~0').replace(/\//g, '~1')

/** `/variables/0/name` → `variables[0].name`, the way a client writes it. */
function fieldName(pointer: string): string {
  const written = pointer
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((name, segment) => (/^\d+$/.test(segment) ? `${name}[${segment}]` : name ? `${name}.${segment}` : segment), '')
  // A field name is the client's own text: an 8 MB one is named by its start, not echoed whole in
  // the message and again in `details`.
  return written.length > MAX_FIELD_NAME_SHOWN ? `${written.slice(0, MAX_FIELD_NAME_SHOWN)}…` : written
}

/** The longest field name an answer repeats; the allowed ones are a few dozen characters at most. */
const MAX_FIELD_NAME_SHOWN = 100

/** The schema at a JSON pointer such as `#/properties/zip/anyOf/0`, and every schema above it. */
function schemasAlong(root: TSchema, schemaPath: string): unknown[] {
  const found: unknown[] = [root]
  let node: unknown = root
  for (const segment of schemaPath.replace(/^#\/?/, '').split('/').filter(Boolean)) {
    node = (node as Record<string, unknown> | undefined)?.[segment]
    found.push(node)
  }
  return found
}

/** The nearest `errorMessage` a schema author wrote for this spot or for the union it belongs to. */
function authoredMessage(root: TSchema, error: SchemaError): string | undefined {
  const along = schemasAlong(root, error.schemaPath).reverse()
  for (const [depth, schema] of along.entries()) {
    const node = schema as { errorMessage?: unknown; type?: unknown } | undefined
    // An enclosing object's message speaks of the object, not of this field.
    if (depth > 0 && node?.type === 'object') return undefined
    if (typeof node?.errorMessage === 'string') return node.errorMessage
  }
  return undefined
}

function ruleBroken(error: SchemaError, sameSpot: SchemaError[]): string {
  const params = error.params
  switch (error.keyword) {
    case 'type': {
      const expected = sameSpot.filter((e) => e.keyword === 'type').map((e) => typeNames[String(e.params.type)] ?? String(e.params.type))
      return `debe ser ${[...new Set(expected)].join(' o ')}`
    }
    case 'minLength':
      return params.limit === 1 ? 'no puede estar vacío' : `debe tener al menos ${params.limit} caracteres`
    case 'maxLength':
      return `no puede tener más de ${params.limit} caracteres`
    case 'minimum':
      return `debe ser mayor o igual que ${params.limit}`
    case 'maximum':
      return `debe ser menor o igual que ${params.limit}`
    case 'minItems':
      return `debe tener al menos ${params.limit} elementos`
    case 'maxItems':
      return `no puede tener más de ${params.limit} elementos`
    case 'format':
      return params.format === 'uuid' ? 'debe ser un UUID válido' : `debe tener el formato ${params.format}`
    case 'pattern':
      return params.pattern === NON_BLANK ? 'no puede estar vacío' : 'no tiene un formato válido'
    case 'const':
    case 'enum':
      return 'no tiene un valor permitido'
    default:
      return 'no es válido'
  }
}

/** One Spanish sentence that names the field and the rule it breaks: the first of `errors`, all at one spot. */
function describeOne(root: TSchema, part: HttpPart, errors: SchemaError[], value: unknown): string {
  const relevant = errors.filter((error) => error.keyword !== 'boolean')
  const error = relevant[0] ?? errors[0]
  if (!error) return 'La petición no es válida'
  const authored = authoredMessage(root, error)

  if (error.keyword === 'required') {
    const [missing] = error.params.requiredProperties as string[]
    const field = fieldName(`${error.instancePath}/${pointerSegment(String(missing))}`)
    return part === 'headers' ? `La cabecera '${field}' es obligatoria` : `${subject[part]} '${field}' es obligatorio`
  }
  if (error.keyword === 'additionalProperties') {
    const [extra] = error.params.additionalProperties as string[]
    return `${subject[part]} '${fieldName(`${error.instancePath}/${pointerSegment(String(extra))}`)}' no está permitido${suggestion(root, error, String(extra), value)}`
  }
  if (authored) return authored
  if (error.instancePath === '') {
    if (part === 'body') return error.keyword === 'type' ? 'El cuerpo de la petición debe ser un objeto JSON' : 'El cuerpo de la petición no es válido'
    return 'La petición no es válida'
  }
  const sameSpot = relevant.filter((other) => other.instancePath === error.instancePath)
  return `${subject[part]} '${fieldName(error.instancePath)}' ${ruleBroken(error, sameSpot)}`
}

/** Levenshtein distance, for names of a few characters. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    previous = current
  }
  return previous[b.length]!
}

/** The part of `value` a JSON pointer such as `/recipients/0` names; undefined where there is none. */
function valueAt(value: unknown, pointer: string): unknown {
  let node = value
  for (const segment of pointer.split('/').slice(1)) {
    if (node === null || typeof node !== 'object') return undefined
    const key = segment.replace(/~1/g, '/').replace(/~0/g, '~')
    node = Object.hasOwn(node, key) ? (node as Record<string, unknown>)[key] : undefined
  }
  return node
}

/**
 * ` (¿quisiste decir 'address'?)` for a field the object does not allow whose name is a slip
 * away from one it does and does not have yet (one it has is not what was meant): at most one
 * edit for a short name, two for a longer one.
 */
function suggestion(root: TSchema, error: SchemaError, extra: string, value: unknown): string {
  const object = schemasAlong(root, error.schemaPath).at(-1) as { properties?: Record<string, unknown> } | undefined
  const sent = valueAt(value, error.instancePath)
  const present = (name: string) => sent !== null && typeof sent === 'object' && Object.hasOwn(sent, name)
  const threshold = extra.length <= 4 ? 1 : 2
  let best: { name: string; distance: number } | undefined
  // Names whose lengths differ by more than the threshold are further apart than it: skipped
  // without measuring, so a name of megabytes costs nothing to judge.
  const near = (allowed: string) => Math.abs(allowed.length - extra.length) <= threshold && !present(allowed)
  for (const name of Object.keys(object?.properties ?? {}).filter(near)) {
    const distance = editDistance(extra.toLowerCase(), name.toLowerCase())
    if (distance <= threshold && (!best || distance < best.distance)) best = { name, distance }
  }
  return best ? ` (¿quisiste decir '${best.name}'?)` : ''
}

/** One problem of a request: the field it is about, as a client writes it, and its sentence. */
export interface Problem {
  field: string
  message: string
}

/** How many problems one answer names; a larger body's rest is counted, not listed. */
export const MAX_LISTED_PROBLEMS = 10

/**
 * How many schema errors TypeBox gathers for one request (its default, 8, would hide problems:
 * each unknown field takes two). A bound all the same: past it the rest is counted as "al menos".
 */
const MAX_GATHERED_ERRORS = 200
Settings.Set({ maxErrors: MAX_GATHERED_ERRORS })

/**
 * Every problem of the value, the fields it does not allow first, each in the words a single
 * problem gets. A union is one problem (its branches' errors are how it failed, not several
 * faults); a missing or extra field is one problem per field; anything else, one per spot.
 */
export function schemaProblems(root: TSchema, part: HttpPart, errors: SchemaError[], value: unknown): Problem[] {
  const unions = errors.filter((error) => error.keyword === 'anyOf')
  const unionOf = (error: SchemaError) =>
    unions.find(
      (union) =>
        union !== error &&
        error.schemaPath.startsWith(`${union.schemaPath}/anyOf/`) &&
        (error.instancePath === union.instancePath || error.instancePath.startsWith(`${union.instancePath}/`)),
    )
  const groups = new Map<string, { field: string; errors: SchemaError[] }>()
  const add = (key: string, field: string, error: SchemaError) => {
    const group = groups.get(key) ?? { field, errors: [] }
    group.errors.push(error)
    groups.set(key, group)
  }
  const extras: string[] = []
  for (const gathered of errors) {
    // A field the object does not allow fails `additionalProperties: false` on its own before the
    // object's summary error, which a bound on the errors gathered may cut off.
    const error = extraField(gathered)
    if (error.keyword === 'boolean') continue
    // The outermost union this error belongs to (a union's own error included), if any.
    let union = error.keyword === 'anyOf' ? error : unionOf(error)
    for (let outer = union && unionOf(union); outer; outer = unionOf(outer)) union = outer
    if (union) add(`union ${union.instancePath} ${union.schemaPath}`, fieldName(union.instancePath), error)
    else if (error.keyword === 'required' || error.keyword === 'additionalProperties') {
      const names = (error.params[error.keyword === 'required' ? 'requiredProperties' : 'additionalProperties'] as string[] | undefined) ?? []
      for (const name of names) {
        const key = `${error.keyword} ${error.instancePath}/${pointerSegment(name)}`
        if (error.keyword === 'additionalProperties' && !groups.has(key)) extras.push(key)
        add(key, fieldName(`${error.instancePath}/${pointerSegment(name)}`), {
          ...error,
          params: { ...error.params, [error.keyword === 'required' ? 'requiredProperties' : 'additionalProperties']: [name] },
        })
      }
    } else add(`at ${error.instancePath}`, fieldName(error.instancePath), error)
  }
  const ordered = [...extras, ...[...groups.keys()].filter((key) => !extras.includes(key))]
  const problems = ordered.map((key) => {
    const group = groups.get(key)!
    return { field: group.field, message: describeOne(root, part, group.errors, value) }
  })
  return problems.length > 0 ? problems : [{ field: '', message: describeOne(root, part, errors, value) }]
}

/** A field's own `additionalProperties: false` failure, as the object's error that names it. */
function extraField(error: SchemaError): SchemaError {
  if (error.keyword !== 'boolean' || !error.schemaPath.endsWith('/additionalProperties')) return error
  const slash = error.instancePath.lastIndexOf('/')
  const name = error.instancePath
    .slice(slash + 1)
    .replace(/~1/g, '/')
    .replace(/~0/g, '~')
  return {
    keyword: 'additionalProperties',
    schemaPath: error.schemaPath.slice(0, -'/additionalProperties'.length) || '#',
    instancePath: error.instancePath.slice(0, slash),
    params: { additionalProperties: [name] },
  }
}

/** The 400 of a request that breaks its schema: every problem in `details`, and in one message. */
export function invalidRequest(problems: Problem[], gatheredAll = true): ApiError {
  const listed = problems.slice(0, MAX_LISTED_PROBLEMS)
  const rest = problems.length - listed.length
  const more = rest > 0 ? [`y ${gatheredAll ? '' : 'al menos '}${rest} más`] : []
  const message = [...listed.map((problem) => problem.message), ...more].join('; ')
  return new ApiError(400, message, listed)
}

/**
 * The problems a body that passed its schema still has (a zip of another country, a past
 * sendAt…), gathered so that one 400 names them all, as invalidRequest does for the schema's.
 * A check keeps throwing the 400 it answers alone; `check` notes its sentence and goes on.
 */
export class RequestProblems {
  private readonly problems: Problem[] = []

  add(field: string, message: string): void {
    this.problems.push({ field, message })
  }

  /** What `run` returns, or undefined once the 400 it threw is noted as a problem of `field`. */
  check<T>(field: string, run: () => T): T | undefined {
    try {
      return run()
    } catch (error) {
      this.note(field, error)
      return undefined
    }
  }

  /** As `check`, for a check that reads the database. */
  async checkAsync<T>(field: string, run: () => Promise<T>): Promise<T | undefined> {
    try {
      return await run()
    } catch (error) {
      this.note(field, error)
      return undefined
    }
  }

  /** Throws the 400 naming every problem noted, if there is one. */
  throwIfAny(): void {
    if (this.problems.length > 0) throw invalidRequest(this.problems)
  }

  /** Anything but a 400 (a 404, a database that fails) is no problem of the body: it goes on up. */
  private note(field: string, error: unknown): void {
    if (!(error instanceof ApiError) || error.statusCode !== 400) throw error
    this.problems.push(...(error.details ?? [{ field, message: error.message }]))
  }
}

/**
 * The path of the first string that Postgres cannot store or a person cannot read: a NUL
 * character or half of a UTF-16 surrogate pair.
 */
function unreadableText(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') || !value.isWellFormed() ? path : undefined
  if (value === null || typeof value !== 'object') return undefined
  for (const [key, item] of Object.entries(value)) {
    const found = unreadableText(item, `${path}/${Array.isArray(value) ? key : pointerSegment(key)}`)
    if (found !== undefined) return found
  }
  return undefined
}

/** An integer as a person writes it in a URL: digits, perhaps a minus sign; no `0x5`, `1e1`, ` 1` nor `true`. */
const DECIMAL_INTEGER = /^-?\d+$/

/**
 * The query string, parameters or headers with TypeBox's conversion of text to the types their
 * schema declares, except that an integer field converts only from decimal digits: anything else
 * stays the text it was and fails its schema, as the documented `integer` says it does.
 */
function converted(schema: TSchema, input: unknown): unknown {
  // Convert changes the object it is given: what was sent is read from a copy.
  const sent: Record<string, unknown> = input !== null && typeof input === 'object' ? { ...input } : {}
  const value = Value.Convert(schema, input)
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties
  if (!properties || value === null || typeof value !== 'object') return value
  for (const [name, property] of Object.entries(properties)) {
    const raw = sent[name]
    if (property.type === 'integer' && raw !== undefined && !(typeof raw === 'string' && DECIMAL_INTEGER.test(raw)))
      (value as Record<string, unknown>)[name] = raw
  }
  return value
}

/** TypeBox's compiled check of each request schema, once per process. */
const checks = compiledOnce<TSchema, ReturnType<typeof Compile<TSchema>>>()

/**
 * Validates with TypeBox (no coercion of bodies, nothing silently removed) and answers
 * every broken rule in one 400 whose message is in Spanish.
 */
export const spanishValidatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const check = checks(schema, () => Compile(schema))
  const part = (httpPart ?? 'body') as HttpPart
  return (input): { value: unknown } | { error: Error } => {
    const value = part === 'body' ? input : converted(schema, input)
    if (check.Check(value)) {
      const unreadable = unreadableText(value)
      if (unreadable === undefined) return { value }
      return {
        error: invalidRequest([{ field: fieldName(unreadable), message: `${subject[part]} '${fieldName(unreadable)}' contiene caracteres no válidos` }]),
      }
    }
    const errors = check.Errors(value)
    return { error: invalidRequest(schemaProblems(schema, part, errors, value), errors.length < MAX_GATHERED_ERRORS) }
  }
}
