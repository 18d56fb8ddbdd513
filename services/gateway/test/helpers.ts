import { expect } from 'vitest'
import type { InjectOptions } from 'fastify'
import { ADMIN_TOKEN, testConfig } from '@letters/test/support/context'
import { sampleRecipient } from '@letters/test/support/factories'
import { buildApp, type App } from '../src/app.js'
import { checkStatusesAgainstContract } from './contract.js'

/** A gateway on this run's database and Redis; `overrides` are environment variables. Closing it fails if a public route answered a status /openapi.json does not list. */
export async function startGateway(overrides: Record<string, string> = {}): Promise<App> {
  const app = await buildApp({ config: testConfig(overrides), logger: false })
  checkStatusesAgainstContract(app)
  await app.ready()
  return app
}

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE'

/** Calls the admin API with the run's admin token. */
export function adminClient(app: App) {
  const call = (method: Method, url: string, payload?: unknown, headers: Record<string, string> = {}) =>
    app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...headers },
      ...(payload === undefined ? {} : { payload: payload as InjectOptions['payload'] }),
    })
  return {
    get: (url: string) => call('GET', url),
    post: (url: string, payload?: unknown) => call('POST', url, payload ?? {}),
    patch: (url: string, payload: unknown) => call('PATCH', url, payload),
    delete: (url: string) => call('DELETE', url),
    raw: call,
  }
}

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

/** A valid Spanish recipient, as a request body sends it (no company). */
const { company: _company, ...bodyRecipient } = sampleRecipient
export const spanishRecipient = bodyRecipient

/** A valid POST /single body for the account, with `overrides` on top. */
export function singleLetter(account: { cardDesignId: string; envelopeDesignId: string; senderId: string }, overrides: Record<string, unknown> = {}) {
  return {
    cardDesignId: account.cardDesignId,
    envelopeDesignId: account.envelopeDesignId,
    senderId: account.senderId,
    message: 'Querida Lucía, gracias por tu compra.',
    ...spanishRecipient,
    ...overrides,
  }
}

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

/** Calls the public API with an account's key. */
export function publicClient(app: App, apiKey: string) {
  return {
    get: (url: string) => app.inject({ method: 'GET', url, headers: { 'x-api-key': apiKey } }),
    delete: (url: string) => app.inject({ method: 'DELETE', url, headers: { 'x-api-key': apiKey } }),
    post: (url: string, payload: unknown, headers: Record<string, string> = {}) =>
      app.inject({ method: 'POST', url, headers: { 'x-api-key': apiKey, ...headers }, payload: payload as InjectOptions['payload'] }),
  }
}

/** A campaign made through the admin API: "Hola {{nombre}}, tu cupón es {{ cupon }}.", nombre defaulting to "amigo". */
export async function adminCampaign(
  app: App,
  owner: { id: string; cardDesignId: string; envelopeDesignId: string; senderId: string },
  overrides: Record<string, unknown> = {},
) {
  const response = await adminClient(app).post(`/admin/accounts/${owner.id}/campaigns`, {
    name: 'Otoño',
    cardDesignId: owner.cardDesignId,
    envelopeDesignId: owner.envelopeDesignId,
    senderId: owner.senderId,
    message: 'Hola {{nombre}}, tu cupón es {{ cupon }}.',
    variables: [
      { name: 'nombre', maxSize: 40, defaultValue: 'amigo', example: 'Lucía' },
      { name: 'cupon', maxSize: 10, defaultValue: null, example: 'OTONO10' },
    ],
    ...overrides,
  })
  expect(response.statusCode, response.body).toBe(201)
  return response.json<{ id: string }>().id
}
