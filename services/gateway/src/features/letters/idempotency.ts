import { createHash } from 'node:crypto'
import { ApiError } from '../../common/errors.js'

/** JSON with object keys sorted, so two bodies that mean the same hash the same. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`
  }
  return JSON.stringify(value)
}

/** What an Idempotency-Key binds: the route and the body, whatever the order of its keys. */
export function requestFingerprint(route: string, body: unknown): string {
  return createHash('sha256').update(route).update('\n').update(canonicalJson(body)).digest('hex')
}

export const inFlight = () => new ApiError(409, 'Una petición con esta Idempotency-Key todavía se está procesando; repítela en unos segundos')

export const keyReused = () => new ApiError(422, 'La Idempotency-Key ya se usó con una petición distinta; usa una clave nueva para cada petición')
