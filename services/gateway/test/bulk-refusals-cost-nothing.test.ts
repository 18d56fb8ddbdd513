// Bulk requests refused at no cost: each rule guards a fault found and fixed (each test failed before its fix).
import { describe, expect } from 'vitest'
import { eq } from 'drizzle-orm'
import { letters } from '@letters/db'
import { moneyState } from '@letters/test/support/ledger'
import { christmasCampaign, spanishRecipient as recipient } from '@letters/test/support/factories'
import { it as base } from '@letters/test/support/fixtures'

const it = base.extend({ gatewayOptions: { isolate: 'bulk-refusals' }, campaignOverrides: christmasCampaign })

const HEADER = 'name,surname,address,zip,city,province,country,nombre,cupon'
const ROW = 'Ana,Ruiz,Calle Mayor 1,28013,Madrid,Madrid,ES,Ana,A1'

describe('a CSV of millions of blank or empty rows costs no more than a full request', () => {
  it('reads a CSV past its blank rows and past its 1,001st row no further: 8 MiB of line breaks answered at once', async ({
    gateway,
    account,
    campaign: campaignId,
    client,
  }) => {
    const post = (csv: string) => client.post(`/cards/bulk?campaignId=${campaignId}`, csv, { 'content-type': 'text/csv' })
    // Before the fix the parser read every row: 8 MiB of line breaks held the event loop for
    // about 4 minutes (+2.3 GB of heap). The bound is far above what a read of at most 1,001
    // rows takes, and far below that.
    const started = Date.now()
    const blankTail = await post(`${HEADER}\n${ROW}\n${'\n'.repeat(8 * 1024 * 1024 - 200)}`)
    expect(blankTail.statusCode, blankTail.body).toBe(200)
    expect(blankTail.json<{ created: number }>().created).toBe(1)
    const emptyRows = await post(`${HEADER}\n${',\n'.repeat(4_000_000)}${ROW}\n`)
    expect(emptyRows.statusCode, emptyRows.body).toBe(413)
    expect(emptyRows.json<{ message: string }>().message).toMatch(/más de 1000/)
    expect(Date.now() - started).toBeLessThan(20_000)
    expect((await moneyState(gateway.db, account.id)).charges).toHaveLength(1)
  }, 120_000)
})

describe('a campaign variable named __proto__ prints its CSV cell, or is refused when the campaign is made', () => {
  it('prints the value of the CSV column, not the default, or refuses the variable name when the campaign is made', async ({
    gateway,
    admin,
    account,
    client,
  }) => {
    const made = await admin.post(`/admin/accounts/${account.id}/campaigns`, {
      name: 'Proto',
      cardDesignId: account.cardDesignId,
      envelopeDesignId: account.envelopeDesignId,
      senderId: account.senderId,
      message: 'Tu cupón: {{__proto__}}',
      variables: [{ name: '__proto__', maxSize: 20, defaultValue: 'NINGUNO', example: 'X' }],
    })
    // Refusing the name at creation is a fix too.
    if (made.statusCode === 400) return
    expect(made.statusCode, made.body).toBe(201)
    const campaignId = made.json<{ id: string }>().id
    const answer = await client.post(
      `/cards/bulk?campaignId=${campaignId}`,
      'name,surname,address,zip,city,country,__proto__\nAna,Ruiz,Calle Mayor 1,28013,Madrid,ES,REGALO50\n',
      { 'content-type': 'text/csv' },
    )
    expect(answer.statusCode, answer.body).toBe(200)
    const [id] = answer.json<{ cardIds: string[] }>().cardIds
    const [letter] = await gateway.db.select().from(letters).where(eq(letters.id, id!))
    // On main: "Tu cupón: NINGUNO", the client's REGALO50 silently dropped, and charged.
    expect(letter!.message).toBe('Tu cupón: REGALO50')
  })
})

describe('a sendAt in the past is refused as past, not as less than a minute away', () => {
  it('says the date has passed', async ({ campaign: campaignId, client }) => {
    const answer = await client.post('/card', { campaignId, ...recipient, variables: { cupon: 'A1' }, sendAt: '2020-01-01T00:00:00Z' })
    expect(answer.statusCode).toBe(400)
    expect(answer.json<{ message: string }>().message).toMatch(/pasad|ya ha pasado|en el pasado/)
  })

  it('refuses an offset no time zone has (beyond ±14:00)', async ({ campaign: campaignId, client }) => {
    const at = new Date(Date.now() + 3 * 86_400_000).toISOString().replace(/\.\d+Z$/, '+23:59')
    const answer = await client.post('/card', { campaignId, ...recipient, variables: { cupon: 'A1' }, sendAt: at })
    expect(answer.statusCode, answer.body).toBe(400)
    expect(answer.json<{ message: string }>().message).toMatch(/no es una fecha y hora válida/)
  })
})

describe('a bulk body in the wrong encoding or media type is refused naming the encoding or type it needs', () => {
  it('names UTF-16 for a UTF-16 CSV without BOM instead of quoting a column full of NUL characters', async ({ campaign: campaignId, client }) => {
    const answer = await client.post(`/cards/bulk?campaignId=${campaignId}`, Buffer.from(`${HEADER}\n${ROW}\n`, 'utf16le'), { 'content-type': 'text/csv' })
    expect(answer.statusCode).toBe(400)
    const { message } = answer.json<{ message: string }>()
    expect(message).not.toContain('\u0000')
    expect(message).toMatch(/UTF-8/)
  })

  it('mentions text/csv when the bulk request has no Content-Type', async ({ campaign: campaignId, client }) => {
    const answer = await client.post(`/cards/bulk?campaignId=${campaignId}`, `${HEADER}\n${ROW}\n`, { 'content-type': '' })
    expect(answer.statusCode).toBe(415)
    expect(answer.json<{ message: string }>().message).toMatch(/text\/csv/)
  })

  it('refuses JSON declared as UTF-16 with 415, as it refuses a UTF-16 CSV', async ({ campaign: campaignId, client }) => {
    const answer = await client.post('/cards/bulk', JSON.stringify({ campaignId, recipients: [{ ...recipient, variables: { cupon: 'A1' } }] }), {
      'content-type': 'application/json; charset=utf-16',
    })
    expect(answer.statusCode, answer.body).toBe(415)
  })
})
