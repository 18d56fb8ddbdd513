/**
 * Every page of the dashboard in a real browser (Debian's chromium through playwright-core), on
 * the running stack with an account that has been used for a while: letters in several statuses,
 * a campaign, designs with artwork, movements, a team, keys and a webhook. Each page, on a desktop
 * (1280×800) and on a phone (375×740): no serious or critical axe-core violation, no console
 * error, no sideways scroll on the phone, and Tab reaches its main action with a visible focus ring.
 *
 * With DASHBOARD_SCREENSHOTS=1 it also writes each page's screenshots to docs/dashboard/
 * (<page>-desktop.png, the full page; <page>-phone.png, the first screen), for docs/dashboard.md.
 */
import { mkdir, readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { describe, expect, vi } from 'vitest'
import type { Browser, Locator, Page } from 'playwright-core'
import sharp from 'sharp'
import { startWebhookWorker } from '@letters/webhook-worker/worker'
import { cardSvg, logoSvg, signatureSvg } from '../support/artwork.js'
import { inviteThroughAdmin, newUser } from '../support/dashboard.js'
import { adminClient, publicClient } from '../support/gateway.js'
import { silentLog } from '../support/pipeline.js'
import { until } from '../support/wait.js'
import { startWebhookReceiver } from '../support/webhook-receiver.js'
import { DESKTOP, PHONE, dashboardTest, openTab, signedInTab } from '../support/dashboard-browser.js'
import type { Pipeline } from '../support/pipeline.js'

const axeSource = readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')
const SCREENSHOTS = process.env.DASHBOARD_SCREENSHOTS === '1' ? new URL('../../docs/dashboard/', import.meta.url) : undefined

/** The recipients of the account's letters: Spanish names and real postcodes, one abroad. */
const recipients = {
  lucia: { name: 'Lucía', surname: 'García Romero', address: 'Calle Mayor 12, 3.º B', zip: '28013', city: 'Madrid', province: 'Madrid', country: 'ES' },
  jorge: { name: 'Jorge', surname: 'Pérez Ortega', address: 'Calle Sierpes 4', zip: '41004', city: 'Sevilla', province: 'Sevilla', country: 'ES' },
  carmen: { name: 'Carmen', surname: 'Ruiz Etxeberria', address: 'Gran Vía 21', zip: '48001', city: 'Bilbao', province: 'Bizkaia', country: 'ES' },
  claire: { name: 'Claire', surname: 'Dubois', company: 'Librairie du Marais', address: '14 rue des Archives', zip: '75004', city: 'Paris', country: 'FR' },
  pablo: { name: 'Pablo', surname: 'Santos', address: '...', zip: '46001', city: 'Valencia', province: 'Valencia', country: 'ES' },
  elena: { name: 'Elena', surname: 'Navarro', address: 'Paseo de Gracia 60', zip: '08007', city: 'Barcelona', province: 'Barcelona', country: 'ES' },
  tomas: { name: 'Tomás', surname: 'Vidal', address: 'Calle Real 3', zip: '15003', city: 'A Coruña', province: 'A Coruña', country: 'ES' },
}

/**
 * The account the pages show, made as ops and a client would: through the admin API (account,
 * designs with artwork, a sender with its return address, a signature, a campaign, a top-up, the
 * team) and the public API (a webhook endpoint, letters), then left to the real workers.
 */
async function usedAccount(pipeline: Pipeline, onCleanup: (fn: () => Promise<void>) => void) {
  const admin = adminClient(pipeline.app)
  const created = async (response: Awaited<ReturnType<typeof admin.post>>) => {
    expect(response.statusCode, response.body).toBeLessThan(300)
    return response.json<{ id: string; apiKey: string }>()
  }
  const account = await created(await admin.post('/admin/accounts', { name: 'Papelería Luna', credits: 150 }))
  const under = `/admin/accounts/${account.id}`
  const summer = await created(await admin.post(`${under}/card-designs`, { name: 'Tarjeta verano' }))
  await created(await admin.put(`${under}/card-designs/${summer.id}/artwork`, cardSvg('A6', { fill: '#2e7d5b' }), 'image/svg+xml'))
  const christmas = await created(await admin.post(`${under}/card-designs`, { name: 'Tarjeta Navidad' }))
  await created(await admin.put(`${under}/card-designs/${christmas.id}/artwork`, cardSvg('A6', { fill: '#9b2c2c' }), 'image/svg+xml'))
  const white = await created(
    await admin.post(`${under}/envelope-designs`, { name: 'Sobre blanco', format: 'C6', stockCode: 'C6-BLANCO', paperColor: '#FFFFFF' }),
  )
  await created(await admin.put(`${under}/envelope-designs/${white.id}/artwork`, logoSvg, 'image/svg+xml'))
  await created(await admin.post(`${under}/envelope-designs`, { name: 'Sobre kraft', format: 'C6', stockCode: 'C6-KRAFT', paperColor: '#C8A27A' }))
  const sender = await created(
    await admin.post(`${under}/senders`, {
      name: 'Ana de Papelería Luna',
      returnAddress: { name: 'Papelería Luna', address: 'Calle Sierpes 4', zip: '41004', city: 'Sevilla', province: 'Sevilla', country: 'ES' },
    }),
  )
  const signature = await created(await admin.post(`${under}/signatures`, { name: 'Firma de Ana' }))
  await created(await admin.put(`${under}/signatures/${signature.id}/artwork`, signatureSvg, 'image/svg+xml'))
  const campaign = await created(
    await admin.post(`${under}/campaigns`, {
      name: 'Bienvenida de otoño',
      cardDesignId: summer.id,
      envelopeDesignId: white.id,
      senderId: sender.id,
      signatureId: signature.id,
      message: 'Hola {{nombre}}:\n\nGracias por tu primer pedido. Con el código {{cupon}} tienes un 10 % en el siguiente.\n\nUn abrazo, Ana',
      variables: [
        { name: 'nombre', maxSize: 40, defaultValue: 'amigo', example: 'Lucía' },
        { name: 'cupon', maxSize: 10, defaultValue: null, example: 'OTONO10' },
      ],
    }),
  )
  await created(await admin.post(`${under}/credits`, { amount: 100, reason: 'Recarga de noviembre' }))

  // A webhook endpoint that answers every delivery, and a worker that delivers them.
  const worker = startWebhookWorker({ config: pipeline.config, db: pipeline.app.db, log: silentLog })
  const receiver = await startWebhookReceiver(() => 204)
  onCleanup(async () => {
    await worker.close()
    await receiver.close()
  })
  const client = publicClient(pipeline.app, account.apiKey)
  expect((await client.post('/webhooks', { url: receiver.url, events: ['letter.printed', 'letter.mailed', 'letter.address_rejected'] })).statusCode).toBe(201)

  const designs = { cardDesignId: summer.id, envelopeDesignId: white.id, senderId: sender.id, signatureId: signature.id }
  const send = async (recipient: Record<string, string>, extra: Record<string, unknown> = {}) => {
    const response = await client.post('/single', {
      ...designs,
      inkColor: 'blue',
      message: `Querida ${recipient.name}:\n\nGracias por tu pedido. Esperamos que disfrutes de tus cuadernos nuevos.\n\nUn abrazo,`,
      ...recipient,
      ...extra,
    })
    expect(response.statusCode, response.body).toBe(200)
    return response.json<{ cardId: string }>().cardId
  }
  const printed = {
    lucia: await send(recipients.lucia),
    jorge: await send(recipients.jorge, { cardDesignId: christmas.id, inkColor: 'black' }),
    carmen: await send(recipients.carmen),
    claire: await send(recipients.claire, { message: 'Chère Claire, merci pour votre commande. À bientôt à Séville !' }),
  }
  const rejected = await send(recipients.pablo)
  const inADay = new Date(Date.now() + 26 * 3_600_000).toISOString()
  await send(recipients.elena, { sendAt: inADay })
  const cancelled = await send(recipients.tomas, { sendAt: inADay })
  expect((await client.delete(`/cards/${cancelled}`)).statusCode).toBe(200)
  const bulk = await client.post(
    `/cards/bulk?campaignId=${campaign.id}`,
    'name,surname,address,zip,city,country,nombre,cupon\nMarta,Gil,Calle Larios 5,29005,Málaga,ES,Marta,OTONO10\nIker,Etxebarria,Calle Dato 8,01005,Vitoria-Gasteiz,ES,Iker,OTONO10\n',
    { 'content-type': 'text/csv' },
  )
  expect(bulk.statusCode, bulk.body).toBe(200)

  const statusOf = async (id: string) => (await client.get(`/cards/${id}`)).json<{ status: string }>().status
  for (const id of Object.values(printed))
    await until(`letter ${id} printed`, async () => (await statusOf(id)) === 'printed', { timeoutMs: 120_000, everyMs: 200 })
  await until('the bad address rejected', async () => (await statusOf(rejected)) === 'address_rejected', { timeoutMs: 120_000, everyMs: 200 })
  expect((await admin.post(`/admin/cards/${printed.carmen}/mailed`)).statusCode).toBe(200)
  // The webhook deliveries of those letters, so that the endpoint has its history.
  await until('the deliveries', () => receiver.received.length >= 6, { timeoutMs: 60_000 })

  // The team: the owner who signs in, a member, and a viewer who has not followed the link yet.
  const owner = await newUser(pipeline.app, account.id, 'owner', { email: 'ana@papelerialuna.es' })
  await newUser(pipeline.app, account.id, 'member', { email: 'jorge@papelerialuna.es' })
  const pending = await inviteThroughAdmin(pipeline.app, account.id, 'lectura@gestoria-sur.es', 'viewer')
  return { accountId: account.id, owner, letterId: printed.lucia, invitation: new URL(pending.invitationUrl) }
}

const it = dashboardTest({ label: 'dashboard-pages', env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_ALLOW_HTTP: 'true' } })
  // The first test to ask waits for it: the account made and its letters printed.
  .extend('used', { scope: 'file' }, async ({ pipeline }, { onCleanup }) => usedAccount(pipeline, onCleanup))

// A browser drawing every page twice, with axe-core, on a 2-core machine beside three other files.
vi.setConfig({ testTimeout: 180_000 })

type Account = Awaited<ReturnType<typeof usedAccount>>

interface DashboardPage {
  /** The screenshots' name. */
  name: string
  /** Its address, from what the account has. */
  path: (account: Account) => string
  /** Its <h1>. */
  title: string
  signedIn: boolean
  /** The action Tab must reach, with a visible focus ring. */
  action: (page: Page) => Locator
  /** What to do once it is shown, before it is checked (the review of a CSV). */
  prepare?: (page: Page) => Promise<void>
}

const button = (name: string) => (page: Page) => page.getByRole('button', { name, exact: true })
const link = (name: string) => (page: Page) => page.getByRole('link', { name, exact: true })

const pages: DashboardPage[] = [
  { name: 'inicio', path: () => '/dashboard/', title: 'Inicio', signedIn: true, action: link('Ver todas las cartas') },
  { name: 'cartas', path: () => '/dashboard/cartas', title: 'Cartas', signedIn: true, action: button('Filtrar') },
  {
    name: 'carta',
    path: (account) => `/dashboard/cartas/${account.letterId}`,
    title: 'Carta para Lucía García Romero',
    signedIn: true,
    action: button('Borrar datos personales'),
  },
  {
    name: 'nueva-carta',
    path: () => '/dashboard/nueva',
    title: 'Nueva carta',
    signedIn: true,
    action: button('Enviar carta'),
    // Half written, as a person leaves it to look at the preview.
    async prepare(page) {
      await page.getByLabel('Firma', { exact: true }).selectOption({ label: 'Firma de Ana' })
      await page.getByLabel('Nombre', { exact: true }).fill('Lucía')
      await page.getByLabel('Apellidos').fill('García Romero')
      await page.getByLabel('Dirección').fill('Calle Mayor 12, 3.º B')
      await page.getByLabel('Código postal').fill('28013')
      await page.getByLabel('Ciudad').fill('Madrid')
      await page
        .getByLabel('Mensaje')
        .fill('Querida Lucía:\n\nGracias por confiar en nosotros un año más. Te esperamos en la tienda para enseñarte los cuadernos nuevos.\n\nUn abrazo,')
      // The preview is asked for 600 ms after the last change of the card: the next one asked is of this letter.
      const asked = await page.waitForRequest((request) => new URL(request.url()).pathname === '/single/preview')
      expect((await asked.response())?.ok()).toBe(true)
      await page.locator('.preview-frame[aria-busy="false"] img[alt="Vista previa"]').waitFor()
      await page.evaluate('document.activeElement?.blur(); window.scrollTo(0, 0)')
    },
  },
  { name: 'envio-masivo', path: () => '/dashboard/masivo', title: 'Envío masivo', signedIn: true, action: (page) => page.getByLabel('Archivo CSV') },
  {
    name: 'envio-masivo-revision',
    path: () => '/dashboard/masivo',
    title: 'Envío masivo',
    signedIn: true,
    action: button('Enviar 2 cartas'),
    async prepare(page) {
      const csv =
        'Nombre,Apellidos,Dirección,Código postal,Ciudad,País,cupon\nLaura,Martín,Calle Alcalá 100,28009,Madrid,España,OTONO10\nDiego,Fernández,Calle Uría 10,33003,Oviedo,España,OTONO10\nNuria,Campos,Rambla 7,ABCDE,Girona,España,OTONO10\n'
      await page.getByLabel('Archivo CSV').setInputFiles({ name: 'clientes-noviembre.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) })
      await page.getByRole('button', { name: 'Revisar' }).click()
      await page.getByRole('region', { name: 'Filas revisadas' }).waitFor()
      // The review at the top of a phone's screen.
      await page.getByRole('heading', { name: '3. Revisión' }).evaluate((heading) => heading.scrollIntoView({ block: 'start' }))
    },
  },
  { name: 'campanas', path: () => '/dashboard/campanas', title: 'Campañas', signedIn: true, action: link('Hacer un envío masivo') },
  { name: 'disenos', path: () => '/dashboard/disenos', title: 'Diseños', signedIn: true, action: link('Diseños') },
  { name: 'saldo', path: () => '/dashboard/saldo', title: 'Saldo', signedIn: true, action: link('Descargar CSV') },
  { name: 'desarrolladores', path: () => '/dashboard/desarrolladores', title: 'Desarrolladores', signedIn: true, action: button('Añadir endpoint') },
  { name: 'equipo', path: () => '/dashboard/equipo', title: 'Equipo', signedIn: true, action: button('Invitar') },
  { name: 'no-encontrada', path: () => '/dashboard/no-existe', title: 'Página no encontrada', signedIn: true, action: link('Inicio') },
  { name: 'entrar', path: () => '/dashboard/', title: 'Entrar en tu cuenta', signedIn: false, action: button('Entrar') },
  {
    name: 'invitacion',
    path: (account) => `${account.invitation.pathname}${account.invitation.hash}`,
    title: 'Crea tu acceso',
    signedIn: false,
    action: button('Crear acceso'),
  },
]

interface AxeViolation {
  id: string
  impact: string | null
  help: string
  nodes: Array<{ target: string[] }>
}

/** axe-core's violations of impact serious or critical, one line each. */
async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated rather than added as a <script>: the pages' policy (script-src 'self') refuses inline scripts, as it should.
  if (!(await page.evaluate<boolean>("'axe' in window"))) await page.evaluate(await axeSource)
  const violations = await page.evaluate<AxeViolation[]>('axe.run().then((results) => results.violations)')
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.impact} ${violation.id} (${violation.help}): ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`)
}

/** The page drawn and settled: its title, nothing loading, every image and font loaded. */
async function settled(page: Page, title: string) {
  await page.getByRole('heading', { level: 1, name: title, exact: true }).waitFor()
  await until('nothing loading', async () => (await page.locator('.loading').count()) === 0)
  await until('the images loaded', () => page.evaluate<boolean>('[...document.images].every((image) => image.complete && image.naturalWidth > 0)'))
  await page.evaluate('document.fonts.ready.then(() => true)')
}

/**
 * Tabs from the top of the page until `target` has the focus, checking that each element the
 * focus enters shows a focus ring (an outline of 2 px or more, or a box shadow); returns the tabs
 * taken. The later stops inside one element (a date's day, month, year and calendar button) are
 * the browser's own to draw.
 */
async function tabTo(page: Page, target: Locator, most = 80) {
  await page.evaluate('document.activeElement?.blur()')
  let previous: unknown = null
  for (let tabs = 1; tabs <= most; tabs++) {
    await page.keyboard.press('Tab')
    const focus = page.locator('*:focus').first()
    if ((await focus.count()) === 0) continue
    const focused = await focus.elementHandle()
    const entered = !(await focused.evaluate((element, before) => element === before, previous))
    previous = focused
    if (entered) {
      const seen = await focused.evaluate((element) => {
        const style = element.ownerDocument.defaultView!.getComputedStyle(element)
        const ring = (style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2) || style.boxShadow !== 'none'
        const name = element.getAttribute('aria-label') ?? element.textContent?.trim() ?? ''
        return { what: `${element.tagName.toLowerCase()} «${name.slice(0, 40)}» (outline ${style.outlineStyle} ${style.outlineWidth})`, ring }
      })
      expect(seen.ring, `a visible focus ring on ${seen.what}`).toBe(true)
    }
    if (await target.evaluate((element) => element === element.ownerDocument.activeElement)) return tabs
  }
  throw new Error(`${most} tabs did not reach the page's main action`)
}

/** A fresh tab, signed in as the account's owner or not; its console's warnings count as problems too. */
const openPage = (browser: Browser, baseUrl: string, account: Account, signedIn: boolean, viewport: typeof DESKTOP) =>
  signedIn ? signedInTab(browser, baseUrl, account.owner, viewport, { warnings: true }) : openTab(browser, baseUrl, viewport, { warnings: true })

describe('every page of the dashboard', () => {
  it.for(pages)(
    '$name: no serious axe violation on a desktop and a phone, no console error, no sideways scroll on the phone, Tab reaches its main action with a focus ring',
    async (shown, { baseUrl, browser, used: account }) => {
      const findings: string[] = []
      for (const [device, viewport] of [
        ['desktop', DESKTOP],
        ['phone', PHONE],
      ] as const) {
        const { page, problems } = await openPage(browser, baseUrl, account, shown.signedIn, viewport)
        await page.goto(shown.path(account))
        await settled(page, shown.title)
        await shown.prepare?.(page)
        await settled(page, shown.title)

        findings.push(...(await seriousViolations(page)).map((violation) => `${device}: ${violation}`))
        if (device === 'phone') {
          const width = await page.evaluate<number>('document.documentElement.scrollWidth')
          if (width > PHONE.width) findings.push(`phone: the page is ${width} px wide, it scrolls sideways`)
          if (shown.signedIn) {
            // The menu, folded behind its button, opens and shows the links.
            const menu = page.getByRole('button', { name: 'Menú' })
            expect(await menu.getAttribute('aria-expanded')).toBe('false')
            expect(await page.getByRole('navigation', { name: 'Principal' }).getByRole('link', { name: 'Cartas' }).isVisible()).toBe(false)
          }
        }
        if (SCREENSHOTS) {
          await mkdir(SCREENSHOTS, { recursive: true })
          const png = await page.screenshot({ fullPage: device === 'desktop', scale: 'css', animations: 'disabled', caret: 'hide' })
          // 256 colours: a third of the bytes, and the same page to the eye.
          await sharp(png)
            .png({ palette: true, effort: 10, compressionLevel: 9 })
            .toFile(new URL(`${shown.name}-${device}.png`, SCREENSHOTS).pathname)
        }
        if (device === 'desktop') await tabTo(page, shown.action(page))
        else if (shown.signedIn) {
          const menu = page.getByRole('button', { name: 'Menú' })
          await menu.click()
          await page.getByRole('navigation', { name: 'Principal' }).getByRole('link', { name: 'Cartas' }).waitFor()
          findings.push(...(await seriousViolations(page)).map((violation) => `phone, menu open: ${violation}`))
          const width = await page.evaluate<number>('document.documentElement.scrollWidth')
          if (width > PHONE.width) findings.push(`phone, menu open: the page is ${width} px wide, it scrolls sideways`)
        }
        findings.push(...problems.map((problem) => `${device}: ${problem}`))
      }
      expect(findings).toEqual([])
    },
  )
})

describe('the words of the dashboard', () => {
  /** English words a Spanish page has no use for (codes and reasons the API stores in English, untranslated). */
  const english = /\b(the|by|of|and|with|from|cancelled|rejected|opening|credits|address|client|refund|charge|top[ _]up|pending|delivered|retrying|failed)\b/i

  it('are Spanish on every signed-in page: no reason, status or label shown in English (a refund’s reason and the opening credits included)', async ({
    baseUrl,
    browser,
    used: account,
  }) => {
    const { page, problems } = await openPage(browser, baseUrl, account, true, DESKTOP)
    const found: string[] = []
    for (const shown of pages.filter((candidate) => candidate.signedIn)) {
      await page.goto(shown.path(account))
      await settled(page, shown.title)
      await shown.prepare?.(page)
      const lines = (await page.locator('main').innerText()).split('\n').map((line) => line.trim())
      found.push(...lines.filter((line) => english.test(line)).map((line) => `${shown.name}: «${line}»`))
    }
    expect(found).toEqual([])
    expect(problems).toEqual([])
  })
})
