/**
 * A letter's page in the dashboard (a real browser on the running stack) shows its proof's pages
 * as thumbnails, each named for what it is: for a preprinted card with artwork, the front (the
 * picture of the stock the floor loads), the handwriting and the envelope.
 */
import { mkdir } from 'node:fs/promises'
import { describe, expect, vi } from 'vitest'
import { cardSvg } from '../support/artwork.js'
import { adminAccount } from '../support/accounts.js'
import { DashboardBrowser, GOOD_PASSWORD, inviteThroughAdmin } from '../support/dashboard.js'
import { dashboardTest, heading, openTab } from '../support/dashboard-browser.js'
import { singleLetter } from '../support/factories.js'
import { adminClient, publicClient } from '../support/gateway.js'

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

    const email = `owner-${crypto.randomUUID().slice(0, 8)}@example.com`
    await new DashboardBrowser(app).accept(await inviteThroughAdmin(app, account.id, email, 'owner'))
    const { context, page, problems } = await openTab(browser, baseUrl)
    const session = await context.request.post(`${baseUrl}/session`, { data: { email, password: GOOD_PASSWORD }, headers: { origin: baseUrl } })
    expect(session.status(), await session.text()).toBe(200)

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
})
