import { describe, expect } from 'vitest'
import { sql } from 'drizzle-orm'
import sharp from 'sharp'
import { publicClient } from '@letters/test/support/gateway'
import { it as base } from '@letters/test/support/fixtures'
import { eq } from 'drizzle-orm'
import { accounts, dashboardUsers } from '@letters/db'
import { DashboardBrowser } from '@letters/test/support/dashboard'
import { DEMO_OWNER_EMAIL, seedDemoAccount, type DemoIds, type DemoOwner } from '../src/demo/seed.js'
import { sendSingle } from './helpers.js'

const it = base.extend({ gatewayOptions: { isolate: 'seeddemo' } })

/** What the seed returned of the demo's owner (its password is shown once): the tests after the seeding one read it. */
let seededOwner: DemoOwner | undefined
/** The demo's API key (shown once) and ids, for the tests after the seeding one. */
let seeded: { apiKey: string; designs: DemoIds } | undefined

describe('the demo account (npm start on an empty database)', () => {
  // First in the file: it leaves the database as empty as it found it, for the test after it.
  it('is seeded whole or not at all: a failure part-way leaves no account, design or artwork behind', async ({ gateway }) => {
    const rows = async () => {
      const [counts] = await gateway.db.execute<{ accounts: number; designs: number; artworks: number; senders: number }>(
        sql`SELECT (SELECT count(*) FROM accounts)::int AS accounts, (SELECT count(*) FROM card_designs)::int AS designs,
          (SELECT count(*) FROM artworks)::int AS artworks, (SELECT count(*) FROM senders)::int AS senders`,
      )
      return counts
    }
    // The campaign, the seed's last write, fails as a crash or a dropped connection there would.
    await gateway.db.execute(sql`CREATE FUNCTION refuse_campaign() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'seed cut short'; END $$`)
    await gateway.db.execute(sql`CREATE TRIGGER refuse_campaign BEFORE INSERT ON campaigns FOR EACH ROW EXECUTE FUNCTION refuse_campaign()`)
    try {
      await expect(seedDemoAccount(gateway.db)).rejects.toThrow()
      expect(await rows()).toEqual({ accounts: 0, designs: 0, artworks: 0, senders: 0 })
    } finally {
      await gateway.db.execute(sql`DROP TRIGGER refuse_campaign ON campaigns`)
      await gateway.db.execute(sql`DROP FUNCTION refuse_campaign()`)
    }
  })

  it('shows a new user real designs: printed and preprinted cards, white and kraft envelopes, a return address and a drawn signature', async ({ gateway }) => {
    const demo = await seedDemoAccount(gateway.db)
    expect(demo).toBeDefined()
    seededOwner = demo!.owner
    seeded = demo
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

  it("shows the classic card's front in the proof of a letter on it, though the floor loads that card preprinted", async ({ gateway }) => {
    expect(seeded).toBeDefined()
    const { apiKey, designs } = seeded!
    const classic = designs.cardDesigns.find((card) => card.name === 'Tarjeta clásica')!
    const id = await sendSingle(gateway, { apiKey, cardDesignId: classic.id, envelopeDesignId: designs.envelopeDesigns[0]!.id, senderId: designs.senderId })
    const front = await publicClient(gateway, apiKey).get(`/cards/${id}/proof.png?page=1`)
    expect(front.statusCode).toBe(200)
    const { data, info } = await sharp(front.rawPayload).removeAlpha().raw().toBuffer({ resolveWithObject: true })
    const pixels = Array.from({ length: info.width * info.height }, (_, at) => [data[3 * at]!, data[3 * at + 1]!, data[3 * at + 2]!])
    const near = (pixel: number[], rgb: number[]) => pixel.every((channel, index) => Math.abs(channel - rgb[index]!) <= 24)
    // Ivory paper over most of the card, and its gold frame and fleuron drawn on it.
    expect(pixels.filter((pixel) => near(pixel, [0xfb, 0xf8, 0xf1])).length / pixels.length).toBeGreaterThan(0.8)
    expect(pixels.filter((pixel) => near(pixel, [0xa8, 0x88, 0x4f])).length).toBeGreaterThan(500)
  })

  it('gives the demo an owner in the dashboard, who signs in with the password the seed returned (and stored only hashed)', async ({ gateway }) => {
    const [account] = await gateway.db.select({ id: accounts.id }).from(accounts)
    const owner = await gateway.db.select().from(dashboardUsers).where(eq(dashboardUsers.accountId, account!.id))
    expect(owner).toEqual([expect.objectContaining({ email: DEMO_OWNER_EMAIL, role: 'owner', passwordHash: expect.stringMatching(/^\$argon2id\$/) })])
    expect(seededOwner).toBeDefined()
    expect(owner[0]!.passwordHash).not.toContain(seededOwner!.password)
    const user = await new DashboardBrowser(gateway).signIn(seededOwner!.email, seededOwner!.password)
    expect(user).toMatchObject({ email: DEMO_OWNER_EMAIL, role: 'owner', accountName: 'Cuenta de demostración' })
  })
})
