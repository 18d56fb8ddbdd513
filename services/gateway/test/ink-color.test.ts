import { describe, expect } from 'vitest'
import { inArray } from 'drizzle-orm'
import { letters } from '@letters/db'
import type { App } from '../src/app.js'
import { adminAccount, adminClient, expectError, publicClient } from './helpers.js'
import { bulkCampaign, bulkRecipient as recipient, type BulkAnswer } from './bulk-fixtures.js'
import { it as base } from '@letters/test/support/fixtures'
import { moneyState } from '@letters/test/support/ledger'

const INK_RULE = "El campo 'inkColor' debe ser uno de: blue, black, green, purple, red"

/** An account with credits and a campaign whose letters are written in `ink` (none: the default). */
async function customer(app: App, ink?: string) {
  const account = await adminAccount(app, 200)
  const campaignId = await bulkCampaign(app, account, ink === undefined ? {} : { inkColor: ink })
  return { account, client: publicClient(app, account.apiKey), campaignId }
}

const inksOf = async (app: App, ids: string[]) => {
  const rows = await app.db.select({ id: letters.id, inkColor: letters.inkColor }).from(letters).where(inArray(letters.id, ids))
  const byId = new Map(rows.map((row) => [row.id, row.inkColor]))
  return ids.map((id) => byId.get(id))
}

const it = base.extend({ gatewayOptions: { env: { RATE_LIMIT_MAX: '1000' } } })

describe('a campaign letter’s ink', () => {
  it('is the recipient’s own, else the request’s, else the campaign’s, else blue', async ({ gateway: app }) => {
    const plain = await customer(app)
    const green = await customer(app, 'green')
    const card = async (who: typeof plain, body: object = {}) => {
      const response = await who.client.post('/card', { campaignId: who.campaignId, ...recipient(), ...body })
      expect(response.statusCode, response.body).toBe(200)
      return response.json<{ cardId: string }>().cardId
    }
    expect(await inksOf(app, [await card(plain)])).toEqual(['blue'])
    expect(await inksOf(app, [await card(green)])).toEqual(['green'])
    expect(await inksOf(app, [await card(green, { inkColor: 'red' })])).toEqual(['red'])
    expect(await inksOf(app, [await card(green, { inkColor: null })])).toEqual(['green'])

    const bulk = await green.client.post('/cards/bulk', {
      campaignId: green.campaignId,
      inkColor: 'purple',
      recipients: [recipient(), recipient({ inkColor: 'black' }), recipient({ inkColor: null })],
    })
    expect(bulk.statusCode, bulk.body).toBe(200)
    expect(await inksOf(app, bulk.json<BulkAnswer>().cardIds as string[])).toEqual(['purple', 'black', 'purple'])

    const header = 'name,surname,address,zip,city,province,country,inkColor,nombre,cupon'
    const csv = ['Ana,García,Calle Mayor 1,28013,Madrid,Madrid,ES,,Ana,C1', 'Bea,Ruiz,Calle Mayor 2,28013,Madrid,Madrid,ES,red,Bea,C2'].join('\r\n')
    const fromCsv = await green.client.post(`/cards/bulk?campaignId=${green.campaignId}&inkColor=black`, `${header}\r\n${csv}\r\n`, {
      'content-type': 'text/csv',
    })
    expect(fromCsv.statusCode, fromCsv.body).toBe(200)
    expect(await inksOf(app, fromCsv.json<BulkAnswer>().cardIds as string[])).toEqual(['black', 'red'])
  })

  it('refuses an ink we do not have in the request, in the query or on a campaign, charging nothing', async ({ gateway: app }) => {
    const who = await customer(app)
    const before = await moneyState(app.db, who.account.id)
    expectError(await who.client.post('/card', { campaignId: who.campaignId, ...recipient(), inkColor: 'gold' }), 400, 'Bad Request', INK_RULE)
    expectError(await who.client.post('/cards/bulk', { campaignId: who.campaignId, inkColor: 'azul', recipients: [recipient()] }), 400, 'Bad Request', INK_RULE)
    const csv = `name,surname,address,zip,city,province,country,nombre,cupon\r\nAna,García,Calle Mayor 1,28013,Madrid,Madrid,ES,Ana,C1\r\n`
    expectError(
      await who.client.post(`/cards/bulk?campaignId=${who.campaignId}&inkColor=gold`, csv, { 'content-type': 'text/csv' }),
      400,
      'Bad Request',
      "El parámetro 'inkColor' debe ser uno de: blue, black, green, purple, red",
    )
    expect(await moneyState(app.db, who.account.id)).toEqual(before)
    const campaign = await adminClient(app).post(`/admin/accounts/${who.account.id}/campaigns`, {
      name: 'Tinta dorada',
      cardDesignId: who.account.cardDesignId,
      envelopeDesignId: who.account.envelopeDesignId,
      senderId: who.account.senderId,
      inkColor: 'gold',
      message: 'Hola',
      variables: [],
    })
    expectError(campaign, 400, 'Bad Request', INK_RULE)
  })

  it('lists a recipient with an ink we do not have among a bulk request’s errors, and charges only the others', async ({ gateway: app }) => {
    const who = await customer(app)
    const before = await moneyState(app.db, who.account.id)
    const response = await who.client.post('/cards/bulk', { campaignId: who.campaignId, recipients: [recipient(), recipient({ inkColor: 'gold' })] })
    expect(response.statusCode, response.body).toBe(200)
    const body = response.json<BulkAnswer>()
    expect(body.created).toBe(1)
    expect(body.errors).toEqual([{ index: 1, error: 'Bad Request', message: INK_RULE }])
    expect((await moneyState(app.db, who.account.id)).balance).toBe(before.balance - 3)
    // The same in a CSV's inkColor column.
    const csv = [
      'name,surname,address,zip,city,province,country,inkColor,nombre,cupon',
      'Ana,García,Calle Mayor 1,28013,Madrid,Madrid,ES,gold,Ana,C1',
      'Bea,Ruiz,Calle Mayor 2,28013,Madrid,Madrid,ES,green,Bea,C2',
    ].join('\r\n')
    const fromCsv = await who.client.post(`/cards/bulk?campaignId=${who.campaignId}`, `${csv}\r\n`, { 'content-type': 'text/csv' })
    expect(fromCsv.statusCode, fromCsv.body).toBe(200)
    expect(fromCsv.json<BulkAnswer>()).toMatchObject({ created: 1, errors: [{ index: 0, error: 'Bad Request', message: INK_RULE }] })
    expect((await moneyState(app.db, who.account.id)).balance).toBe(before.balance - 6)
  })
})
