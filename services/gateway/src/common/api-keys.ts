import { createHash, randomBytes } from 'node:crypto'
import { crc32 } from 'node:zlib'
import { and, desc, eq, isNull, sql } from 'drizzle-orm'
import type { admin } from '@letters/contracts'
import { accounts, apiKeys, type Executor } from '@letters/db'

/** A key's mode is its prefix (`lk_<mode>_`), which the checksum covers. */
export const API_KEY_PREFIX = 'lk_live_'
export const TEST_API_KEY_PREFIX = 'lk_test_'
export const DISPLAY_PREFIX_LENGTH = API_KEY_PREFIX.length + 6

/** `lk_<kind>_`, 32 random bytes and the CRC-32 of both (4 bytes), base64url. */
const CHECKSUMMED_KEY = /^(lk_[a-z]+_[A-Za-z0-9_-]{43})([A-Za-z0-9_-]{6})$/
/** Keys issued before the checksum: still valid, but only a database lookup can tell. */
const LEGACY_KEY = /^lk_live_[A-Za-z0-9_-]{43}$/

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex')
}

function checksum(text: string): string {
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(text))
  return crc.toString('base64url')
}

/**
 * 32 random bytes (256 bits) after the prefix, then a checksum of prefix and random part, all
 * base64url: `lk_live_` followed by 49 characters. As with GitHub's tokens, the checksum lets a
 * typo, a truncated paste or a guessed key be refused without asking the database, and lets
 * secret scanners recognise a real key.
 */
export function generateApiKey(prefix = API_KEY_PREFIX): string {
  const body = prefix + randomBytes(32).toString('base64url')
  return body + checksum(body)
}

/**
 * Whether a string can be one of our keys at all: `checksummed` (the current format, checksum
 * right), `legacy` (the format before checksums, which must be looked up) or `undefined`.
 */
export function apiKeyFormat(key: string): 'checksummed' | 'legacy' | undefined {
  const parts = CHECKSUMMED_KEY.exec(key)
  if (parts) return checksum(parts[1]!) === parts[2] ? 'checksummed' : undefined
  return LEGACY_KEY.test(key) ? 'legacy' : undefined
}

/**
 * Stores the hash of a new key and returns the key itself, which is shown once and never again.
 * A test key's letters are checked like live ones but never charged nor printed.
 */
export async function issueApiKey(ex: Executor, accountId: string, mode: admin.ApiKeyMode = 'live'): Promise<admin.CreatedApiKey & { createdAt: string }> {
  const apiKey = generateApiKey(mode === 'live' ? API_KEY_PREFIX : TEST_API_KEY_PREFIX)
  const [row] = await ex
    .insert(apiKeys)
    .values({ accountId, keyHash: hashApiKey(apiKey), displayPrefix: apiKey.slice(0, DISPLAY_PREFIX_LENGTH), livemode: mode === 'live' })
    .returning({ id: apiKeys.id, createdAt: apiKeys.createdAt })
  if (!row) throw new Error('api key insert returned nothing')
  return { id: row.id, apiKey, mode, createdAt: row.createdAt.toISOString() }
}

/**
 * Revokes a key; revoking one already revoked changes nothing. Returns false for an unknown key,
 * and for another account's when `accountId` is given (an account revokes only its own).
 */
export async function revokeApiKey(ex: Executor, id: string, accountId?: string): Promise<{ found: boolean; keyHash?: string }> {
  const ofAccount = accountId === undefined ? undefined : eq(apiKeys.accountId, accountId)
  const [revoked] = await ex
    .update(apiKeys)
    .set({ revokedAt: new Date() })
    .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt), ofAccount))
    .returning({ keyHash: apiKeys.keyHash })
  if (revoked) return { found: true, keyHash: revoked.keyHash }
  const [existing] = await ex
    .select({ keyHash: apiKeys.keyHash })
    .from(apiKeys)
    .where(and(eq(apiKeys.id, id), ofAccount))
  return existing ? { found: true, keyHash: existing.keyHash } : { found: false }
}

/** How many characters of a key its account's list shows. */
export const LISTED_PREFIX_LENGTH = 12

/** An account's keys still valid, newest first, each by its first 12 characters. */
export async function accountApiKeys(ex: Executor, accountId: string) {
  const rows = await ex
    .select({ id: apiKeys.id, displayPrefix: apiKeys.displayPrefix, livemode: apiKeys.livemode, createdAt: apiKeys.createdAt })
    .from(apiKeys)
    .where(and(eq(apiKeys.accountId, accountId), isNull(apiKeys.revokedAt)))
    .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id))
  return {
    data: rows.map((row) => ({
      id: row.id,
      prefix: row.displayPrefix.slice(0, LISTED_PREFIX_LENGTH),
      mode: row.livemode ? ('live' as const) : ('test' as const),
      createdAt: row.createdAt.toISOString(),
    })),
  }
}

/** How many keys a search by prefix lists at most. */
const SEARCH_LIMIT = 20

/** The keys whose visible start begins with `prefix` (at most its 14 characters), newest first. */
export async function findApiKeys(ex: Executor, prefix: string): Promise<admin.ApiKeySearch> {
  const visible = prefix.slice(0, DISPLAY_PREFIX_LENGTH)
  const rows = await ex
    .select({
      id: apiKeys.id,
      accountId: apiKeys.accountId,
      accountName: accounts.name,
      livemode: apiKeys.livemode,
      displayPrefix: apiKeys.displayPrefix,
      createdAt: apiKeys.createdAt,
      revokedAt: apiKeys.revokedAt,
    })
    .from(apiKeys)
    .innerJoin(accounts, eq(accounts.id, apiKeys.accountId))
    // starts_with, not LIKE: a key's characters include `_`, which LIKE reads as a wildcard.
    .where(sql`starts_with(${apiKeys.displayPrefix}, ${visible})`)
    .orderBy(desc(apiKeys.createdAt))
    .limit(SEARCH_LIMIT)
  return {
    data: rows.map(({ livemode, createdAt, revokedAt, ...row }) => ({
      ...row,
      mode: livemode ? 'live' : 'test',
      createdAt: createdAt.toISOString(),
      revokedAt: revokedAt?.toISOString() ?? null,
    })),
  }
}
