/**
 * The dashboard in a real browser (Debian's chromium through playwright-core), on the running
 * stack: what an owner does with it. A letter written in "Nueva carta" and followed until the
 * production worker prints it, a CSV reviewed and sent, an API key made, used and revoked, and a
 * failed webhook delivery sent again. Each test checks what the page shows and what the gateway
 * stored (letters, ledger, balance, keys, deliveries).
 */
import { describe, expect, onTestFinished, vi } from 'vitest'
import { and, eq } from 'drizzle-orm'
import type { Browser, Request } from 'playwright-core'
import { apiKeys, ledgerEntries, letters, type Db } from '@letters/db'
import { startWebhookWorker } from '@letters/webhook-worker/worker'
import { adminAccount } from '../support/accounts.js'
import { newUser } from '../support/dashboard.js'
import { singleLetter } from '../support/factories.js'
import { balanceOf } from '../support/ledger.js'
import { adminCampaign, publicClient } from '../support/gateway.js'
import { silentLog } from '../support/pipeline.js'
import { until } from '../support/wait.js'
import { startWebhookReceiver } from '../support/webhook-receiver.js'
import { dashboardTest, failedLoad, heading, signedInTab, unexpected } from '../support/dashboard-browser.js'

const it = dashboardTest({
  label: 'dashboard-letters',
  // The receiver is a local HTTP server; its failed delivery's own retry is ten minutes away, so that the one seen is the page's.
  env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_RETRY_SCHEDULE: '600000', WEBHOOK_TIMEOUT_MS: '5000' },
})

// A browser on a 2-core machine beside three other files, and letters printed by the real worker: minutes, not seconds.
vi.setConfig({ testTimeout: 180_000 })

/**
 * A fresh account (its designs, sender, signature and `credits`) and its owner, signed in in a
 * new tab: invited through the admin API, the link followed over inject, the password typed in
 * POST /session from the browser's context.
 */
async function newAccountTab(app: Parameters<typeof adminAccount>[0], browser: Browser, baseUrl: string, credits: number) {
  const account = await adminAccount(app, credits, 'Papelería Luna', { name: 'Papelería Luna' })
  return { account, ...(await signedInTab(browser, baseUrl, await newUser(app, account.id))) }
}

const lettersOf = (db: Db, accountId: string) => db.select().from(letters).where(eq(letters.accountId, accountId))
const chargesOf = (db: Db, accountId: string) =>
  db
    .select({ letterId: ledgerEntries.letterId, amount: ledgerEntries.amount })
    .from(ledgerEntries)
    .where(and(eq(ledgerEntries.accountId, accountId), eq(ledgerEntries.kind, 'charge')))

describe('Nueva carta', () => {
  it('previews the card as it is typed, prices it by country, shows the API’s refusal beside its field, sends one letter for a double click and follows it until printed', async ({
    pipeline,
    baseUrl,
    browser,
  }) => {
    const { account, page, problems } = await newAccountTab(pipeline.app, browser, baseUrl, 50)
    const singles: Array<string | null> = []
    page.on('request', (request) => {
      if (request.method() === 'POST' && new URL(request.url()).pathname === '/single') singles.push(request.headers()['idempotency-key'] ?? null)
    })
    await page.goto('/dashboard/nueva')
    await heading(page, 'Nueva carta').waitFor()
    for (const label of ['Diseño de tarjeta', 'Diseño de sobre', 'Remitente', 'Firma', 'Letra', 'Tinta'])
      await page.getByLabel(label, { exact: true }).waitFor()

    // The preview: drawn once typing pauses, drawn again after more typing.
    const preview = page.getByRole('img', { name: 'Vista previa' })
    // Its pixels, read through a canvas (the page's policy lets it fetch nothing but its own origin, not a blob: URL).
    const previewBytes = () =>
      preview.evaluate((image) => {
        const canvas = image.ownerDocument.createElement('canvas')
        canvas.width = image.naturalWidth
        canvas.height = image.naturalHeight
        const context = canvas.getContext('2d')!
        context.drawImage(image, 0, 0)
        const pixels = context.getImageData(0, 0, canvas.width, canvas.height).data
        let sum = 0
        for (let index = 0; index < pixels.length; index += 1) sum = (sum * 31 + pixels[index]!) % 1_000_000_007
        return { src: image.src, size: `${canvas.width}x${canvas.height}`, sum }
      })
    const message = page.getByLabel('Mensaje')
    // A preview asked for after an edit has the whole edit in it (it is asked for 600 ms after the
    // last key): after each edit, wait for one of those to be answered and shown.
    const isPreview = (request: Request) => new URL(request.url()).pathname === '/single/preview'
    let askedSince: Set<Request> | undefined
    const answered = new Set<Request>()
    page.on('request', (request) => {
      if (isPreview(request)) askedSince?.add(request)
    })
    page.on('requestfinished', (request) => {
      if (isPreview(request)) answered.add(request)
    })
    const shownAfter = async (edit: () => Promise<void>) => {
      await edit()
      const asked = new Set<Request>()
      askedSince = asked
      await until('a preview asked for after the edit', () => [...asked].some((request) => answered.has(request)))
      askedSince = undefined
      await until(
        'the preview shown',
        async () => (await page.locator('.preview-frame[aria-busy="false"]').count()) === 1 && (await preview.evaluate((image) => image.complete)),
      )
      return previewBytes()
    }
    const first = await shownAfter(() => message.fill('Querida Lucía, gracias por tu pedido.'))
    expect(first.src).toMatch(/^blob:/)
    await message.press('End')
    const second = await shownAfter(() => message.pressSequentially(' ¡Hasta pronto, y feliz verano!'))
    expect(second.src).not.toBe(first.src)
    expect(second.sum === first.sum && second.size === first.size).toBe(false)

    // The cost, as the API charges it: 3 credits in Spain, 5 elsewhere.
    const cost = page.getByText(/^Coste:/)
    expect(await cost.innerText()).toBe('Coste: 3 créditos (envío en España)')
    await page.getByLabel('País').selectOption('FR')
    await until('the cost abroad', async () => (await cost.innerText()) === 'Coste: 5 créditos (envío fuera de España)')
    await page.getByLabel('País').selectOption('ES')
    await until('the cost in Spain', async () => (await cost.innerText()) === 'Coste: 3 créditos (envío en España)')

    await page.getByLabel('Nombre', { exact: true }).fill('Lucía')
    await page.getByLabel('Apellidos').fill('García')
    await page.getByLabel('Empresa').fill('Librería Alba')
    await page.getByLabel('Dirección').fill('Calle Mayor 1')
    await page.getByLabel('Código postal').fill('ABC12')
    await page.getByLabel('Ciudad').fill('Madrid')
    await page.getByLabel('Provincia').fill('Madrid')

    // A postcode the API refuses: its message beside the field, the focus on it, nothing charged.
    await page.getByRole('button', { name: 'Enviar carta' }).click()
    const zip = page.getByLabel('Código postal')
    const refusal = "El campo 'zip' ('ABC12') no es un código postal válido para ES"
    await page.locator('.field', { has: zip }).getByText(refusal, { exact: true }).waitFor()
    expect(await zip.getAttribute('aria-invalid')).toBe('true')
    expect(await zip.evaluate((input) => input.ownerDocument.getElementById(input.getAttribute('aria-describedby') ?? '')?.textContent)).toBe(refusal)
    await until('the focus on the postcode', () => zip.evaluate((input) => input === input.ownerDocument.activeElement))
    await page.getByRole('alert').getByText(`Revisa el campo marcado: ${refusal}`).waitFor()
    expect(await lettersOf(pipeline.app.db, account.id)).toEqual([])
    expect(await balanceOf(pipeline.app.db, account.id)).toBe(50)

    // Corrected, and sent with a double click: one letter, one charge.
    await zip.fill('28013')
    expect(await page.locator('.field', { has: zip }).getByText(refusal).count()).toBe(0)
    await page.getByRole('button', { name: 'Enviar carta' }).dblclick()
    await heading(page, 'Carta para Lucía García').waitFor()
    await page.getByText('Carta enviada. Aquí puedes seguir su estado.').waitFor()
    const sent = await lettersOf(pipeline.app.db, account.id)
    expect(sent).toHaveLength(1)
    const letter = sent[0]!
    expect(page.url()).toBe(`${baseUrl}/dashboard/cartas/${letter.id}`)
    expect(letter).toMatchObject({
      cost: 3,
      recipient: { name: 'Lucía', surname: 'García', company: 'Librería Alba', zip: '28013', city: 'Madrid', country: 'ES' },
    })
    expect(letter.message).toBe('Querida Lucía, gracias por tu pedido. ¡Hasta pronto, y feliz verano!')
    expect(await chargesOf(pipeline.app.db, account.id)).toEqual([{ letterId: letter.id, amount: -3 }])
    expect(await balanceOf(pipeline.app.db, account.id)).toBe(47)
    // Whatever reached the gateway for the second click carried the first one's key.
    const [refused, ...accepted] = singles
    expect(accepted.length).toBeGreaterThanOrEqual(1)
    expect(new Set(accepted).size).toBe(1)
    expect(accepted[0]).not.toBe(refused)

    // Printed by the real production worker; the page shows it after a reload.
    await until(
      'the letter printed',
      async () => (await pipeline.app.db.select({ status: letters.status }).from(letters).where(eq(letters.id, letter.id)))[0]?.status === 'printed',
      { timeoutMs: 120_000, everyMs: 200 },
    )
    await page.reload()
    await heading(page, 'Carta para Lucía García').waitFor()
    await page.locator('.letter-status').getByText('Impresa', { exact: true }).waitFor()
    expect(await page.locator('.timeline-status').allInnerTexts()).toEqual(['Recibida', 'Lista para imprimir', 'En impresión', 'Impresa'])
    expect(unexpected(problems, [failedLoad(400, '/single')])).toEqual([])
  })
})

describe('Envío masivo', () => {
  it('lists a bad row’s error and the summary on "Revisar" without charging, then "Enviar N cartas" creates the valid ones for exactly their cost', async ({
    pipeline,
    baseUrl,
    browser,
  }) => {
    const { account, page, problems } = await newAccountTab(pipeline.app, browser, baseUrl, 50)
    const campaignId = await adminCampaign(pipeline.app, account)
    const rows = [
      ['Lucía', 'García', 'Calle Mayor 1', '28013', 'Madrid', 'España', 'OTONO10'],
      ['Jorge', 'Pérez', 'Calle Sierpes 4', '41004', 'Sevilla', 'España', 'OTONO10'],
      ['Marta', 'Ruiz', 'Gran Vía 2', '48001', 'Bilbao', 'España', 'CUPONDEMASIADOLARGO'],
      ['Ana', 'López', 'Calle Colón 5', '46004', 'Valencia', 'España', 'OTONO10'],
    ]
    const csv = ['nombre,apellidos,dirección,código postal,ciudad,país,cupon', ...rows.map((row) => row.join(','))].join('\n')
    // What the API says of the bad row, asked directly (a dry run, with the API's own column names).
    const direct = await publicClient(pipeline.app, account.apiKey).post(
      `/cards/bulk?campaignId=${campaignId}&dryRun=true`,
      ['name,surname,address,zip,city,country,cupon', ...rows.map((row) => [...row.slice(0, 5), 'ES', row[6]].join(','))].join('\n'),
      { 'content-type': 'text/csv' },
    )
    expect(direct.statusCode, direct.body).toBe(200)
    const [badRow] = direct.json<{ errors: Array<{ index: number; message: string }> }>().errors
    expect(badRow?.index).toBe(2)

    await page.goto('/dashboard/masivo')
    await heading(page, 'Envío masivo').waitFor()
    expect(await page.getByLabel('Campaña').locator('option:checked').innerText()).toBe('Otoño')
    await page.getByLabel('Archivo CSV').setInputFiles({ name: 'clientes-otono.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) })
    await page.getByText('clientes-otono.csv').waitFor()
    await page.getByRole('button', { name: 'Revisar' }).click()

    const review = page.getByRole('region', { name: 'Filas revisadas' })
    await review.waitFor()
    const summary = page.locator('dl.summary')
    const fact = (term: string) =>
      summary
        .locator('div', { has: page.getByText(term, { exact: true }) })
        .locator('dd')
        .innerText()
    expect(await fact('Cartas válidas')).toBe('3')
    expect(await fact('Filas con errores')).toBe('1')
    expect(await fact('Total')).toBe('9 créditos')
    await page.getByText('Nada se ha cobrado todavía.').waitFor()
    const marta = review.getByRole('row').filter({ hasText: 'Marta Ruiz' })
    expect(await marta.getByRole('listitem').allInnerTexts()).toEqual([badRow!.message])
    expect(await review.getByRole('row').filter({ hasText: 'Correcta' }).count()).toBe(3)
    expect(await balanceOf(pipeline.app.db, account.id)).toBe(50)
    expect(await lettersOf(pipeline.app.db, account.id)).toEqual([])

    await page.getByRole('button', { name: 'Enviar 3 cartas' }).click()
    await page.getByText('Se han creado 3 cartas por 9 créditos.').waitFor()
    const created = await lettersOf(pipeline.app.db, account.id)
    expect(created.map((letter) => `${letter.recipient.name} ${letter.recipient.surname}`).sort()).toEqual(['Ana López', 'Jorge Pérez', 'Lucía García'])
    expect(created.every((letter) => letter.campaignId === campaignId && letter.cost === 3)).toBe(true)
    expect(created.find((letter) => letter.recipient.name === 'Jorge')!.message).toBe('Hola Jorge, tu cupón es OTONO10.')
    expect(await balanceOf(pipeline.app.db, account.id)).toBe(41)
    expect((await chargesOf(pipeline.app.db, account.id)).map((charge) => charge.amount)).toEqual([-3, -3, -3])
    expect(unexpected(problems)).toEqual([])
  })
})

describe('Envío masivo, columns by name', () => {
  it('reads a semicolon-separated UTF-8 CSV with Spanish headers, asks what an unknown column is for, sends the API its columns by their names, and "Revisar" lists the rows and the total without charging', async ({
    pipeline,
    baseUrl,
    browser,
  }) => {
    const { account, context, page, problems } = await newAccountTab(pipeline.app, browser, baseUrl, 50)
    const campaignId = await adminCampaign(pipeline.app, account)
    // The CSV bodies the page sends to /cards/bulk, read in the page: the SDK sends a Request whose
    // body Chromium reports to the test as a stream, without its text (postData() is null).
    await context.addInitScript(`(() => {
      const original = window.fetch
      window.bulkBodies = []
      window.fetch = async (input, init) => {
        if (input instanceof Request && new URL(input.url).pathname === '/cards/bulk') window.bulkBodies.push(await input.clone().text())
        return original.call(window, input, init)
      }
    })()`)
    // As a Spanish Excel saves "CSV UTF-8": a byte order mark, semicolons, CRLF; a quoted cell holds a semicolon.
    const csv =
      '\uFEFFNombre;Apellidos;Señas;CP;Localidad;Provincia;País;Cupón\r\n' +
      'Lucía;García Romero;Calle Mayor 12, 3.º B;28013;Madrid;Madrid;España;OTONO10\r\n' +
      'Iñaki;Etxeberria;Paseo de la Concha 5;20007;Donostia-San Sebastián;Gipuzkoa;España;OTONO10\r\n' +
      'Begoña;Núñez;"Rúa Real 3; bajo";15003;A Coruña;A Coruña;España;OTONO10\r\n'

    await page.goto('/dashboard/masivo')
    await heading(page, 'Envío masivo').waitFor()
    await page.getByLabel('Archivo CSV').setInputFiles({ name: 'clientes-noviembre.csv', mimeType: 'text/csv', buffer: Buffer.from(csv, 'utf8') })
    await page.getByText('El archivo tiene 3 filas con datos.').waitFor()

    // Every header known but "Señas": one select, for it; until it is chosen the address is missing and nothing can be reviewed.
    const columns = page.locator('ul.column-map')
    expect(await columns.getByRole('combobox').count()).toBe(1)
    const unknown = columns.getByLabel('Señas', { exact: true })
    expect(await unknown.locator('option:checked').innerText()).toBe('No usar esta columna')
    await page.getByText('Falta una columna para: Dirección.', { exact: true }).waitFor()
    const revisar = page.getByRole('button', { name: 'Revisar' })
    expect(await revisar.isDisabled()).toBe(true)
    await unknown.selectOption({ label: 'Dirección' })
    await page.getByText('Falta una columna para: Dirección.').waitFor({ state: 'detached' })

    // What the API is asked: its own column names, "País" as a code, the address as it was (quoted where it has a comma or a semicolon).
    const asked = page.waitForRequest((request) => new URL(request.url()).pathname === '/cards/bulk')
    await revisar.click()
    const dryRun = await asked
    expect(Object.fromEntries(new URL(dryRun.url()).searchParams)).toEqual({ campaignId, dryRun: 'true' })
    expect(await page.evaluate<string[]>('window.bulkBodies')).toEqual([
      'name,nombre,surname,address,zip,city,province,country,cupon\r\n' +
        'Lucía,Lucía,García Romero,"Calle Mayor 12, 3.º B",28013,Madrid,Madrid,ES,OTONO10\r\n' +
        'Iñaki,Iñaki,Etxeberria,Paseo de la Concha 5,20007,Donostia-San Sebastián,Gipuzkoa,ES,OTONO10\r\n' +
        'Begoña,Begoña,Núñez,"Rúa Real 3; bajo",15003,A Coruña,A Coruña,ES,OTONO10\r\n',
    ])

    const review = page.getByRole('region', { name: 'Filas revisadas' })
    await review.waitFor()
    const rows = await review
      .locator('tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => (td.textContent ?? '').trim())))
    expect(rows).toEqual([
      ['2', 'Lucía García Romero', 'Madrid', 'Correcta'],
      ['3', 'Iñaki Etxeberria', 'Donostia-San Sebastián', 'Correcta'],
      ['4', 'Begoña Núñez', 'A Coruña', 'Correcta'],
    ])
    const fact = (term: string) =>
      page
        .locator('dl.summary > div', { has: page.getByText(term, { exact: true }) })
        .locator('dd')
        .innerText()
    expect(await fact('Cartas válidas')).toBe('3')
    expect(await fact('Filas con errores')).toBe('0')
    expect(await fact('Total')).toBe('9 créditos')
    await page.getByText('Nada se ha cobrado todavía.').waitFor()
    await page.getByRole('button', { name: 'Enviar 3 cartas' }).waitFor()
    expect(await balanceOf(pipeline.app.db, account.id)).toBe(50)
    expect(await lettersOf(pipeline.app.db, account.id)).toEqual([])
    expect(await chargesOf(pipeline.app.db, account.id)).toEqual([])
    expect(unexpected(problems)).toEqual([])
  })
})

describe('Inicio', () => {
  it('shows the balance the API answers, the last 30 days’ letters by status as created, and a low balance, rejected addresses and a failing webhook endpoint as things to attend to', async ({
    pipeline,
    baseUrl,
    browser,
  }) => {
    const worker = startWebhookWorker({ config: pipeline.config, db: pipeline.app.db, log: silentLog })
    // An endpoint that answers every delivery 500 (its retry is ten minutes away: WEBHOOK_RETRY_SCHEDULE).
    const receiver = await startWebhookReceiver(() => 500)
    onTestFinished(async () => {
      await worker.close()
      await receiver.close()
    })
    // 20 credits: below ten letters abroad (10 × 5), the API's low balance.
    const { account, page, problems } = await newAccountTab(pipeline.app, browser, baseUrl, 20)
    const client = publicClient(pipeline.app, account.apiKey)
    const endpoint = await client.post('/webhooks', { url: receiver.url })
    expect(endpoint.statusCode, endpoint.body).toBe(201)
    const endpointId = endpoint.json<{ id: string }>().id

    // Two letters scheduled for tomorrow, a third cancelled, a fourth whose address the address worker rejects.
    const send = async (overrides: Record<string, unknown>) => {
      const response = await client.post('/single', singleLetter(account, overrides))
      expect(response.statusCode, response.body).toBe(200)
      return response.json<{ cardId: string }>().cardId
    }
    const tomorrow = new Date(Date.now() + 26 * 3_600_000).toISOString()
    await send({ sendAt: tomorrow })
    await send({ sendAt: tomorrow, name: 'Jorge', surname: 'Pérez' })
    const cancelled = await send({ sendAt: tomorrow, name: 'Carmen', surname: 'Ruiz' })
    expect((await client.delete(`/cards/${cancelled}`)).statusCode).toBe(200)
    const rejected = await send({ name: 'Pablo', surname: 'Santos', address: '...' })
    await until(
      'the bad address rejected',
      async () => (await pipeline.app.db.select({ status: letters.status }).from(letters).where(eq(letters.id, rejected)))[0]?.status === 'address_rejected',
      { timeoutMs: 90_000, everyMs: 200 },
    )
    // The API's count of the last 30 days (its default period).
    const stats = await client.get('/cards/stats')
    expect(stats.statusCode, stats.body).toBe(200)
    expect(stats.json()).toMatchObject({ total: 4, byStatus: { scheduled: 2, address_rejected: 1, cancelled: 1 } })
    // The endpoint failing: a delivery answered 500 and recorded.
    await until(
      'a failed delivery recorded',
      async () => (await client.get(`/webhooks/${endpointId}/deliveries?limit=1`)).json<{ data: Array<{ outcome: string }> }>().data[0]?.outcome === 'retrying',
      { timeoutMs: 60_000 },
    )
    const balance = (await client.get('/balance')).json<{ balance: number; lowBalance: boolean }>()
    expect(balance).toEqual({ balance: await balanceOf(pipeline.app.db, account.id), lowBalance: true })
    expect(balance.balance).toBeLessThan(20)

    await page.goto('/dashboard/')
    await heading(page, 'Inicio').waitFor()
    const section = (title: string) => page.locator('section', { has: page.getByRole('heading', { level: 2, name: title, exact: true }) })
    const shownCredits = `${balance.balance} créditos`
    await until('the balance shown', async () => (await section('Saldo').locator('.big-number').count()) === 1)
    expect(await section('Saldo').locator('.big-number').innerText()).toBe(shownCredits)

    const counts = section('Cartas de los últimos 30 días')
    await counts.locator('ul.stat-list').waitFor()
    expect(await counts.locator('p').first().innerText()).toBe('4 cartas en total.')
    expect(await counts.locator('ul.stat-list li').allInnerTexts()).toEqual(['2 programadas', '1 con la dirección rechazada', '1 cancelada'])
    expect(await counts.getByRole('link', { name: '2 programadas' }).getAttribute('href')).toMatch(
      /^\/dashboard\/cartas\?estado=scheduled&desde=\d{4}-\d{2}-\d{2}$/,
    )

    const attention = section('Necesita tu atención').locator('ul.attention')
    await attention.waitFor()
    await expect
      .poll(() => attention.locator('li').allInnerTexts())
      .toEqual([
        `Te quedan pocos créditos (${shownCredits}). Ver el saldo`,
        '1 carta tiene la dirección rechazada en los últimos 30 días. Ver esas cartas',
        `Fallan los avisos (webhooks) enviados a ${receiver.url}. Revisar`,
      ])
    expect(await attention.getByRole('link', { name: 'Revisar' }).getAttribute('href')).toBe('/dashboard/desarrolladores')
    expect(await attention.getByRole('link', { name: 'Ver el saldo' }).getAttribute('href')).toBe('/dashboard/saldo')
    expect(unexpected(problems)).toEqual([])
  })
})

describe('Desarrolladores', () => {
  it('shows a new API key once, lists it by its first 12 characters, and "Revocar" makes the API answer it 401', async ({ pipeline, baseUrl, browser }) => {
    const { account, page, problems } = await newAccountTab(pipeline.app, browser, baseUrl, 20)
    await page.goto('/dashboard/desarrolladores')
    await heading(page, 'Desarrolladores').waitFor()
    const keys = page.getByRole('region', { name: 'Claves de la API' })
    await keys.waitFor()
    const listedBefore = await keys.getByRole('row').count()

    await page.getByRole('button', { name: 'Crear clave' }).click()
    await page.getByText('Clave real creada.').waitFor()
    const key = await page.getByLabel('Clave nueva', { exact: true }).inputValue()
    expect(key).toMatch(/^lk_live_[A-Za-z0-9_-]{40,}$/)

    // It works: the API answers it.
    const withKey = (path: string) => fetch(`${baseUrl}${path}`, { headers: { 'x-api-key': key } })
    const balance = await withKey('/balance')
    expect(balance.status).toBe(200)
    expect(await balance.json()).toMatchObject({ balance: 20 })

    const row = keys.getByRole('row').filter({ hasText: `${key.slice(0, 12)}…` })
    await row.waitFor()
    expect(await keys.getByRole('row').count()).toBe(listedBefore + 1)
    expect(await row.getByRole('cell').first().innerText()).toBe(`${key.slice(0, 12)}…`)
    // Shown once: after a reload only its start is on the page.
    await page.reload()
    await row.waitFor()
    expect(await page.content()).not.toContain(key)

    await row.getByRole('button', { name: 'Revocar' }).click()
    const dialog = page.getByRole('dialog', { name: '¿Revocar esta clave?' })
    await dialog.getByText(`${key.slice(0, 12)}…`).waitFor()
    await dialog.getByRole('button', { name: 'Sí, revocar' }).click()
    await row.waitFor({ state: 'detached' })
    const [stored] = await pipeline.app.db
      .select({ revokedAt: apiKeys.revokedAt })
      .from(apiKeys)
      .where(and(eq(apiKeys.accountId, account.id), eq(apiKeys.livemode, true)))
      .orderBy(apiKeys.createdAt)
      .offset(1)
    expect(stored?.revokedAt).toBeInstanceOf(Date)
    expect((await withKey('/balance')).status).toBe(401)
    expect(unexpected(problems)).toEqual([])
  })

  it('registers a webhook endpoint, shows its failed delivery with the status code, and "Reintentar" sends it again to the receiver', async ({
    pipeline,
    baseUrl,
    browser,
  }) => {
    const worker = startWebhookWorker({ config: pipeline.config, db: pipeline.app.db, log: silentLog })
    // The first request it gets is answered 500, every other 204.
    const receiver = await startWebhookReceiver((request) => (request === 0 ? 500 : 204))
    onTestFinished(async () => {
      await worker.close()
      await receiver.close()
    })
    const { account, page, problems } = await newAccountTab(pipeline.app, browser, baseUrl, 20)
    await page.goto('/dashboard/desarrolladores')
    await heading(page, 'Desarrolladores').waitFor()
    await page.getByRole('button', { name: 'Añadir endpoint' }).click()
    await page.getByLabel('URL').fill(receiver.url)
    await page.getByRole('button', { name: 'Guardar' }).click()
    await page.getByText(`Endpoint añadido: ${receiver.url}.`).waitFor()
    expect(await page.getByLabel('Secreto para verificar las firmas').inputValue()).toMatch(/^whsec_/)
    const endpoint = page.getByRole('article', { name: receiver.url })
    await endpoint.getByText('Aún no se ha enviado nada a este endpoint.').waitFor()

    // A letter: its first event reaches the receiver and is answered 500.
    const client = publicClient(pipeline.app, account.apiKey)
    const sent = await client.post('/single', singleLetter(account))
    expect(sent.statusCode, sent.body).toBe(200)
    const failed = await until('the first delivery', () => receiver.received[0], { timeoutMs: 90_000 })
    const deliveryId = String(failed.headers['webhook-id'])
    // Whichever of the letter's events came first, as the page names it.
    const eventName = {
      'letter.received': 'Carta recibida',
      'letter.ready_for_print': 'Carta lista para imprimir',
      'letter.printing': 'Carta en impresión',
      'letter.printed': 'Carta impresa',
    }[failed.json.type]
    expect(eventName).toBeDefined()
    const endpointId = (await client.get('/webhooks')).json<{ data: Array<{ id: string }> }>().data[0]!.id
    type Attempt = { eventId: string; attempt: number; statusCode: number | null; outcome: string }
    const attemptsOf = async () =>
      (await client.get(`/webhooks/${endpointId}/deliveries?limit=50`))
        .json<{ data: Attempt[] }>()
        .data.filter((attempt) => attempt.eventId === deliveryId)
        .map(({ attempt, statusCode, outcome }) => ({ attempt, statusCode, outcome }))
    await until('the failed attempt recorded', async () => (await attemptsOf()).length > 0)
    expect(await attemptsOf()).toEqual([{ attempt: 1, statusCode: 500, outcome: 'retrying' }])

    // The page lists it (after a reload: the list is read when the page opens).
    await page.reload()
    const failedRow = endpoint.getByRole('row').filter({ hasText: 'HTTP 500' })
    await failedRow.waitFor()
    expect(await failedRow.getByRole('cell').allInnerTexts()).toEqual([
      expect.any(String),
      eventName,
      '1',
      'HTTP 500',
      expect.stringMatching(/^Se reintentará · próximo intento /),
      'Reintentar',
    ])
    await failedRow.getByRole('button', { name: 'Reintentar' }).click()
    await failedRow.getByText('Reenviada').waitFor()

    // Sent again, with the same webhook-id and body, and answered 204 this time.
    const again = await until('the retried delivery', () =>
      receiver.received.find((request, index) => index > 0 && request.headers['webhook-id'] === deliveryId),
    )
    expect(again.body).toBe(failed.body)
    await until('the second attempt recorded', async () => (await attemptsOf()).length === 2)
    expect(await attemptsOf()).toEqual([
      { attempt: 2, statusCode: 204, outcome: 'delivered' },
      { attempt: 1, statusCode: 500, outcome: 'retrying' },
    ])
    // The page reads its list again a few seconds after the retry: the delivered attempt shows.
    await endpoint.getByRole('row').filter({ hasText: 'HTTP 204' }).filter({ hasText: eventName! }).waitFor()
    expect(unexpected(problems)).toEqual([])
  })
})
