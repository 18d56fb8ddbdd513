import { createHash, randomBytes } from 'node:crypto'
import { crc32 } from 'node:zlib'
import { and, eq, isNull } from 'drizzle-orm'
import { apiKeys, type Executor } from '@letters/db'

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
