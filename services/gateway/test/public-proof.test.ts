import { describe, expect } from 'vitest'
import { eq } from 'drizzle-orm'
import { verifiedAddress } from '@letters/test/support/factories'
import { letters } from '@letters/db'
import { compact, pdfText } from '@letters/test/support/pdf'
import { it } from '@letters/test/support/fixtures'
import { UNKNOWN_ID, adminAccount, expectError, publicClient, sendSingle } from './helpers.js'

describe('GET /cards/{cardId}/proof', () => {
  it('returns the card and the envelope as one PDF: message and signature on page 1, addresses on page 2', async ({ gateway: app, account, client }) => {
    const id = await sendSingle(app, account, { message: 'Gracias por venir a la tienda, Lucía', fontName: 'kalam' })
    const response = await client.get(`/cards/${id}/proof`)
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toBe('application/pdf')
    expect(response.headers['content-disposition']).toBe(`inline; filename="carta-${id}.pdf"`)
    const { pages, text } = await pdfText(response.rawPayload)
    expect(pages).toBe(2)
    const { code } = (await client.get(`/cards/${id}`)).json<{ code: string }>()
    // The sender's name signs the card and heads the envelope; the letter's code is printed under its barcode.
    expect(text).toBe(compact(`Gracias por venir a la tienda, Lucía Remitente Remitente Lucía García Calle Mayor 1 28013 Madrid ${code}`))
  })

  it('shows the verified address once the address worker has normalized it', async ({ gateway: app, account, client }) => {
    const id = await sendSingle(app, account, { address: 'c/ mayor 1' })
    const before = await pdfText((await client.get(`/cards/${id}/proof`)).rawPayload)
    expect(before.text).toContain('c/mayor1')
    const verified = verifiedAddress()
    await app.db.update(letters).set({ status: 'ready_for_print', address: verified }).where(eq(letters.id, id))
    const after = await pdfText((await client.get(`/cards/${id}/proof`)).rawPayload)
    expect(after.text).toContain(compact('Calle Mayor 1 28013 Madrid'))
    // Domestic mail (FLOOR_COUNTRY, ES by default): no country line.
    expect(after.text).not.toContain('España')
  })

  it('is the same file every time it is asked for', async ({ gateway: app, account, client }) => {
    const id = await sendSingle(app, account)
    const first = await client.get(`/cards/${id}/proof`)
    const second = await client.get(`/cards/${id}/proof`)
    expect(first.rawPayload.equals(second.rawPayload)).toBe(true)
  })

  it("answers 404 for another account's letter, an unknown id and a malformed one", async ({ gateway: app, account }) => {
    const other = await adminAccount(app)
    const id = await sendSingle(app, account)
    for (const path of [`/cards/${id}/proof`, `/cards/${UNKNOWN_ID}/proof`, '/cards/nada/proof']) {
      expectError(await publicClient(app, other.apiKey).get(path), 404, 'Not Found', 'La carta no existe')
    }
  })

  it('answers 401 without a valid key', async ({ gateway: app, account }) => {
    const id = await sendSingle(app, account)
    expectError(await app.inject({ method: 'GET', url: `/cards/${id}/proof` }), 401, 'Unauthorized')
  })
})
