import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { App } from '../src/app.js'
import { expectError, startGateway } from './helpers.js'

describe('admin API guard', () => {
  let app: App
  let closed: App
  beforeAll(async () => {
    app = await startGateway()
    closed = await startGateway({ ADMIN_TOKEN: '' })
  })
  afterAll(async () => {
    await app.close()
    await closed.close()
  })

  it('rejects a request without a token with 401', async () => {
    const response = await app.inject({ method: 'POST', url: '/admin/accounts', payload: { name: 'X' } })
    expectError(response, 401, 'Unauthorized', /token de administración/)
  })

  it('rejects a wrong token with 401', async () => {
    const response = await app.inject({
      method: 'GET',
      url: '/admin/accounts/00000000-0000-4000-8000-000000000000',
      headers: { authorization: 'Bearer not-the-token-at-all' },
    })
    expectError(response, 401, 'Unauthorized')
  })

  it('rejects a token sent without the Bearer scheme', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/admin/accounts',
      headers: { authorization: 'test-admin-token-0123456789' },
      payload: { name: 'X' },
    })
    expectError(response, 401, 'Unauthorized')
  })

  it('answers 404 on every admin route when no ADMIN_TOKEN is configured', async () => {
    const response = await closed.inject({
      method: 'POST',
      url: '/admin/accounts',
      headers: { authorization: 'Bearer anything-at-all-here' },
      payload: { name: 'X' },
    })
    expectError(response, 404, 'Not Found')
    expect(closed.config.adminToken).toBeUndefined()
  })

  it('answers unknown routes with the error object', async () => {
    expectError(await app.inject({ method: 'GET', url: '/nope' }), 404, 'Not Found', 'La ruta GET /nope no existe')
  })
})
