import { describe, expect } from 'vitest'
import { eq, inArray, sql } from 'drizzle-orm'
import type { LetterStatus } from '@letters/contracts'
import { letters, type Db } from '@letters/db'
import { signedInUser } from '@letters/test/support/dashboard'
import { it as base } from '@letters/test/support/fixtures'
import { adminAccount } from '@letters/test/support/accounts'
import { adminCampaign, type Account, type PublicClient } from '@letters/test/support/gateway'
import { campaignStatsQuery } from '../src/features/campaigns/stats.js'
import { UNKNOWN_ID, expectError, publicClient, sendSingle, spanishRecipient } from './helpers.js'

// Every letter of these campaigns carries a QR code to the client's page, its coupon in the URL.
const it = base.extend('campaignOverrides', { trackingUrl: 'https://tienda.example.com/gracias?cupon={{cupon}}' })

async function campaignLetter(client: PublicClient, campaignId: string) {
  const response = await client.post('/card', { campaignId, ...spanishRecipient, variables: { cupon: 'OTONO10' } })
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ cardId: string }>().cardId
}

/** Where the pipeline would take minutes: the letter moved, and scanned `scans` times, in SQL. */
async function setLetter(db: Db, id: string, status: LetterStatus, scans = 0) {
  await db
    .update(letters)
    .set({
      status,
      qrScans: scans,
      firstScannedAt: scans > 0 ? sql`now() - interval '1 day'` : null,
      lastScannedAt: scans > 0 ? sql`now()` : null,
      ...(status === 'returned' ? { returnedAt: sql`now()`, returnReason: 'moved' as const } : {}),
    })
    .where(eq(letters.id, id))
}

const stats = (client: PublicClient, campaignId: string) => client.get(`/campaigns/${campaignId}/stats`)

describe('GET /campaigns/{campaignId}/stats', () => {
  it('counts the letters sent, handed to the post, returned, tracked and scanned, and the share scanned', async ({ gateway, account, client, campaign }) => {
    const ids = []
    for (let n = 0; n < 8; n++) ids.push(await campaignLetter(client, campaign))
    const [mailedScanned, mailedTwice, mailed, returned, printed, cancelled, rejected, failed] = ids as [string, ...string[]]
    await setLetter(gateway.db, mailedScanned, 'mailed', 3)
    await setLetter(gateway.db, mailedTwice!, 'mailed', 2)
    await setLetter(gateway.db, mailed!, 'mailed')
    await setLetter(gateway.db, returned!, 'returned', 1)
    await setLetter(gateway.db, printed!, 'printed')
    await setLetter(gateway.db, cancelled!, 'cancelled')
    await setLetter(gateway.db, rejected!, 'address_rejected')
    await setLetter(gateway.db, failed!, 'failed')
    // A letter of the account outside the campaign, and one of the campaign without a QR code, scanned by no one.
    await sendSingle(gateway, account, { trackingUrl: 'https://tienda.example.com/otra' })
    await gateway.db.update(letters).set({ trackingUrl: null, trackingCode: null }).where(eq(letters.id, printed!))

    const response = await stats(client, campaign)
    expect(response.statusCode, response.body).toBe(200)
    // Sent: all but the cancelled, rejected and failed; mailed: the mailed and the returned one.
    expect(response.json()).toEqual({ campaignId: campaign, sent: 5, mailed: 4, returned: 1, tracked: 4, scanned: 3, scans: 6, scanRate: 0.75 })
  })

  it('answers zeros for a campaign without letters, and counts an inactive campaign', async ({ gateway, admin, client, campaign }) => {
    const empty = { campaignId: campaign, sent: 0, mailed: 0, returned: 0, tracked: 0, scanned: 0, scans: 0, scanRate: 0 }
    expect((await stats(client, campaign)).json()).toEqual(empty)
    const id = await campaignLetter(client, campaign)
    await setLetter(gateway.db, id, 'printed', 1)
    // Scanned before the floor marked it mailed: among the scans, not yet among the mailed letters scanned.
    expect((await stats(client, campaign)).json()).toMatchObject({ sent: 1, mailed: 0, scanned: 0, scans: 1, scanRate: 0 })
    expect((await admin.patch(`/admin/campaigns/${campaign}`, { active: false })).statusCode).toBe(200)
    expect((await stats(client, campaign)).json()).toMatchObject({ sent: 1 })
  })

  it('answers 404 in Spanish for an unknown campaign and for another account’s', async ({ gateway, client, account }) => {
    expectError(await stats(client, UNKNOWN_ID), 404, 'Not Found', 'La campaña no existe')
    const other: Account = await adminAccount(gateway, 10)
    const theirs = await adminCampaign(gateway, other)
    expectError(await stats(client, theirs), 404, 'Not Found', 'La campaña no existe')
    // Their own key reads it; ours, whatever the account's letters, does not.
    expect((await stats(publicClient(gateway, other.apiKey), theirs)).statusCode).toBe(200)
    expect(account.id).not.toBe(other.id)
  })

  it.for(['otono', '123', `${UNKNOWN_ID}x`])('answers 400 in Spanish for the malformed id %s', async (id, { client }) => {
    expectError(await stats(client, id), 400, 'Bad Request', "El parámetro 'campaignId' debe ser el id de una campaña (un UUID)")
  })

  it('answers 401 without a key', async ({ gateway, campaign }) => {
    expectError(await gateway.inject({ method: 'GET', url: `/campaigns/${campaign}/stats` }), 401, 'Unauthorized')
  })

  it('counts only the test letters for a test key, and only the live ones for a live key', async ({ gateway, client, testClient, campaign }) => {
    const live = await campaignLetter(client, campaign)
    const test = [await campaignLetter(testClient, campaign), await campaignLetter(testClient, campaign)]
    await setLetter(gateway.db, live, 'mailed', 4)
    for (const id of test) await setLetter(gateway.db, id, 'mailed')
    await setLetter(gateway.db, test[0]!, 'returned')
    expect((await stats(testClient, campaign)).json()).toEqual({
      campaignId: campaign,
      sent: 2,
      mailed: 2,
      returned: 1,
      tracked: 2,
      scanned: 0,
      scans: 0,
      scanRate: 0,
    })
    expect((await stats(client, campaign)).json()).toMatchObject({ sent: 1, mailed: 1, returned: 0, scanned: 1, scans: 4, scanRate: 1 })
    const rows = await gateway.db
      .select({ livemode: letters.livemode })
      .from(letters)
      .where(inArray(letters.id, [live, ...test]))
    expect(rows.filter((row) => !row.livemode)).toHaveLength(2)
  })

  it('is read by a viewer signed in to the dashboard', async ({ gateway, account, client, campaign }) => {
    const id = await campaignLetter(client, campaign)
    await setLetter(gateway.db, id, 'mailed', 1)
    const viewer = await signedInUser(gateway, account.id, 'viewer')
    const response = await viewer.browser.get(`/campaigns/${campaign}/stats`)
    expect(response.statusCode, response.body).toBe(200)
    expect(response.json()).toMatchObject({ campaignId: campaign, sent: 1, mailed: 1, scanned: 1, scanRate: 1 })
  })

  it('reads the campaign’s letters through letters_campaign_created_idx', async ({ gateway, account, campaign }) => {
    const { sql: text, params } = campaignStatsQuery(gateway.db, { accountId: account.id, livemode: true }, campaign).toSQL()
    // A near-empty table has no statistics worth a plan: with sequential and bitmap scans ruled
    // out, the query must have an index to read the letters by, and it is the campaign's.
    const plan = await gateway.db.$client.begin(async (tx) => {
      await tx.unsafe('SET LOCAL enable_seqscan = off')
      await tx.unsafe('SET LOCAL enable_bitmapscan = off')
      return tx.unsafe<Array<{ 'QUERY PLAN': string }>>(`EXPLAIN ${text}`, params as never[])
    })
    expect(plan.map((line) => line['QUERY PLAN']).join('\n')).toMatch(/Index (Only )?Scan using letters_campaign_created_idx on letters/)
  })
})
