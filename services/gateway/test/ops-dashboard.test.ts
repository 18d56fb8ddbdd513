import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_TOKEN } from '@letters/test/support/context'
import type { App } from '../src/app.js'
import { expectError, startGateway } from './helpers.js'

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

const basic = (password: string) => `Basic ${Buffer.from(`ops:${password}`).toString('base64')}`

describe('the queue dashboard at /ops/queues', () => {
  it('asks a browser for the admin token (Basic auth) and answers 401 without it', async () => {
    const response = await app.inject({ method: 'GET', url: '/ops/queues' })
    expectError(response, 401, 'Unauthorized', /token de administración/)
    expect(response.headers['www-authenticate']).toBe('Basic realm="letters ops", charset="UTF-8"')
    expectError(await app.inject({ method: 'GET', url: '/ops/queues', headers: { authorization: basic('otra-cosa-0123456789') } }), 401, 'Unauthorized')
  })

  it('serves the dashboard page for the token given as the Basic password', async () => {
    const response = await app.inject({ method: 'GET', url: '/ops/queues', headers: { authorization: basic(ADMIN_TOKEN) } })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toMatch(/^text\/html/)
    expect(response.body).toContain('Cartas: colas')
  })

  it('lists every queue with its job counts through its API, for a bearer token too', async () => {
    const response = await app.inject({ method: 'GET', url: '/ops/queues/api/queues', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
    expect(response.statusCode, response.body).toBe(200)
    const { queues } = response.json<{ queues: Array<{ name: string; counts: Record<string, number> }> }>()
    expect(queues.map((queue) => queue.name).sort()).toEqual(['address', 'production', 'webhooks'])
    for (const queue of queues) expect(queue.counts).toMatchObject({ failed: expect.any(Number), waiting: expect.any(Number), active: expect.any(Number) })
  })

  it('does not exist without an ADMIN_TOKEN', async () => {
    expectError(await closed.inject({ method: 'GET', url: '/ops/queues', headers: { authorization: basic(ADMIN_TOKEN) } }), 404, 'Not Found')
  })
})
