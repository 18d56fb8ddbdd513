import { createHash } from 'node:crypto'
import { sql } from 'drizzle-orm'
import { isConnectionError, type Db } from '@letters/db'
import { ApiError } from '../errors.js'

/** How long a key is remembered, per account. */
export const IDEMPOTENCY_TTL_HOURS = 24
/** A claim whose request never finished (the process died) is given up after this long. */
const ABANDONED_AFTER_SECONDS = 60

/**
 * `token` identifies this request's claim (the claim's creation time, to the microsecond): a
 * claim taken over after it was abandoned gets a new one, so the first request, should it
 * still be alive, can neither charge under it nor release it.
 */
export type Claim = { outcome: 'claimed'; key: string; token: string } | { outcome: 'replay'; status: number; body: unknown }

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

export const inFlight = () => new ApiError(409, 'Una petición con esta Idempotency-Key todavía se está procesando; repítela en unos segundos')

/**
 * Claims `key` for this request, in its own statement so a concurrent copy sees the claim at
 * once. The first copy gets 'claimed'; a later copy gets the stored response to replay, 409
 * while the first is still running, or 422 when it carries another request under the same key.
 */
export async function claimIdempotencyKey(db: Db, accountId: string, key: string, fingerprint: string, attempt = 1): Promise<Claim> {
  const [claimed] = await db.execute<{ token: string }>(sql`
    INSERT INTO idempotency_keys AS k (account_id, key, request_hash, expires_at)
    VALUES (${accountId}::uuid, ${key}, ${fingerprint}, now() + make_interval(hours => ${IDEMPOTENCY_TTL_HOURS}))
    ON CONFLICT (account_id, key) DO UPDATE
      SET request_hash = EXCLUDED.request_hash, created_at = now(), expires_at = EXCLUDED.expires_at,
          response_status = NULL, response_body = NULL
      WHERE k.expires_at < now()
         OR (k.response_status IS NULL AND k.created_at < now() - make_interval(secs => ${ABANDONED_AFTER_SECONDS}))
    RETURNING k.created_at::text AS token`)
  if (claimed) return { outcome: 'claimed', key, token: claimed.token }

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

/** Forgets this request's claim after it failed, so the client can retry with the same key. */
export async function releaseIdempotencyKey(db: Db, accountId: string, claim: { key: string; token: string }, attempts = 3): Promise<void> {
  try {
    await db.execute(sql`
      DELETE FROM idempotency_keys
      WHERE account_id = ${accountId}::uuid AND key = ${claim.key} AND created_at = ${claim.token}::timestamptz AND response_status IS NULL`)
  } catch (error) {
    // The request likely failed because its connection dropped (a failover): left claimed, the key
    // would answer the client's retries 409 for a minute, while the pool's next connection can free it now.
    if (attempts <= 1 || !isConnectionError(error)) throw error
    await new Promise((resolve) => setTimeout(resolve, 100))
    await releaseIdempotencyKey(db, accountId, claim, attempts - 1)
  }
}

/**
 * For the creation statement: `claim` locks this request's claim row, re-checked after any
 * wait, so the statement charges only while the claim is still this request's; `remembered`
 * stores the response with the letter.
 */
export function claimCtes(accountId: string, claim: { key: string; token: string } | undefined) {
  if (!claim) return { claim: sql`claim AS (SELECT TRUE AS held)`, remember: sql`` }
  return {
    claim: sql`claim AS (
      SELECT TRUE AS held FROM idempotency_keys
      WHERE account_id = ${accountId}::uuid AND key = ${claim.key} AND created_at = ${claim.token}::timestamptz AND response_status IS NULL
      FOR UPDATE
    )`,
    remember: sql`, remembered AS (
      UPDATE idempotency_keys SET response_status = 200, response_body = jsonb_build_object('success', true, 'cardId', letter.id)
      FROM letter WHERE account_id = ${accountId}::uuid AND key = ${claim.key}
    )`,
  }
}

/** Keys are kept 24 h; a gateway deletes the expired ones now and then. */
export async function purgeExpiredIdempotencyKeys(db: Db): Promise<number> {
  const deleted = await db.execute(sql`DELETE FROM idempotency_keys WHERE expires_at < now() - interval '1 hour'`)
  return deleted.count ?? 0
}
