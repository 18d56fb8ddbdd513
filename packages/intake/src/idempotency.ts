import { lt, sql } from 'drizzle-orm'
import { modeLabel } from '@letters/contracts'
import { idempotencyKeys, type Db } from '@letters/db'
import type { UnstoredOutcome } from './orders.js'

/**
 * A row without a response is a claim taken by an older version of this code, which claimed
 * keys with a committed row: younger than this, an old replica may still be creating its
 * letter (during a rolling deploy); older, it is abandoned and may be replaced.
 */
export const OLD_CLAIM_ABANDONED_AFTER_SECONDS = 60

/**
 * The text whose hash is the key's transaction-level advisory lock (one per account and key):
 * the transaction that stores an order holds it until it commits or rolls back, and a copy of
 * the request arriving meanwhile is told the key is in flight.
 */
export const idempotencyLockName = (accountId: string, livemode: boolean, key: string) => `${accountId}/${modeLabel(livemode)}/${key}`

/** A key's row, as the intake reads it. */
export interface StoredKey {
  request_hash: string
  response_status: number | null
  response_body: unknown
  /** Younger than OLD_CLAIM_ABANDONED_AFTER_SECONDS. */
  recent: boolean
}

/** The columns of `idempotency_keys` read for a StoredKey, with `k` as the table's alias. */
export const storedKeyColumns = `k.request_hash, k.response_status, k.response_body,
  k.created_at > now() - make_interval(secs => ${OLD_CLAIM_ABANDONED_AFTER_SECONDS}) AS recent`

/**
 * What a key's state means for a request with `fingerprint`: its stored response is replayed
 * (whoever holds the lock: an answered key is never written again until it expires), another
 * request's is 422, and otherwise the request may go on only if its transaction holds the lock
 * and no recent old-version claim is pending. `undefined`: go on.
 */
export function keyVerdict(stored: StoredKey | undefined, fingerprint: string, held: boolean): UnstoredOutcome | undefined {
  if (stored && stored.response_status !== null) {
    if (stored.request_hash !== fingerprint) return { outcome: 'key-reused' }
    return { outcome: 'replay', status: stored.response_status, body: stored.response_body }
  }
  if (!held || stored?.recent) return { outcome: 'key-in-flight' }
  return undefined
}

/**
 * The stored answer of a key, read without its lock, for a request the gateway refuses before
 * it reaches the intake (a 400 that depends on data which changed since): a retry of a request
 * that was answered gets the answer it got, not a new refusal.
 */
export async function answeredBefore(
  db: Db,
  scope: { accountId: string; livemode: boolean },
  key: string,
  fingerprint: string,
): Promise<UnstoredOutcome | undefined> {
  // Raw SQL kept: the columns the intake's batch reads too (storedKeyColumns, constant text, alias `k`).
  const [stored] = await db.execute<StoredKey & Record<string, unknown>>(
    sql`SELECT ${sql.raw(storedKeyColumns)} FROM idempotency_keys k
      WHERE k.account_id = ${scope.accountId}::uuid AND k.livemode = ${scope.livemode} AND k.key = ${key} AND k.expires_at >= now()`,
  )
  if (!stored || stored.response_status === null) return undefined
  return keyVerdict(stored, fingerprint, true)
}

/** Keys are kept publicApi.IDEMPOTENCY_TTL_HOURS; a gateway deletes the expired ones now and then, an hour past it. */
export async function purgeExpiredIdempotencyKeys(db: Db): Promise<number> {
  const deleted = await db.delete(idempotencyKeys).where(lt(idempotencyKeys.expiresAt, sql`now() - interval '1 hour'`))
  return deleted.count
}
