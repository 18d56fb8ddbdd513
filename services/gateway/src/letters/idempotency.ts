import { createHash } from 'node:crypto'
import { sql } from 'drizzle-orm'
import type { Db } from '@letters/db'
import { ApiError } from '../errors.js'

/** How long a key is remembered, per account. */
export const IDEMPOTENCY_TTL_HOURS = 24
/** A claim whose request never finished (the process died) is given up after this long. */
const ABANDONED_AFTER_SECONDS = 60

export type Claim = { outcome: 'claimed' } | { outcome: 'replay'; status: number; body: unknown }

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

export function requestFingerprint(route: string, body: unknown): string {
  return createHash('sha256').update(route).update('\n').update(canonicalJson(body)).digest('hex')
}

const inFlight = () => new ApiError(409, 'Una petición con esta Idempotency-Key todavía se está procesando; repítela en unos segundos')

/**
 * Claims `key` for this request, in its own statement so a concurrent copy sees the claim at
 * once. The first copy gets 'claimed'; a later copy gets the stored response to replay, 409
 * while the first is still running, or 422 when it carries another request under the same key.
 */
export async function claimIdempotencyKey(db: Db, accountId: string, key: string, fingerprint: string, attempt = 1): Promise<Claim> {
  const [claimed] = await db.execute<{ claimed: boolean }>(sql`
    INSERT INTO idempotency_keys AS k (account_id, key, request_hash, expires_at)
    VALUES (${accountId}::uuid, ${key}, ${fingerprint}, now() + make_interval(hours => ${IDEMPOTENCY_TTL_HOURS}))
    ON CONFLICT (account_id, key) DO UPDATE
      SET request_hash = EXCLUDED.request_hash, created_at = now(), expires_at = EXCLUDED.expires_at,
          response_status = NULL, response_body = NULL
      WHERE k.expires_at < now()
         OR (k.response_status IS NULL AND k.created_at < now() - make_interval(secs => ${ABANDONED_AFTER_SECONDS}))
    RETURNING TRUE AS claimed`)
  if (claimed) return { outcome: 'claimed' }

  const [existing] = await db.execute<{ request_hash: string; response_status: number | null; response_body: unknown }>(sql`
    SELECT request_hash, response_status, response_body FROM idempotency_keys
    WHERE account_id = ${accountId}::uuid AND key = ${key}`)
  // Released between the two statements: the other copy failed, so this one may go ahead.
  if (!existing && attempt < 3) return claimIdempotencyKey(db, accountId, key, fingerprint, attempt + 1)
  if (!existing) throw inFlight()
  if (existing.request_hash !== fingerprint) {
    throw new ApiError(422, 'La Idempotency-Key ya se usó con una petición distinta; usa una clave nueva para cada carta')
  }
  if (existing.response_status === null) {
    throw inFlight()
  }
  return { outcome: 'replay', status: existing.response_status, body: existing.response_body }
}

/** Forgets a claim whose request failed, so the client can retry with the same key. */
export async function releaseIdempotencyKey(db: Db, accountId: string, key: string): Promise<void> {
  await db.execute(sql`
    DELETE FROM idempotency_keys WHERE account_id = ${accountId}::uuid AND key = ${key} AND response_status IS NULL`)
}

/** The CTE that stores the response of the request that claimed `key`, inside the creation statement. */
export function storeResponseCte(accountId: string, key: string) {
  return sql`, remembered AS (
      UPDATE idempotency_keys SET response_status = 200, response_body = jsonb_build_object('success', true, 'cardId', letter.id)
      FROM letter WHERE account_id = ${accountId}::uuid AND key = ${key}
    )`
}
