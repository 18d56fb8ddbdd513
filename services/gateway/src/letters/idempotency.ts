import { createHash } from 'node:crypto'
import { sql } from 'drizzle-orm'
import type { Db, Tx } from '@letters/db'
import { ApiError } from '../errors.js'

/** How long a key is remembered, per account. */
export const IDEMPOTENCY_TTL_HOURS = 24

/** What a request learns of its Idempotency-Key: it is the first to use it, or an earlier response is to be replayed. */
export type KeyState = { outcome: 'fresh' } | { outcome: 'replay'; status: number; body: unknown }

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

/**
 * A row without a response is a claim taken by an older version of this code, which claimed
 * keys with a committed row: younger than this, an old replica may still be creating its
 * letter (during a rolling deploy); older, it is abandoned.
 */
const OLD_CLAIM_ABANDONED_AFTER_SECONDS = 60

/** The text whose hash is the key's advisory lock (one per account and key). */
export const idempotencyLockName = (accountId: string, key: string) => `${accountId}/${key}`

export const inFlight = () => new ApiError(409, 'Una petición con esta Idempotency-Key todavía se está procesando; repítela en unos segundos')

/**
 * Takes `key` for the creating transaction `tx`, before it does anything else. The claim is a
 * transaction-level advisory lock: a copy of the request arriving meanwhile gets 409 at once,
 * and the claim ends with the transaction however it ends: committed (the response is stored
 * by `rememberResponse` in the same transaction), rolled back, or cut off with its connection
 * when the process dies, so a key is never left claimed by a request that is gone. A stored
 * response is replayed; another request under the same key is 422.
 */
export async function holdIdempotencyKey(tx: Tx, accountId: string, key: string, fingerprint: string): Promise<KeyState> {
  // A key already answered is replayed without the lock, so copies of a finished request never
  // queue behind one another (only a request still running answers 409).
  const answered = await storedResponse(tx, accountId, key, fingerprint)
  if (answered) return answered
  const [lock] = await tx.execute<{ held: boolean }>(sql`SELECT pg_try_advisory_xact_lock(hashtextextended(${idempotencyLockName(accountId, key)}, 0)) AS held`)
  if (!lock?.held) throw inFlight()
  // Read again under the lock: the request that held it may have committed meanwhile.
  return (await storedResponse(tx, accountId, key, fingerprint)) ?? { outcome: 'fresh' }
}

/** The key's stored response to replay (or 422 for another request under it); 409 for a recent old-version claim. */
async function storedResponse(tx: Tx, accountId: string, key: string, fingerprint: string): Promise<KeyState | undefined> {
  const [stored] = await tx.execute<{ request_hash: string; response_status: number | null; response_body: unknown; recent: boolean }>(sql`
    SELECT request_hash, response_status, response_body, created_at > now() - make_interval(secs => ${OLD_CLAIM_ABANDONED_AFTER_SECONDS}) AS recent
    FROM idempotency_keys
    WHERE account_id = ${accountId}::uuid AND key = ${key} AND expires_at >= now()`)
  if (!stored) return undefined
  if (stored.response_status === null) {
    if (stored.recent) throw inFlight()
    return undefined
  }
  if (stored.request_hash !== fingerprint) {
    throw new ApiError(422, 'La Idempotency-Key ya se usó con una petición distinta; usa una clave nueva para cada carta')
  }
  return { outcome: 'replay', status: stored.response_status, body: stored.response_body }
}

/**
 * Stores the response under the key, in the transaction that holds it. It replaces only an
 * expired entry or an abandoned old-version claim; a row an old replica wrote meanwhile makes
 * this request 409 (and its transaction, charge included, roll back).
 */
export async function rememberResponse(tx: Tx, accountId: string, key: string, fingerprint: string, status: number, body: unknown): Promise<void> {
  const stored = await tx.execute(sql`
    INSERT INTO idempotency_keys AS k (account_id, key, request_hash, response_status, response_body, expires_at)
    VALUES (${accountId}::uuid, ${key}, ${fingerprint}, ${status}, ${JSON.stringify(body)}::jsonb, now() + make_interval(hours => ${IDEMPOTENCY_TTL_HOURS}))
    ON CONFLICT (account_id, key) DO UPDATE
      SET request_hash = EXCLUDED.request_hash, response_status = EXCLUDED.response_status, response_body = EXCLUDED.response_body,
          created_at = now(), expires_at = EXCLUDED.expires_at
      WHERE k.expires_at < now()
         OR (k.response_status IS NULL AND k.created_at <= now() - make_interval(secs => ${OLD_CLAIM_ABANDONED_AFTER_SECONDS}))
    RETURNING 1`)
  if (stored.length === 0) throw inFlight()
}

/** Keys are kept 24 h; a gateway deletes the expired ones now and then. */
export async function purgeExpiredIdempotencyKeys(db: Db): Promise<number> {
  const deleted = await db.execute(sql`DELETE FROM idempotency_keys WHERE expires_at < now() - interval '1 hour'`)
  return deleted.count ?? 0
}
