import { describe, expect, vi } from 'vitest'
import { ADMIN_TOKEN } from '@letters/test/support/context'
import { it as base } from '@letters/test/support/fixtures'
import type { App } from '../src/app.js'
import { FLOOR_TOKEN, adminClient, expectError } from './helpers.js'

const MAX = 3
const WINDOW_MS = 3000

/** A client address of its own per test: failures are counted per address. */
let lastAddress = 0
const newAddress = () => `198.18.9.${++lastAddress}`

// Counters of its own (isolate: its own queue prefix, which the counters' keys start with): with a
// limit of 3, another file's wrong admin tokens from 127.0.0.1 in the same seconds would otherwise
// lock out this file's own admin calls.
const it = base.extend({
  gatewayOptions: { isolate: 'authfailures', env: { FLOOR_TOKEN, AUTH_FAILURES_MAX: String(MAX), AUTH_FAILURES_WINDOW_MS: String(WINDOW_MS) } },
  accountCredits: 0,
})

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
const basic = (password: string) => ({ authorization: `Basic ${Buffer.from(`ops:${password}`).toString('base64')}` })
const get = (app: App, url: string, remoteAddress: string, headers: Record<string, string>) => app.inject({ method: 'GET', url, remoteAddress, headers })

function expectThrottled(response: Awaited<ReturnType<App['inject']>>) {
  expectError(response, 429, 'Too Many Requests', /^Demasiados intentos de autenticación fallidos desde esta dirección; inténtalo de nuevo en \d+ s$/)
  const retryAfter = Number(response.headers['retry-after'])
  expect(retryAfter).toBeGreaterThanOrEqual(1)
  expect(retryAfter).toBeLessThanOrEqual(WINDOW_MS / 1000)
}

describe('failed authentications, counted apart for each kind of credential', () => {
  it('refuse the right admin token after too many wrong ones from an address until the window ends, while a valid API key and the floor token from there still open', async ({
    gateway: app,
    account,
  }) => {
    const address = newAddress()
    for (let i = 0; i < MAX; i++) expectError(await get(app, '/admin/accounts', address, bearer(`wrong-admin-token-${i}-0123456789`)), 401, 'Unauthorized')

    // A guess that happens to be right learns nothing: the token is not even compared.
    expectThrottled(await get(app, '/admin/accounts', address, bearer(ADMIN_TOKEN)))
    // The same token guards /metrics and the ops pages' password.
    expectThrottled(await get(app, '/metrics', address, bearer(ADMIN_TOKEN)))
    expectThrottled(await get(app, '/ops/queues', address, basic(ADMIN_TOKEN)))
    // Other credentials from the same address keep their own counts.
    expect((await get(app, '/campaigns', address, { 'x-api-key': account.apiKey })).statusCode).toBe(200)
    expect((await get(app, '/floor', address, bearer(FLOOR_TOKEN))).statusCode).toBe(200)
    // Another address is not affected.
    expect((await get(app, '/admin/accounts', newAddress(), bearer(ADMIN_TOKEN))).statusCode).toBe(200)

    // Once the window ends, the right token opens again.
    await vi.waitFor(async () => expect((await get(app, '/admin/accounts', address, bearer(ADMIN_TOKEN))).statusCode).toBe(200), {
      timeout: WINDOW_MS + 2000,
      interval: 250,
    })
  })

  it('never lock the admin token out of an address whose API-key failures are past the limit', async ({ gateway: app, account }) => {
    const issued = await adminClient(app).post(`/admin/accounts/${account.id}/api-keys`, {})
    const revoked = issued.json<{ id: string; apiKey: string }>()
    expect((await adminClient(app).delete(`/admin/api-keys/${revoked.id}`)).statusCode).toBe(204)
    const address = newAddress()
    for (let i = 0; i < MAX; i++) expectError(await get(app, '/campaigns', address, { 'x-api-key': revoked.apiKey }), 401, 'Unauthorized')
    expectThrottled(await get(app, '/campaigns', address, { 'x-api-key': revoked.apiKey }))

    expect((await get(app, '/admin/accounts', address, bearer(ADMIN_TOKEN))).statusCode).toBe(200)
    expect((await get(app, '/metrics', address, bearer(ADMIN_TOKEN))).statusCode).toBe(200)
    // A wrong token is a token's first failure there: 401, not the API keys' 429.
    expectError(await get(app, '/admin/accounts', address, bearer('wrong-admin-token-0123456789')), 401, 'Unauthorized')
    expect((await get(app, '/campaigns', address, { 'x-api-key': account.apiKey })).statusCode).toBe(200)
  })

  it('never lock valid API keys or the admin token out of an address whose floor-token failures are past the limit', async ({ gateway: app, account }) => {
    const address = newAddress()
    for (let i = 0; i < MAX; i++) expectError(await get(app, '/floor', address, bearer(`wrong-floor-token-${i}-0123456789`)), 401, 'Unauthorized')
    expectThrottled(await get(app, '/floor', address, bearer(FLOOR_TOKEN)))
    expect((await get(app, '/admin/accounts', address, bearer(ADMIN_TOKEN))).statusCode).toBe(200)
    expect((await get(app, '/campaigns', address, { 'x-api-key': account.apiKey })).statusCode).toBe(200)
  })
})
