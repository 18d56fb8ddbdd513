import { and, desc, eq, isNull, sql } from 'drizzle-orm'
import type { admin } from '@letters/contracts'
import { accounts, apiKeys, type Executor } from '@letters/db'
import { API_KEY_PREFIX, DISPLAY_PREFIX_LENGTH, TEST_API_KEY_PREFIX, generateApiKey, hashApiKey } from '../../common/api-keys.js'

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
