import { describe, expect } from 'vitest'
import sharp from 'sharp'
import { publicClient } from '@letters/test/support/gateway'
import { it } from '@letters/test/support/fixtures'
import { seedDemoAccount } from '../src/seed-demo.js'

it.override({ gatewayOptions: { isolate: 'seeddemo' } })

describe('the demo account (npm start on an empty database)', () => {
  it('shows a new user real designs: printed and preprinted cards, white and kraft envelopes, a return address and a drawn signature', async ({ gateway }) => {
    const demo = await seedDemoAccount(gateway.db)
    expect(demo).toBeDefined()
    // Seeded once: a second start finds the account.
    expect(await seedDemoAccount(gateway.db)).toBeUndefined()
    const client = publicClient(gateway, demo!.apiKey)

    const cards = await Promise.all(demo!.designs.cardDesigns.map(async ({ id }) => (await client.get(`/card-designs/${id}`)).json()))
    expect(cards).toEqual([
      expect.objectContaining({
        name: 'Tarjeta floral',
        format: 'A6',
        production: 'printed',
        stockCode: null,
        artwork: expect.objectContaining({ version: 1 }),
      }),
      expect.objectContaining({ name: 'Tarjeta clásica', production: 'preprinted', stockCode: 'CLASICA-A6', artwork: expect.objectContaining({ version: 1 }) }),
    ])
    const envelopes = await Promise.all(demo!.designs.envelopeDesigns.map(async ({ id }) => (await client.get(`/envelope-designs/${id}`)).json()))
    expect(envelopes).toEqual([
      expect.objectContaining({ name: 'Sobre blanco', paperColor: '#FFFFFF', artwork: expect.objectContaining({ version: 1 }) }),
      expect.objectContaining({ name: 'Sobre kraft', paperColor: '#C8A27A', artwork: expect.objectContaining({ version: 1 }) }),
    ])
    const preview = await client.get(`/card-designs/${demo!.designs.cardDesigns[0]!.id}/preview`)
    expect(preview.statusCode).toBe(200)
    expect((await sharp(preview.rawPayload).metadata()).width).toBe(1000)

    const campaigns = (await client.get('/campaigns')).json<{ campaigns: Array<{ id: string }> }>().campaigns
    const sent = await client.post('/card', {
      campaignId: campaigns[0]!.id,
      name: 'Lucía',
      surname: 'García',
      address: 'Calle Mayor 1',
      zip: '28013',
      city: 'Madrid',
      country: 'ES',
      variables: { codigo: 'HOLA2026' },
    })
    expect(sent.statusCode, sent.body).toBe(200)
    const letter = (await client.get(`/cards/${sent.json<{ cardId: string }>().cardId}`)).json()
    // The campaign's signature is the demo's drawn one.
    expect(letter).toMatchObject({ signatureId: demo!.designs.signatureId, senderId: demo!.designs.senderId })
    const proof = await client.get(`/cards/${sent.json<{ cardId: string }>().cardId}/proof.png?page=1`)
    expect(proof.statusCode).toBe(200)
  })
})
