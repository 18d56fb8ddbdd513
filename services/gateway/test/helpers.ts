import { expect } from 'vitest'
import { openGateway, publicClient } from '@letters/test/support/gateway'
import { singleLetter } from '@letters/test/support/factories'
import type { App } from '../src/app.js'

/**
 * A gateway on this run's database and Redis; `overrides` are environment variables. Closing it fails if a public route answered a status /openapi.json does not list.
 * Kept for the files that start gateways by hand (several per file, or per test); the fixtures in @letters/test/support/fixtures start theirs the same way.
 */
export async function startGateway(overrides: Record<string, string> = {}): Promise<App> {
  return (await openGateway({ env: overrides })).app
}

export { adminCampaign, adminClient, publicClient } from '@letters/test/support/gateway'
export { adminAccount } from '@letters/test/support/accounts'

/** The floor token of the gateways the floor's tests start (FLOOR_TOKEN). */
export const FLOOR_TOKEN = 'test-floor-token-0123456789'

export const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000'

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
