import type { FastifySchemaCompiler } from 'fastify'
import type { TSchema } from 'typebox'
import { Compile } from 'typebox/compile'
import { Value } from 'typebox/value'
import { NON_BLANK } from '@letters/contracts'
import { ApiError } from '../../errors.js'
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

/** `/variables/0/name` → `variables[0].name`, the way a client writes it. */
function fieldName(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((name, segment) => (/^\d+$/.test(segment) ? `${name}[${segment}]` : name ? `${name}.${segment}` : segment), '')
}

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

/** One Spanish sentence that names the field and the rule it breaks. */
export function describeSchemaError(root: TSchema, part: HttpPart, errors: SchemaError[]): string {
  const relevant = errors.filter((error) => error.keyword !== 'boolean')
  const error = relevant[0] ?? errors[0]
  if (!error) return 'La petición no es válida'
  const authored = authoredMessage(root, error)

  if (error.keyword === 'required') {
    const [missing] = error.params.requiredProperties as string[]
    const field = fieldName(`${error.instancePath}/${missing}`)
    return part === 'headers' ? `La cabecera '${field}' es obligatoria` : `${subject[part]} '${field}' es obligatorio`
  }
  if (error.keyword === 'additionalProperties') {
    const [extra] = error.params.additionalProperties as string[]
    return `${subject[part]} '${fieldName(`${error.instancePath}/${extra}`)}' no está permitido`
  }
  if (authored) return authored
  if (error.instancePath === '') {
    if (part === 'body') return error.keyword === 'type' ? 'El cuerpo de la petición debe ser un objeto JSON' : 'El cuerpo de la petición no es válido'
    return 'La petición no es válida'
  }
  const sameSpot = relevant.filter((other) => other.instancePath === error.instancePath)
  return `${subject[part]} '${fieldName(error.instancePath)}' ${ruleBroken(error, sameSpot)}`
}

/**
 * The path of the first string that Postgres cannot store or a person cannot read: a NUL
 * character or half of a UTF-16 surrogate pair.
 */
function unreadableText(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') || !value.isWellFormed() ? path : undefined
  if (value === null || typeof value !== 'object') return undefined
  for (const [key, item] of Object.entries(value)) {
    const found = unreadableText(item, `${path}/${Array.isArray(value) ? key : key.replace(/~/g, '~0').replace(/\//g, '~1')}`)
    if (found !== undefined) return found
  }
  return undefined
}

/** TypeBox's compiled check of each request schema, once per process. */
const checks = compiledOnce<TSchema, ReturnType<typeof Compile<TSchema>>>()

/**
 * Validates with TypeBox (no coercion of bodies, nothing silently removed) and answers the
 * first broken rule as a 400 whose message is in Spanish.
 */
export const spanishValidatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const check = checks(schema, () => Compile(schema))
  const part = (httpPart ?? 'body') as HttpPart
  return (input): { value: unknown } | { error: Error } => {
    const value = part === 'body' ? input : Value.Convert(schema, input)
    if (check.Check(value)) {
      const unreadable = unreadableText(value)
      if (unreadable === undefined) return { value }
      return { error: new ApiError(400, `${subject[part]} '${fieldName(unreadable)}' contiene caracteres no válidos`) }
    }
    return { error: new ApiError(400, describeSchemaError(schema, part, check.Errors(value))) }
  }
}
