import { createHash, randomBytes } from 'node:crypto'
import { and, eq, isNull } from 'drizzle-orm'
import { apiKeys, type Executor } from '@letters/db'

export const API_KEY_PREFIX = 'lk_live_'
const DISPLAY_PREFIX_LENGTH = API_KEY_PREFIX.length + 6

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex')
}

/** 32 random bytes (256 bits), base64url: `lk_live_` followed by 43 characters. */
export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url')
}

/** Stores the hash of a new key and returns the key itself, which is shown once and never again. */
export async function issueApiKey(ex: Executor, accountId: string): Promise<{ id: string; apiKey: string }> {
  const apiKey = generateApiKey()
  const [row] = await ex
    .insert(apiKeys)
    .values({ accountId, keyHash: hashApiKey(apiKey), displayPrefix: apiKey.slice(0, DISPLAY_PREFIX_LENGTH) })
    .returning({ id: apiKeys.id })
  if (!row) throw new Error('api key insert returned nothing')
  return { id: row.id, apiKey }
}

/** Revokes a key; revoking one already revoked changes nothing. Returns false for an unknown key. */
export async function revokeApiKey(ex: Executor, id: string): Promise<{ found: boolean; keyHash?: string }> {
  const [revoked] = await ex
    .update(apiKeys)
    .set({ revokedAt: new Date() })
    .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
    .returning({ keyHash: apiKeys.keyHash })
  if (revoked) return { found: true, keyHash: revoked.keyHash }
  const [existing] = await ex.select({ keyHash: apiKeys.keyHash }).from(apiKeys).where(eq(apiKeys.id, id))
  return existing ? { found: true, keyHash: existing.keyHash } : { found: false }
}
