/**
 * After the mailbox, in the dashboard, in a real browser (Debian's chromium through
 * playwright-core): a letter's QR code and its scans, a letter the post brought back and the
 * address list it went on, and each campaign's results beside what GET /campaigns/{id}/stats
 * answers. The letters are made through the public API with a tracking URL, scheduled a day
 * ahead so that no worker moves them, then put where the floor would (printed in SQL, mailed
 * and returned through the admin API, scanned in SQL). Each page: no serious or critical axe-core
 * violation and no sideways scroll on a desktop and on a 390 px phone, no console error.
 *
 * With DASHBOARD_SCREENSHOTS=1 it also writes docs/dashboard/letter-tracking.png and
 * campaign-stats.png (the desktop's full page), for docs/dashboard.md.
 */
import { mkdir, readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { describe, expect, vi } from 'vitest'
import { inArray, sql } from 'drizzle-orm'
import type { Browser, Page } from 'playwright-core'
import sharp from 'sharp'
import { letters } from '@letters/db'
import { adminAccount } from '../support/accounts.js'
import { newUser, type Credentials } from '../support/dashboard.js'
import { adminCampaign, adminClient, publicClient } from '../support/gateway.js'
import { until } from '../support/wait.js'
import { DESKTOP, dashboardTest, heading, signedInTab, unexpected } from '../support/dashboard-browser.js'
import type { Pipeline } from '../support/pipeline.js'

const axeSource = readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')
const SCREENSHOTS = process.env.DASHBOARD_SCREENSHOTS === '1' ? new URL('../../docs/dashboard/', import.meta.url) : undefined

/** A common phone's width, a little wider than the pages test's. */
const PHONE = { width: 390, height: 844 }

const TRACKING_URL = 'https://tienda.example.com/gracias?cupon={{cupon}}'

const recipients = {
  lucia: { name: 'Lucía', surname: 'García Romero', address: 'Calle Mayor 12, 3.º B', zip: '28013', city: 'Madrid', province: 'Madrid', country: 'ES' },
  jorge: { name: 'Jorge', surname: 'Pérez Ortega', address: 'Calle Sierpes 4', zip: '41004', city: 'Sevilla', province: 'Sevilla', country: 'ES' },
  carmen: { name: 'Carmen', surname: 'Ruiz Etxeberria', address: 'Gran Vía 21', zip: '48001', city: 'Bilbao', province: 'Bizkaia', country: 'ES' },
  marta: { name: 'Marta', surname: 'Gil', address: 'Calle Larios 5', zip: '29005', city: 'Málaga', province: 'Málaga', country: 'ES' },
}

/**
 * An account with a campaign whose letters carry a QR code: Lucía's mailed and scanned three
 * times, Jorge's mailed and scanned once, Carmen's mailed and returned (she moved), Marta's
 * still scheduled. Its owner and a viewer, invited and with their passwords set.
 */
async function trackedAccount(pipeline: Pipeline) {
  const app = pipeline.app
  const admin = adminClient(app)
  const account = await adminAccount(app, 100, 'Ana de Papelería Luna', { name: 'Papelería Luna' })
  const campaignId = await adminCampaign(app, account, { name: 'Bienvenida de otoño', trackingUrl: TRACKING_URL })
  const client = publicClient(app, account.apiKey)
  // A day ahead: scheduled, so that neither the address check nor the floor moves them while the test does.
  const sendAt = new Date(Date.now() + 26 * 3_600_000).toISOString()
  const ids = {} as Record<keyof typeof recipients, string>
  for (const [who, recipient] of Object.entries(recipients) as [keyof typeof recipients, (typeof recipients)['lucia']][]) {
    const response = await client.post('/card', { campaignId, ...recipient, variables: { nombre: recipient.name, cupon: 'OTONO10' }, sendAt })
    expect(response.statusCode, response.body).toBe(200)
    ids[who] = response.json<{ cardId: string }>().cardId
  }
  const mailed = [ids.lucia, ids.jorge, ids.carmen]
  // Printed, as the floor would leave them after their day (the clock and the printer take minutes).
  await app.db.update(letters).set({ status: 'printed', sendAt: null }).where(inArray(letters.id, mailed))
  for (const id of mailed) expect((await admin.post(`/admin/cards/${id}/mailed`)).statusCode).toBe(200)
  const returned = await admin.post(`/admin/cards/${ids.carmen}/returned`, { reason: 'moved' })
  expect(returned.statusCode, returned.body).toBe(200)
  // The scans, as the QR link would have counted them.
  await app.db.execute(sql`UPDATE letters SET qr_scans = 3, first_scanned_at = '2026-11-20T10:15:00Z', last_scanned_at = '2026-11-24T18:40:00Z'
    WHERE id = ${ids.lucia}`)
  await app.db.execute(sql`UPDATE letters SET qr_scans = 1, first_scanned_at = now(), last_scanned_at = now() WHERE id = ${ids.jorge}`)

  const owner = await newUser(app, account.id, 'owner', { email: `ana-${crypto.randomUUID().slice(0, 8)}@papelerialuna.es` })
  const viewer = await newUser(app, account.id, 'viewer', { email: `lectura-${crypto.randomUUID().slice(0, 8)}@gestoria-sur.es` })
  return { account, campaignId, ids, client, owner, viewer }
}

const it = dashboardTest({ label: 'dashboard-tracking' }).extend('tracked', { scope: 'file' }, ({ pipeline }) => trackedAccount(pipeline))

// A browser drawing each page twice, with axe-core, on a 2-core machine beside other files.
vi.setConfig({ testTimeout: 180_000 })

/** The page drawn and settled: its title, nothing loading, every image loaded. */
async function settled(page: Page, title: string) {
  await heading(page, title).waitFor()
  await until('nothing loading', async () => (await page.locator('.loading').count()) === 0)
  await until('the images loaded', () => page.evaluate<boolean>('[...document.images].every((image) => image.complete && image.naturalWidth > 0)'))
  await page.evaluate('document.fonts.ready.then(() => true)')
}

/** axe-core's violations of impact serious or critical, one line each. */
async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated rather than added as a <script>: the pages' policy (script-src 'self') refuses inline scripts.
  if (!(await page.evaluate<boolean>("'axe' in window"))) await page.evaluate(await axeSource)
  const violations = await page.evaluate<Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: string[] }> }>>(
    'axe.run().then((results) => results.violations)',
  )
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.impact} ${violation.id} (${violation.help}): ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`)
}

/**
 * The page at `path` as `who` sees it on a desktop and on a phone: `check` run on each, then
 * axe-core and the page's width; the desktop's full page written to docs/dashboard/`screenshot`
 * when asked. What was wrong, one line each.
 */
async function onBothScreens(
  browser: Browser,
  baseUrl: string,
  who: Credentials,
  shown: { path: string; title: string; screenshot?: string },
  check: (page: Page) => Promise<void>,
): Promise<string[]> {
  const findings: string[] = []
  for (const [device, viewport] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    const { page, problems } = await signedInTab(browser, baseUrl, who, viewport)
    await page.goto(shown.path)
    await settled(page, shown.title)
    await check(page)
    findings.push(...(await seriousViolations(page)).map((violation) => `${device}: ${violation}`))
    const width = await page.evaluate<number>('document.documentElement.scrollWidth')
    if (width > viewport.width) findings.push(`${device}: the page is ${width} px wide, it scrolls sideways`)
    if (SCREENSHOTS && shown.screenshot && device === 'desktop') {
      await mkdir(SCREENSHOTS, { recursive: true })
      const png = await page.screenshot({ fullPage: true, scale: 'css', animations: 'disabled', caret: 'hide' })
      // 256 colours: a third of the bytes, and the same page to the eye.
      await sharp(png).png({ palette: true, effort: 10, compressionLevel: 9 }).toFile(new URL(shown.screenshot, SCREENSHOTS).pathname)
    }
    findings.push(...unexpected(problems).map((problem) => `${device}: ${problem}`))
  }
  return findings
}

/** A date as the page writes it, by the browser's own Intl (its locale and time zone are the context's). */
const shownDate = (page: Page, iso: string) =>
  page.evaluate((at) => new Intl.DateTimeFormat('es-ES', { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(at)), iso)

/** The facts of a section (its <dt> and <dd>), as pairs of text. */
const factsOf = (page: Page, sectionHeading: string) =>
  page
    .locator('section', { has: page.getByRole('heading', { level: 2, name: sectionHeading, exact: true }) })
    .locator('dl > div')
    .evaluateAll((rows) => rows.map((row) => [row.querySelector('dt')?.textContent?.trim(), row.querySelector('dd')?.textContent?.trim()]))

describe('a letter’s QR code', () => {
  it('shows where it leads, its scans and its first and last scan; a letter not yet scanned says so', async ({ baseUrl, browser, tracked }) => {
    const card = (await tracked.client.get(`/cards/${tracked.ids.lucia}`)).json<{
      tracking: { url: string; scans: number; firstScannedAt: string; lastScannedAt: string }
    }>()
    expect(card.tracking).toEqual({
      url: 'https://tienda.example.com/gracias?cupon=OTONO10',
      scans: 3,
      firstScannedAt: '2026-11-20T10:15:00.000Z',
      lastScannedAt: '2026-11-24T18:40:00.000Z',
    })
    const findings = await onBothScreens(
      browser,
      baseUrl,
      tracked.owner,
      { path: `/dashboard/cartas/${tracked.ids.lucia}`, title: 'Carta para Lucía García Romero', screenshot: 'letter-tracking.png' },
      async (page) => {
        expect(await factsOf(page, 'Código QR')).toEqual([
          ['Lleva a', card.tracking.url],
          ['Escaneos', '3 escaneos'],
          ['Primer escaneo', await shownDate(page, card.tracking.firstScannedAt)],
          ['Último escaneo', await shownDate(page, card.tracking.lastScannedAt)],
        ])
        // The destination is text: no link from the dashboard to the client's site.
        expect(await page.getByRole('link', { name: /tienda\.example\.com/ }).count()).toBe(0)
        await expect.poll(() => page.locator('.letter-status .badge').innerText()).toBe('Enviada')
      },
    )
    expect(findings).toEqual([])

    const { page, problems } = await signedInTab(browser, baseUrl, tracked.owner)
    await page.goto(`/dashboard/cartas/${tracked.ids.marta}`)
    await settled(page, 'Carta para Marta Gil')
    expect(await factsOf(page, 'Código QR')).toEqual([
      ['Lleva a', 'https://tienda.example.com/gracias?cupon=OTONO10'],
      ['Escaneos', 'Aún no se ha escaneado'],
    ])
    expect(unexpected(problems)).toEqual([])
  })
})

describe('a returned letter', () => {
  it('shows when and why it came back, is «Devuelta» in the list and its filter, and its address is on the list a viewer reads and an owner lifts', async ({
    baseUrl,
    browser,
    tracked,
  }) => {
    const card = (await tracked.client.get(`/cards/${tracked.ids.carmen}`)).json<{ status: string; returnedAt: string; returnReason: string }>()
    expect(card).toMatchObject({ status: 'returned', returnReason: 'moved' })
    const findings = await onBothScreens(
      browser,
      baseUrl,
      tracked.owner,
      { path: `/dashboard/cartas/${tracked.ids.carmen}`, title: 'Carta para Carmen Ruiz Etxeberria' },
      async (page) => {
        await expect.poll(() => page.locator('.letter-return').innerText()).toBe(`Devuelta el ${await shownDate(page, card.returnedAt)} — Se ha mudado`)
        expect(await page.locator('.letter-status .badge').innerText()).toBe('Devuelta')
        expect(await page.locator('.timeline-status').allInnerTexts()).toEqual(['Programada', 'Enviada', 'Devuelta'])
      },
    )
    expect(findings).toEqual([])

    // Cartas: the status in the filter and in the table, and the address list below.
    const listFindings = await onBothScreens(browser, baseUrl, tracked.owner, { path: '/dashboard/cartas?estado=returned', title: 'Cartas' }, async (page) => {
      expect(await page.getByLabel('Estado').locator('option:checked').innerText()).toBe('Devuelta')
      const rows = page.getByRole('region', { name: 'Cartas, de la más reciente a la más antigua' }).locator('tbody tr')
      expect(await rows.count()).toBe(1)
      expect(await rows.first().locator('.badge').innerText()).toBe('Devuelta')
      const addresses = page.getByRole('region', { name: 'Direcciones devueltas' })
      expect(await addresses.locator('tbody tr').count()).toBe(1)
      expect(await addresses.locator('tbody td').allInnerTexts()).toEqual(expect.arrayContaining(['48001', 'España', 'Se ha mudado']))
    })
    expect(listFindings).toEqual([])

    // A viewer reads the list, without the button.
    const viewer = await signedInTab(browser, baseUrl, tracked.viewer)
    await viewer.page.goto('/dashboard/cartas')
    await settled(viewer.page, 'Cartas')
    await viewer.page.getByRole('region', { name: 'Direcciones devueltas' }).waitFor()
    expect(await viewer.page.getByRole('button', { name: /Quitar de la lista/ }).count()).toBe(0)
    expect(unexpected(viewer.problems)).toEqual([])

    // The owner takes it off, after saying yes: the API's list is empty, and so is the page's.
    const { page, problems } = await signedInTab(browser, baseUrl, tracked.owner)
    await page.goto('/dashboard/cartas#direcciones-devueltas')
    await settled(page, 'Cartas')
    await page.getByRole('button', { name: 'Quitar de la lista: 48001 (España)' }).click()
    const dialog = page.getByRole('dialog', { name: '¿Quitar esta dirección de la lista?' })
    await dialog.getByRole('button', { name: 'Sí, quitarla' }).click()
    await dialog.waitFor({ state: 'hidden' })
    await page.getByRole('heading', { name: 'Direcciones devueltas' }).waitFor({ state: 'detached' })
    expect((await tracked.client.get('/suppressions')).json()).toEqual({ data: [], nextCursor: null })
    expect(unexpected(problems)).toEqual([])
  })
})

describe('Campañas', () => {
  it('shows each campaign’s results as GET /campaigns/{id}/stats counts them', async ({ baseUrl, browser, tracked }) => {
    const response = await tracked.client.get(`/campaigns/${tracked.campaignId}/stats`)
    expect(response.statusCode, response.body).toBe(200)
    const stats = response.json<{ sent: number; mailed: number; returned: number; tracked: number; scanned: number; scans: number; scanRate: number }>()
    expect(stats).toMatchObject({ sent: 4, mailed: 3, returned: 1, tracked: 4, scanned: 2, scans: 4 })
    const findings = await onBothScreens(
      browser,
      baseUrl,
      tracked.owner,
      { path: '/dashboard/campanas', title: 'Campañas', screenshot: 'campaign-stats.png' },
      async (page) => {
        const campaign = page.locator('section', { has: page.getByRole('heading', { level: 2, name: 'Bienvenida de otoño' }) })
        const rate = await page.evaluate(
          (share) => new Intl.NumberFormat('es-ES', { style: 'percent', maximumFractionDigits: 1 }).format(share),
          stats.scanRate,
        )
        expect(rate).toBe('66,7\u00a0%')
        const figures = await campaign
          .locator('.campaign-results > div')
          .evaluateAll((rows) => rows.map((row) => [row.querySelector('dt')?.textContent, row.querySelector('dd')?.textContent]))
        expect(figures).toEqual([
          ['Enviadas', String(stats.sent)],
          ['En Correos', String(stats.mailed)],
          ['Devueltas', String(stats.returned)],
          ['Escaneadas', String(stats.scanned)],
          ['Tasa de escaneo', rate],
        ])
        // Side by side on a desktop, a line each on a phone: never two or three to a line.
        const boxes = await campaign.locator('.campaign-results > div').evaluateAll((rows) => rows.map((row) => row.getBoundingClientRect()))
        const desktop = page.viewportSize()!.width >= 1024
        expect(new Set(boxes.map((box) => Math.round(desktop ? box.top : box.left))).size).toBe(1)
        expect(await campaign.getByText(/código QR; 4 escaneos en total/).innerText()).toMatch(/^4 cartas llevan código QR; 4 escaneos en total\./)
      },
    )
    expect(findings).toEqual([])
  })
})
