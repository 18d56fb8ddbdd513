/**
 * A letter's page in the dashboard (a real browser on the running stack) shows its proof's pages
 * as thumbnails, each named for what it is: for a preprinted card with artwork, the front (the
 * picture of the stock the floor loads), the handwriting and the envelope. A thumbnail opens
 * large; an owner cancels a scheduled letter (its credits back) and erases its personal data.
 */
import { mkdir } from 'node:fs/promises'
import { describe, expect, vi } from 'vitest'
import { and, eq } from 'drizzle-orm'
import { ledgerEntries, letters } from '@letters/db'
import { cardSvg } from '../support/artwork.js'
import { adminAccount } from '../support/accounts.js'
import { newUser } from '../support/dashboard.js'
import { dashboardTest, heading, signedInTab } from '../support/dashboard-browser.js'
import { singleLetter } from '../support/factories.js'
import { adminClient, publicClient } from '../support/gateway.js'
import { balanceOf } from '../support/ledger.js'

const it = dashboardTest({ label: 'dashboard-letter-proof' })

const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url)

// A browser on a 2-core machine beside other files: tens of seconds, not seconds.
vi.setConfig({ testTimeout: 120_000 })

describe("a letter's page", () => {
  it('shows a preprinted card’s front, its handwriting and its envelope as the proof’s three pages, each image drawn', async ({
    pipeline,
    baseUrl,
    browser,
  }) => {
    const app = pipeline.app
    const account = await adminAccount(app, 10, 'Papelería Luna')
    const admin = adminClient(app)
    const classic = await admin.post(`/admin/accounts/${account.id}/card-designs`, { name: 'Clásica', production: 'preprinted', stockCode: 'CLASICA-A6' })
    expect(classic.statusCode, classic.body).toBe(201)
    const cardDesignId = classic.json<{ id: string }>().id
    const artwork = await admin.put(`/admin/accounts/${account.id}/card-designs/${cardDesignId}/artwork`, cardSvg('A6', { fill: '#2e7d5b' }), 'image/svg+xml')
    expect(artwork.statusCode, artwork.body).toBe(200)
    const sent = await publicClient(app, account.apiKey).post('/single', singleLetter({ ...account, cardDesignId }))
    expect(sent.statusCode, sent.body).toBe(200)
    const letterId = sent.json<{ cardId: string }>().cardId

    // A new owner of the account, signed in in a new tab.
    const { page, problems } = await signedInTab(browser, baseUrl, await newUser(app, account.id))

    await page.goto(`/dashboard/cartas/${letterId}`)
    await heading(page, 'Carta para Lucía García').waitFor()
    const thumbnails = page.locator('ul.thumbnails img')
    await expect
      .poll(() => thumbnails.evaluateAll((images) => images.map((image) => image.getAttribute('alt'))))
      .toEqual(['Anverso de la tarjeta', 'Texto escrito a mano', 'Sobre'])
    // Each page's PNG loaded (a page the proof lacks would be a 404 and a broken image).
    await expect
      .poll(() => thumbnails.evaluateAll((images) => images.map((image) => (image as unknown as { naturalWidth: number }).naturalWidth > 0)), {
        timeout: 60_000,
      })
      .toEqual([true, true, true])
    await mkdir(ARTIFACTS, { recursive: true })
    await page.screenshot({ path: new URL('dashboard-letter-proof.png', ARTIFACTS).pathname, fullPage: true })
    expect(problems).toEqual([])
  })

  it('opens a thumbnail large in a dialog that Escape closes; "Cancelar carta" says the refund and gives the credits back; "Borrar datos personales" erases the address', async ({
    pipeline,
    baseUrl,
    browser,
  }) => {
    const app = pipeline.app
    const account = await adminAccount(app, 10, 'Papelería Luna')
    // A day ahead: scheduled, so that it can be cancelled and no worker moves it meanwhile.
    const client = publicClient(app, account.apiKey)
    const sent = await client.post('/single', singleLetter(account, { sendAt: new Date(Date.now() + 26 * 3_600_000).toISOString() }))
    expect(sent.statusCode, sent.body).toBe(200)
    const letterId = sent.json<{ cardId: string }>().cardId
    const letterRow = async () => (await app.db.select().from(letters).where(eq(letters.id, letterId)))[0]!
    expect(await letterRow()).toMatchObject({ status: 'scheduled', cost: 3 })
    expect(await balanceOf(app.db, account.id)).toBe(7)

    // A new owner of the account, signed in in a new tab.
    const { page, problems } = await signedInTab(browser, baseUrl, await newUser(app, account.id))
    await page.goto(`/dashboard/cartas/${letterId}`)
    await heading(page, 'Carta para Lucía García').waitFor()
    const status = page.locator('.letter-status .badge')
    expect(await status.innerText()).toBe('Programada')

    // A thumbnail opens its page large, in a modal dialog; Escape closes it and the focus goes back to the thumbnail.
    const thumbnail = page.getByRole('button', { name: 'Ver grande: Texto escrito a mano' })
    await expect
      .poll(() => thumbnail.locator('img').evaluate((image) => (image as unknown as { naturalWidth: number }).naturalWidth), { timeout: 60_000 })
      .toBeGreaterThan(0)
    await thumbnail.click()
    const large = page.getByRole('dialog', { name: 'Texto escrito a mano' })
    await large.waitFor()
    const largeImage = large.getByRole('img', { name: 'Texto escrito a mano' })
    await expect.poll(() => largeImage.evaluate((image) => (image as unknown as { naturalWidth: number }).naturalWidth)).toBeGreaterThan(0)
    const [small, big] = [await thumbnail.locator('img').boundingBox(), await largeImage.boundingBox()]
    // Larger than its thumbnail, and whole on the screen (the dialog is at most 40rem wide, the image at most 75% of the height).
    expect(big!.width).toBeGreaterThan(small!.width)
    expect(big!.y).toBeGreaterThanOrEqual(0)
    expect(big!.y + big!.height).toBeLessThanOrEqual(page.viewportSize()!.height)
    await page.keyboard.press('Escape')
    await large.waitFor({ state: 'hidden' })
    expect(await page.getByRole('dialog').count()).toBe(0)
    expect(await thumbnail.evaluate((button) => button === button.ownerDocument.activeElement)).toBe(true)

    // Cancelled, after the question that says what comes back: the status in Spanish, the credits in the balance.
    expect(await page.getByRole('button', { name: 'Borrar datos personales' }).count()).toBe(0)
    await page.getByRole('button', { name: 'Cancelar carta' }).click()
    const cancelling = page.getByRole('dialog', { name: '¿Cancelar esta carta?' })
    await cancelling.getByText('Se devolverán 3 créditos a tu saldo.', { exact: true }).waitFor()
    await cancelling.getByRole('button', { name: 'Sí, cancelar la carta' }).click()
    await cancelling.waitFor({ state: 'hidden' })
    await page.getByRole('status').getByText('Carta cancelada. Se han devuelto 3 créditos a tu saldo.', { exact: true }).waitFor()
    await expect.poll(() => status.innerText()).toBe('Cancelada')
    await expect.poll(() => page.locator('.timeline-status').allInnerTexts()).toEqual(['Programada', 'Cancelada'])
    expect(await page.getByRole('button', { name: 'Cancelar carta' }).count()).toBe(0)
    expect((await letterRow()).status).toBe('cancelled')
    expect(await balanceOf(app.db, account.id)).toBe(10)
    expect((await client.get('/balance')).json()).toMatchObject({ balance: 10 })
    expect(
      await app.db
        .select({ amount: ledgerEntries.amount })
        .from(ledgerEntries)
        .where(and(eq(ledgerEntries.letterId, letterId), eq(ledgerEntries.kind, 'refund'))),
    ).toEqual([{ amount: 3 }])

    // Cancelled, its personal data may go: the address shown as erased, and gone from the row.
    await page.getByRole('button', { name: 'Borrar datos personales' }).click()
    const erasing = page.getByRole('dialog', { name: '¿Borrar los datos personales?' })
    await erasing.getByRole('button', { name: 'Sí, borrar los datos' }).click()
    await erasing.waitFor({ state: 'hidden' })
    await page.getByRole('status').getByText('Datos personales borrados.', { exact: true }).waitFor()
    const code = (await letterRow()).code
    await heading(page, `Carta ${code}`).waitFor()
    const address = page.locator('section', { has: page.getByRole('heading', { level: 2, name: 'Dirección' }) })
    expect(await address.locator('p').first().innerText()).toBe('Borrada (queda el país: España).')
    expect(await address.getByText('Lucía').count()).toBe(0)
    expect(await page.locator('ul.thumbnails').count()).toBe(0)
    expect(await page.getByRole('button', { name: 'Borrar datos personales' }).count()).toBe(0)
    const erased = await letterRow()
    expect(erased.personalDataErasedAt).toBeInstanceOf(Date)
    expect(erased.recipient).toMatchObject({ name: '', surname: '', address: '', country: 'ES' })
    expect(erased.message).toBe('')
    expect(await status.innerText()).toBe('Cancelada')
    expect(problems).toEqual([])
  })
})
