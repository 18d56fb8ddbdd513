import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { App } from '../src/app.js'
import { adminClient, expectError, startGateway } from './helpers.js'

describe('revoking an API key', () => {
  let replicaA: App
  let replicaB: App
  beforeAll(async () => {
    replicaA = await startGateway()
    replicaB = await startGateway()
  })
  afterAll(async () => {
    await replicaA.close()
    await replicaB.close()
  })

  it('stops the key on every replica at once, even one that had just cached it', async () => {
    const admin = adminClient(replicaA)
    const account = (await admin.post('/admin/accounts', { name: 'Dos réplicas' })).json<{ id: string; apiKey: string }>()
    const issued = (await admin.post(`/admin/accounts/${account.id}/api-keys`)).json<{ id: string; apiKey: string }>()
    // Both replicas have the key in their caches.
    expect(await replicaA.apiKeyAuth.identify(issued.apiKey)).not.toBeNull()
    expect(await replicaB.apiKeyAuth.identify(issued.apiKey)).not.toBeNull()

    expect((await admin.delete(`/admin/api-keys/${issued.id}`)).statusCode).toBe(204)
    expect(await replicaA.apiKeyAuth.identify(issued.apiKey)).toBeNull()
    // B learns it through Redis; allow the message its round trip, far less than the cache's second.
    await expect.poll(() => replicaB.apiKeyAuth.identify(issued.apiKey), { timeout: 300, interval: 10 }).toBeNull()
    expect(await replicaB.apiKeyAuth.identify(account.apiKey)).not.toBeNull()
  })

  it('answers 401 on another replica right after the revocation', async () => {
    const admin = adminClient(replicaA)
    const account = (await admin.post('/admin/accounts', { name: 'Dos réplicas HTTP' })).json<{ id: string }>()
    const issued = (await admin.post(`/admin/accounts/${account.id}/api-keys`)).json<{ id: string; apiKey: string }>()
    const onB = () => replicaB.inject({ method: 'GET', url: '/senders', headers: { 'x-api-key': issued.apiKey } })
    expect((await onB()).statusCode).toBe(200)
    await admin.delete(`/admin/api-keys/${issued.id}`)
    await expect.poll(async () => (await onB()).statusCode, { timeout: 300, interval: 10 }).toBe(401)
    expectError(await onB(), 401, 'Unauthorized')
  })
})
