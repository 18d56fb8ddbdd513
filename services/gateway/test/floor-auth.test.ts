import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_TOKEN } from '@letters/test/support/context'
import type { App } from '../src/app.js'
import { FLOOR_TOKEN, expectError, startGateway } from './helpers.js'

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
const basic = (password: string, user = 'planta') => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` })

/** A client address of its own per test: failed authentications are counted per address in this run's Redis. */
let lastAddress = 0
const newAddress = () => `192.0.2.${++lastAddress}`

describe('the floor guard (FLOOR_TOKEN)', () => {
  let app: App
  let closed: App
  beforeAll(async () => {
    app = await startGateway({ FLOOR_TOKEN })
    closed = await startGateway()
  })
  afterAll(async () => {
    await app.close()
    await closed.close()
  })

  const floorRoutes = [
    { method: 'GET', url: '/floor' },
    { method: 'GET', url: '/floor/scan.js' },
    { method: 'GET', url: '/floor/batches/00000000-0000-4000-8000-000000000000/files/cards' },
    { method: 'POST', url: '/floor/scan', payload: { code: 'ZZZZZZZZZZ' } },
  ] as const

  it.each(floorRoutes)('answers $method $url 404 when no FLOOR_TOKEN is configured, whatever the token', async (route) => {
    expect(closed.config.floorToken).toBeUndefined()
    for (const headers of [{}, bearer(FLOOR_TOKEN), bearer(ADMIN_TOKEN), basic(ADMIN_TOKEN)])
      expectError(await closed.inject({ ...route, headers }), 404, 'Not Found', `La ruta ${route.method} ${route.url} no existe`)
  })

  it.each(floorRoutes)(
    'refuses $method $url without a token, with a wrong one and with the admin token (Bearer or Basic): 401 asking for Basic auth',
    async (route) => {
      for (const headers of [{}, bearer('not-the-floor-token-0123'), basic('not-the-floor-token-0123'), bearer(ADMIN_TOKEN), basic(ADMIN_TOKEN)]) {
        const response = await app.inject({ ...route, headers, remoteAddress: newAddress() })
        expectError(
          response,
          401,
          'Unauthorized',
          /^El token de la planta no es válido o no se ha enviado \(en el navegador, como contraseña de la autenticación Basic/,
        )
        expect(response.headers['www-authenticate']).toBe('Basic realm="letters floor", charset="UTF-8"')
      }
    },
  )

  it('opens the page with the floor token as Bearer (scripts) or as the Basic password (browsers, any user name)', async () => {
    // The scheme's name in any case (RFC 9110): `bearer`, `BASIC`.
    const lower = { authorization: `bearer ${FLOOR_TOKEN}` }
    const upper = { authorization: basic(FLOOR_TOKEN).authorization.replace('Basic', 'BASIC') }
    for (const headers of [bearer(FLOOR_TOKEN), basic(FLOOR_TOKEN), basic(FLOOR_TOKEN, ''), lower, upper]) {
      const response = await app.inject({ method: 'GET', url: '/floor', headers })
      expect(response.statusCode, response.body).toBe(200)
      expect(response.headers['content-type']).toBe('text/html; charset=utf-8')
    }
  })

  it('refuses Basic credentials without the colon between user and password, even when they are the token', async () => {
    const response = await app.inject({
      method: 'GET',
      url: '/floor',
      headers: { authorization: `Basic ${Buffer.from(FLOOR_TOKEN).toString('base64')}` },
      remoteAddress: newAddress(),
    })
    expectError(response, 401, 'Unauthorized')
  })

  it('opens nothing else with the floor token: the admin API, /metrics and the queue dashboard refuse it', async () => {
    const refused = [
      { method: 'GET', url: '/admin/accounts', headers: bearer(FLOOR_TOKEN) },
      { method: 'GET', url: '/admin/stuck-letters', headers: bearer(FLOOR_TOKEN) },
      { method: 'GET', url: '/metrics', headers: bearer(FLOOR_TOKEN) },
      { method: 'GET', url: '/ops/queues', headers: basic(FLOOR_TOKEN) },
      { method: 'GET', url: '/ops/queues', headers: bearer(FLOOR_TOKEN) },
    ] as const
    for (const request of refused) expectError(await app.inject({ ...request, remoteAddress: newAddress() }), 401, 'Unauthorized', /token de administración/)
    // The admin token still opens them.
    expect((await app.inject({ method: 'GET', url: '/admin/accounts', headers: bearer(ADMIN_TOKEN) })).statusCode).toBe(200)
  })

  it('counts a wrong floor token as a failed authentication of the address: past AUTH_FAILURES_MAX, 429 even with the right token, while the admin token still opens', async () => {
    const throttled = await startGateway({ FLOOR_TOKEN, AUTH_FAILURES_MAX: '3' })
    try {
      const remoteAddress = newAddress()
      const scan = (headers: Record<string, string>) => throttled.inject({ method: 'GET', url: '/floor', headers, remoteAddress })
      // No token at all is not a failure (a browser's first request before it asks for the password).
      for (let i = 0; i < 5; i++) expectError(await scan({}), 401, 'Unauthorized')
      for (let i = 0; i < 3; i++) expectError(await scan(basic(`wrong-password-${i}-0123456789`)), 401, 'Unauthorized')
      const refused = await scan(basic(FLOOR_TOKEN))
      expectError(refused, 429, 'Too Many Requests', /^Demasiados intentos de autenticación fallidos/)
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1)
      expect((await throttled.inject({ method: 'GET', url: '/floor', headers: basic(FLOOR_TOKEN), remoteAddress: newAddress() })).statusCode).toBe(200)
      // The floor token's failures are its own: the admin token from that address is not locked out.
      expect((await throttled.inject({ method: 'GET', url: '/admin/accounts', headers: bearer(ADMIN_TOKEN), remoteAddress })).statusCode).toBe(200)
    } finally {
      await throttled.close()
    }
  })

  it('keeps /floor out of the public OpenAPI document', async () => {
    const document = (await app.inject({ method: 'GET', url: '/openapi.json' })).json<{ paths: Record<string, unknown> }>()
    expect(Object.keys(document.paths).filter((path) => path.startsWith('/floor'))).toEqual([])
  })
})
