import { describe, expect } from 'vitest'
import type { App } from '../src/app.js'
import { it as base } from '@letters/test/support/fixtures'
import type { Account, AdminClient } from '@letters/test/support/gateway'
import { adminAccount, expectError } from './helpers.js'

const it = base
  /** A second account, to show that each account sees only its own entries. */
  .extend('other', ({ gateway }) => adminAccount(gateway))
  /** Another key of the test's account, issued and revoked at once. */
  .extend('revokedKey', async ({ admin, account }) => {
    const issued = (await admin.post(`/admin/accounts/${account.id}/api-keys`)).json<{ id: string; apiKey: string }>()
    expect((await admin.delete(`/admin/api-keys/${issued.id}`)).statusCode).toBe(204)
    return issued.apiKey
  })

const get = (app: App, url: string, apiKey?: string) => app.inject({ method: 'GET', url, headers: apiKey === undefined ? {} : { 'x-api-key': apiKey } })

const variables = [
  { name: 'nombre', maxSize: 40, defaultValue: 'amigo', example: 'Lucía' },
  { name: 'cupon', maxSize: 10, defaultValue: null, example: 'OTONO10' },
  { name: 'ciudad', maxSize: 30, defaultValue: 'Madrid', example: 'Sevilla' },
]

async function createCampaign(admin: AdminClient, owner: Account, overrides: Record<string, unknown> = {}) {
  const response = await admin.post(`/admin/accounts/${owner.id}/campaigns`, {
    name: 'Otoño',
    cardDesignId: owner.cardDesignId,
    envelopeDesignId: owner.envelopeDesignId,
    senderId: owner.senderId,
    message: 'Hola {{nombre}} de {{ciudad}}, tu cupón es {{cupon}}.',
    variables,
    ...overrides,
  })
  expect(response.statusCode, response.body).toBe(201)
  return response.json<{ id: string; name: string }>()
}

const entriesOf = (owner: Account) => ({
  cardDesigns: [{ id: owner.cardDesignId, name: 'Tarjeta' }],
  envelopeDesigns: [{ id: owner.envelopeDesignId, name: 'Sobre' }],
  senders: [{ id: owner.senderId, name: 'Remitente' }],
  signatures: [{ id: owner.signatureId, name: 'Firma' }],
})

describe('GET /company-data', () => {
  it("returns the account's four lists, and only the account's", async ({ gateway: app, account, other }) => {
    const response = await get(app, '/company-data', account.apiKey)
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ data: entriesOf(account) })
    expect((await get(app, '/company-data', other.apiKey)).json()).toEqual({ data: entriesOf(other) })
  })

  it('lists entries added later, oldest first', async ({ gateway: app, admin }) => {
    const owner = await adminAccount(app)
    const second = (await admin.post(`/admin/accounts/${owner.id}/senders`, { name: 'Segundo remitente' })).json<{ id: string }>()
    const response = await get(app, '/company-data', owner.apiKey)
    expect(response.json()).toEqual({
      data: {
        ...entriesOf(owner),
        senders: [
          { id: owner.senderId, name: 'Remitente' },
          { id: second.id, name: 'Segundo remitente' },
        ],
      },
    })
  })
})

describe('GET /card-designs, /envelope-designs, /senders, /signatures', () => {
  it.for([
    ['/card-designs', 'cardDesigns'],
    ['/envelope-designs', 'envelopeDesigns'],
    ['/senders', 'senders'],
    ['/signatures', 'signatures'],
  ] as const)("%s returns { data } with only the calling account's entries", async ([path, list], { gateway: app, account, other }) => {
    const response = await get(app, path, account.apiKey)
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ data: entriesOf(account)[list] })
    expect((await get(app, path, other.apiKey)).json()).toEqual({ data: entriesOf(other)[list] })
  })
})

describe('GET /campaigns', () => {
  it('lists only active campaigns of the account, oldest first, with variables in declaration order', async ({ gateway: app, admin, other }) => {
    const owner = await adminAccount(app)
    const first = await createCampaign(admin, owner, { name: 'Primavera' })
    await createCampaign(admin, owner, { name: 'Inactiva', active: false })
    const closed = await createCampaign(admin, owner, { name: 'Cerrada' })
    expect((await admin.patch(`/admin/campaigns/${closed.id}`, { active: false })).statusCode).toBe(200)
    const second = await createCampaign(admin, owner, { name: 'Sin variables', message: 'Gracias', variables: [] })
    await createCampaign(admin, other, { name: 'De otra cuenta' })

    const response = await get(app, '/campaigns', owner.apiKey)
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({
      campaigns: [
        { id: first.id, name: 'Primavera', variables },
        { id: second.id, name: 'Sin variables', variables: [] },
      ],
    })
  })

  it('drops a campaign as soon as it is deactivated', async ({ gateway: app, admin }) => {
    const owner = await adminAccount(app)
    const campaign = await createCampaign(admin, owner)
    expect((await get(app, '/campaigns', owner.apiKey)).json()).toEqual({ campaigns: [{ id: campaign.id, name: 'Otoño', variables }] })
    await admin.patch(`/admin/campaigns/${campaign.id}`, { active: false })
    expect((await get(app, '/campaigns', owner.apiKey)).json()).toEqual({ campaigns: [] })
  })
})

describe('GET /fonts', () => {
  it('lists every built-in hand a letter can ask for, the default first, none of them the account’s own', async ({ gateway: app, account }) => {
    const response = await get(app, '/fonts', account.apiKey)
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({
      data: [
        { name: 'caveat', family: 'Caveat', default: true, own: false },
        { name: 'dancing-script', family: 'Dancing Script', default: false, own: false },
        { name: 'homemade-apple', family: 'Homemade Apple', default: false, own: false },
        { name: 'indie-flower', family: 'Indie Flower', default: false, own: false },
        { name: 'kalam', family: 'Kalam', default: false, own: false },
      ],
    })
  })
})

describe('an account with nothing', () => {
  it('gets empty lists from every catalog endpoint', async ({ gateway: app, admin }) => {
    const bare = (await admin.post('/admin/accounts', { name: 'Cuenta vacía' })).json<{ apiKey: string }>()
    expect((await get(app, '/company-data', bare.apiKey)).json()).toEqual({ data: { cardDesigns: [], envelopeDesigns: [], senders: [], signatures: [] } })
    expect((await get(app, '/campaigns', bare.apiKey)).json()).toEqual({ campaigns: [] })
    for (const path of ['/card-designs', '/envelope-designs', '/senders', '/signatures']) {
      const response = await get(app, path, bare.apiKey)
      expect({ path, status: response.statusCode, body: response.json() }).toEqual({ path, status: 200, body: { data: [] } })
    }
  })
})

const endpoints = ['/company-data', '/campaigns', '/fonts', '/card-designs', '/envelope-designs', '/signatures', '/senders']
const badKeys = [
  ['missing', () => undefined],
  ['unknown', () => 'clave-que-no-existe-0123456789'],
  ['revoked', (revoked: string) => revoked],
] as const

describe('authentication', () => {
  it.for(endpoints.flatMap((path) => badKeys.map(([kind, key]) => [path, kind, key] as const)))(
    '%s answers 401 Unauthorized in Spanish for a %s key',
    async ([path, _kind, key], { gateway: app, revokedKey }) => {
      const response = await get(app, path, key(revokedKey))
      expectError(response, 401, 'Unauthorized', /API key no es válida o no se ha enviado/)
      expect(response.json()).toEqual({ error: 'Unauthorized', message: expect.any(String), requestId: expect.any(String) })
    },
  )

  // The account has another key, revoked (the fixture's).
  it('still accepts the account key that was not revoked', async ({ gateway: app, account, revokedKey: _revokedKey }) => {
    expect((await get(app, '/senders', account.apiKey)).statusCode).toBe(200)
  })
})

describe('rate-limit headers', () => {
  it('carries the limit, the remaining count and the reset on every catalog response', async ({ gateway: app }) => {
    const owner = await adminAccount(app)
    const remaining: number[] = []
    for (const path of endpoints) {
      const response = await get(app, path, owner.apiKey)
      expect(response.statusCode).toBe(200)
      expect(response.headers['x-ratelimit-limit']).toBe('150')
      expect(response.headers['x-ratelimit-reset']).toMatch(/^\d+$/)
      expect(Number(response.headers['x-ratelimit-reset'])).toBeLessThanOrEqual(5)
      remaining.push(Number(response.headers['x-ratelimit-remaining']))
    }
    // A fresh account: each request takes one from the 150 allowed.
    expect(remaining).toEqual(endpoints.map((_, index) => 149 - index))
  })
})
