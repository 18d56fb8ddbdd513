import { expect } from 'vitest'
import { count, eq } from 'drizzle-orm'
import { accountFontFiles, accountFonts } from '@letters/db'
import { publicClient } from '@letters/test/support/gateway'
import type { App } from '../src/app.js'
import { singleLetter } from '@letters/test/support/factories'

export { adminCampaign, adminClient, publicClient, startGateway } from '@letters/test/support/gateway'
export { adminAccount } from '@letters/test/support/accounts'

/** The floor token of the gateways the floor's tests start (FLOOR_TOKEN). */
export const FLOOR_TOKEN = 'test-floor-token-0123456789'

export { UNKNOWN_ID } from '@letters/test/support/factories'

/** The `{ error, message }` body every error has, with the reason phrase as `error`. */
export function expectError(response: { statusCode: number; json: () => unknown }, status: number, error: string, message?: string | RegExp) {
  const body = response.json() as { error: string; message: string }
  expect({ status: response.statusCode, error: body.error }, JSON.stringify(body)).toEqual({ status, error })
  expect(body.message).toEqual(expect.any(String))
  expect(body.message.length).toBeGreaterThan(0)
  if (message !== undefined) expect(body.message).toMatch(message)
  return body
}

export { spanishRecipient } from '@letters/test/support/factories'

export { singleLetter } from '@letters/test/support/factories'

/** Sends a valid POST /single for the account (`overrides` on top) and returns the new card's id. */
export async function sendSingle(
  app: App,
  owner: { apiKey: string; cardDesignId: string; envelopeDesignId: string; senderId: string },
  overrides: Record<string, unknown> = {},
) {
  const response = await publicClient(app, owner.apiKey).post('/single', singleLetter(owner, overrides))
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ cardId: string }>().cardId
}

/** How many versions of font files the account has stored, over all its fonts. */
export async function fontFileCount(app: App, accountId: string): Promise<number> {
  const [row] = await app.db
    .select({ n: count() })
    .from(accountFontFiles)
    .innerJoin(accountFonts, eq(accountFonts.id, accountFontFiles.fontId))
    .where(eq(accountFonts.accountId, accountId))
  return row!.n
}
