import { describe, expect } from 'vitest'
import { eq } from 'drizzle-orm'
import { verifiedAddress } from '@letters/test/support/factories'
import { letters } from '@letters/db'
import { compact, pdfText } from '@letters/test/support/pdf'
import type { App } from '../src/app.js'
import { it } from '@letters/test/support/fixtures'
import { UNKNOWN_ID, adminAccount, expectError, publicClient, sendSingle } from './helpers.js'

type Account = Awaited<ReturnType<typeof adminAccount>>

let app: App
let account: Account
let other: Account
it.beforeAll(async ({ gateway }) => {
  app = gateway
  account = await adminAccount(app)
  other = await adminAccount(app)
})

const createLetter = (overrides: Record<string, unknown> = {}) => sendSingle(app, account, overrides)

describe('GET /cards/{cardId}/proof', () => {
  it('returns the card and the envelope as one PDF: message and signature on page 1, addresses on page 2', async () => {
    const id = await createLetter({ message: 'Gracias por venir a la tienda, Lucía', fontName: 'kalam' })
    const response = await publicClient(app, account.apiKey).get(`/cards/${id}/proof`)
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toBe('application/pdf')
    expect(response.headers['content-disposition']).toBe(`inline; filename="carta-${id}.pdf"`)
    const { pages, text } = await pdfText(response.rawPayload)
    expect(pages).toBe(2)
    const { code } = (await publicClient(app, account.apiKey).get(`/cards/${id}`)).json<{ code: string }>()
    // The sender's name signs the card and heads the envelope; the letter's code is printed under its barcode.
    expect(text).toBe(compact(`Gracias por venir a la tienda, Lucía Remitente Remitente Lucía García Calle Mayor 1 28013 Madrid ${code}`))
  })

  it('shows the verified address once the address worker has normalized it', async () => {
    const id = await createLetter({ address: 'c/ mayor 1' })
    const before = await pdfText((await publicClient(app, account.apiKey).get(`/cards/${id}/proof`)).rawPayload)
    expect(before.text).toContain('c/mayor1')
    const verified = verifiedAddress()
    await app.db.update(letters).set({ status: 'ready_for_print', address: verified }).where(eq(letters.id, id))
    const after = await pdfText((await publicClient(app, account.apiKey).get(`/cards/${id}/proof`)).rawPayload)
    expect(after.text).toContain(compact('Calle Mayor 1 28013 Madrid'))
    // Domestic mail (FLOOR_COUNTRY, ES by default): no country line.
    expect(after.text).not.toContain('España')
  })

  it('is the same file every time it is asked for', async () => {
    const id = await createLetter()
    const first = await publicClient(app, account.apiKey).get(`/cards/${id}/proof`)
    const second = await publicClient(app, account.apiKey).get(`/cards/${id}/proof`)
    expect(first.rawPayload.equals(second.rawPayload)).toBe(true)
  })

  it("answers 404 for another account's letter, an unknown id and a malformed one", async () => {
    const id = await createLetter()
    for (const path of [`/cards/${id}/proof`, `/cards/${UNKNOWN_ID}/proof`, '/cards/nada/proof']) {
      expectError(await publicClient(app, other.apiKey).get(path), 404, 'Not Found', 'La carta no existe')
    }
  })

  it('answers 401 without a valid key', async () => {
    const id = await createLetter()
    expectError(await app.inject({ method: 'GET', url: `/cards/${id}/proof` }), 401, 'Unauthorized')
  })
})
