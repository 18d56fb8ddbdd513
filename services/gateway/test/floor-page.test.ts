import { mkdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, vi } from 'vitest'
import type { Browser } from 'playwright-core'
import { launchChromium } from '@letters/test/support/system-tools'
import { eq } from 'drizzle-orm'
import { letters, printBatchLetters } from '@letters/db'
import { markFailed } from '@letters/production-worker/produce-letter'
import { it as base } from '@letters/test/support/fixtures'
import type { Pipeline } from '@letters/test/support/pipeline'
import { FLOOR_TOKEN, expectError } from './helpers.js'
import { until } from '@letters/test/support/wait'

const ARTIFACTS = new URL('../../../test-artifacts/', import.meta.url)

const SCRIPT_NAME = '<script>alert("planta")</script>'
const IMG_NAME = '<img src=x onerror=alert(1)>'

const floorHeaders = { authorization: `Basic ${Buffer.from(`planta:${FLOOR_TOKEN}`).toString('base64')}` }
const floorGet = (pipeline: Pipeline, url: string) => pipeline.app.inject({ method: 'GET', url, headers: floorHeaders })
/** The page's HTML with its layout whitespace (between tags, runs of spaces) squeezed, to read it as markup. */
const squeezed = (page: string) => page.replace(/>\s+</g, '><').replace(/\s+/g, ' ')
const codeOf = async (pipeline: Pipeline, id: string) => (await pipeline.app.db.select({ code: letters.code }).from(letters).where(eq(letters.id, id)))[0]!.code
const batchOf = async (pipeline: Pipeline, id: string) =>
  (await pipeline.app.db.select().from(printBatchLetters).where(eq(printBatchLetters.letterId, id)))[0]?.batchId

/**
 * The real floor in batch mode (PRINTER=batch, 3 letters a batch): three letters fill a batch the
 * production worker hands over (its three files in the artifact store and the spool), a fourth
 * waits in the next tray and is then given up on (markFailed, as the worker does after its
 * retries), so the page has an open batch, a handed one, counts and a failed letter to show.
 */
const it = base.extend('floor', { scope: 'file' }, async ({ pipeline }) => {
  const ids = {
    script: await pipeline.send({ name: SCRIPT_NAME, surname: 'Pérez', city: 'Sevilla', zip: '41004' }),
    luisa: await pipeline.send({ name: 'Luisa', surname: 'Gómez', city: 'Bilbao', zip: '48001' }),
    nandu: await pipeline.send({ name: 'Ñandú & "Hijos"', surname: 'S.L.', city: 'Valencia', zip: '46001' }),
  }
  for (const id of Object.values(ids))
    await until(`letter ${id} printed`, async () => (await pipeline.card(id)).status === 'printed', { timeoutMs: 90_000, everyMs: 100 })
  const handed = {
    batchId: (await batchOf(pipeline, ids.script))!,
    codes: { script: await codeOf(pipeline, ids.script), luisa: await codeOf(pipeline, ids.luisa), nandu: await codeOf(pipeline, ids.nandu) },
  }
  const failedId = await pipeline.send({ name: IMG_NAME, surname: 'Ruiz', city: 'Madrid', zip: '28013' })
  const trayBatchId = await until('the fourth letter in the tray', () => batchOf(pipeline, failedId), { timeoutMs: 90_000, everyMs: 100 })
  expect(await markFailed(pipeline.app.db, failedId, 3, 'any')).toBe(true)
  return { handed, trayBatchId, failedId }
})

it.override({ pipelineOptions: { label: 'floor', env: { PRINTER: 'batch', BATCH_MAX_LETTERS: '3', BATCH_MAX_WAIT_MS: '600000', FLOOR_TOKEN } } })
// The first test to ask for the floor waits for it to be set up: its pipeline started and three letters printed.
vi.setConfig({ testTimeout: 180_000 })

describe('GET /floor', () => {
  it('shows the open batch with its progress, the handed batch with its three files, the counts of live letters and the failed letter', async ({
    pipeline,
    floor: { handed, trayBatchId, failedId },
  }) => {
    const response = await floorGet(pipeline, '/floor')
    expect(response.statusCode, response.body).toBe(200)
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8')
    const page = squeezed(response.body)
    expect(page).toMatch(new RegExp(`<li class="batch" data-batch="${trayBatchId}">[\\s\\S]*?<span class="tray">1 / 3</span>`))
    // The pen each batch needs: its letters' ink (letters sent through the API are blue by default).
    expect(page).toMatch(new RegExp(`<li class="batch" data-batch="${trayBatchId}">[\\s\\S]*?tinta <strong class="ink">azul</strong>`))
    expect(page).toMatch(new RegExp(`<tr data-batch="${handed.batchId}">[\\s\\S]*?<td class="ink">azul</td>`))
    expect(page).toMatch(/<span class="age">\d+ s de 10 min<\/span>/)
    for (const kind of ['cards', 'envelopes', 'manifest']) expect(page).toContain(`<a href="/floor/batches/${handed.batchId}/files/${kind}">`)
    expect(page).toMatch(/<tr data-status="printed"><td>impresa<\/td><td class="num">3<\/td><\/tr>/)
    expect(page).toMatch(/<tr data-status="failed"><td>fallida<\/td><td class="num">1<\/td><\/tr>/)
    // Letters still on their way only: mailed ones are history, not counted.
    expect(page).not.toContain('data-status="mailed"')
    expect(page).toContain('Cartas fallidas o atascadas (1)')
    expect(page).toContain(`<tr data-letter="${failedId}">`)
  })

  it('escapes what clients wrote: a recipient named like HTML is shown as text', async ({ pipeline, floor: _floor }) => {
    const page = squeezed((await floorGet(pipeline, '/floor')).body)
    expect(page).toContain('<td>&#60;img src=x onerror=alert(1)&#62; Ruiz</td>')
    expect(page).not.toContain('<img')
    // The page's only script is its own file.
    expect(page.match(/<script/g)).toEqual(['<script'])
  })
})

describe('GET /floor/batches/{id}/files/{kind}', () => {
  it.for<[string, string, string]>([
    ['cards', 'application/pdf', 'cards.pdf'],
    ['envelopes', 'application/pdf', 'envelopes.pdf'],
    ['manifest', 'text/csv; charset=utf-8', 'manifest.csv'],
  ])('serves the %s file of a handed batch, as the printer got it, with its name', async ([kind, type, suffix], { pipeline, floor: { handed } }) => {
    const name = `batch-${handed.batchId}.${suffix}`
    const response = await floorGet(pipeline, `/floor/batches/${handed.batchId}/files/${kind}`)
    expect(response.statusCode, response.body.slice(0, 200)).toBe(200)
    expect(response.headers['content-type']).toBe(type)
    expect(response.headers['content-disposition']).toBe(`attachment; filename="${name}"`)
    expect(response.rawPayload.equals(await readFile(join(pipeline.spoolDir, name)))).toBe(true)
  })

  it('answers the manifest with every letter of the batch, codes included', async ({ pipeline, floor: { handed } }) => {
    const manifest = (await floorGet(pipeline, `/floor/batches/${handed.batchId}/files/manifest`)).body
    for (const code of Object.values(handed.codes)) expect(manifest).toContain(code)
  })

  it('answers 404 in Spanish for a batch not yet handed over, an unknown batch, an id that is no batch and an unknown kind', async ({
    pipeline,
    floor: { handed, trayBatchId },
  }) => {
    expectError(await floorGet(pipeline, `/floor/batches/${trayBatchId}/files/cards`), 404, 'Not Found', /aún no se ha entregado a la impresora/)
    expectError(await floorGet(pipeline, '/floor/batches/00000000-0000-4000-8000-000000000000/files/cards'), 404, 'Not Found', 'El lote no existe')
    expectError(await floorGet(pipeline, '/floor/batches/lote-1/files/cards'), 404, 'Not Found', 'El lote no existe')
    expectError(
      await floorGet(pipeline, `/floor/batches/${handed.batchId}/files/labels`),
      404,
      'Not Found',
      "El lote no tiene un archivo 'labels': los archivos son cards, envelopes, manifest",
    )
  })
})

describe('the floor page in a browser', () => {
  let browser: Browser
  beforeAll(async () => {
    browser = await launchChromium()
  })
  afterAll(() => browser?.close())

  it(
    'scans three codes typed as a scanner types them: printed (green), unknown (red), already mailed (red), keeping the focus',
    { timeout: 60_000 },
    async ({ pipeline, floor: { handed } }) => {
      // One letter of the batch left the floor already.
      const earlier = await pipeline.app.inject({ method: 'POST', url: '/floor/scan', headers: floorHeaders, payload: { code: handed.codes.nandu } })
      expect(earlier.statusCode, earlier.body).toBe(200)

      const baseUrl = await pipeline.app.listen({ host: '127.0.0.1', port: 0 })
      const context = await browser.newContext({ httpCredentials: { username: 'planta', password: FLOOR_TOKEN }, viewport: { width: 1280, height: 1000 } })
      const page = await context.newPage()
      const problems: string[] = []
      const outside: string[] = []
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text())
      })
      page.on('pageerror', (error) => problems.push(error.message))
      await page.route('**/*', (route) => {
        if (route.request().url().startsWith(baseUrl)) return route.continue()
        outside.push(route.request().url())
        return route.abort()
      })
      // Browser code as strings: this package's TypeScript has no DOM types.
      await page.addInitScript({
        content: `window.cspViolations = []
          document.addEventListener('securitypolicyviolation', (event) => window.cspViolations.push(event.violatedDirective + ' ' + event.blockedURI))`,
      })

      expect((await page.goto(`${baseUrl}/floor`))?.status()).toBe(200)
      // Two printed, the one scanned earlier mailed.
      await expect(page.locator('#counts tr[data-status="printed"] td.num').innerText()).resolves.toBe('2')
      // The one mailed is history: the counts are of letters still on their way.
      await expect(page.locator('#counts tr[data-status="mailed"]').count()).resolves.toBe(0)
      await expect(page.locator(`#recent tr[data-batch="${handed.batchId}"] a`).count()).resolves.toBe(3)
      const focused = () => page.evaluate<string | undefined>('document.activeElement?.id')
      await expect.poll(focused).toBe('scan')
      await mkdir(ARTIFACTS, { recursive: true })
      await page.screenshot({ path: new URL('floor-page.png', ARTIFACTS).pathname, fullPage: true })

      const feedback = page.locator('#feedback')
      const scanCode = async (code: string, colour: 'ok' | 'error') => {
        const before = await page.locator('#scans li').count()
        // A scanner is a keyboard: the code's characters, then Enter.
        await page.keyboard.type(code, { delay: 5 })
        await page.keyboard.press('Enter')
        await expect.poll(() => page.locator('#scans li').count()).toBe(before + 1)
        await expect(feedback.getAttribute('class')).resolves.toBe(`feedback ${colour}`)
        await expect.poll(focused).toBe('scan')
        await expect(page.locator('#scan').inputValue()).resolves.toBe('')
        return feedback.innerText()
      }

      // Printed: green, with the letter (its recipient's name shown as text, never run).
      await expect(scanCode(handed.codes.script.toLowerCase(), 'ok')).resolves.toBe(`${handed.codes.script} · ${SCRIPT_NAME} Pérez · Sevilla: enviada`)
      // Focus taken away by a click elsewhere comes back to the box.
      await page.locator('h1').click()
      await expect.poll(focused).toBe('scan')
      await expect(scanCode('ZZZZZZZZZZ', 'error')).resolves.toBe('ZZZZZZZZZZ: Código desconocido: ZZZZZZZZZZ')
      await expect(scanCode(handed.codes.nandu, 'error')).resolves.toMatch(new RegExp(`^${handed.codes.nandu}: La carta ya se marcó como enviada el .+ UTC$`))

      const list = await page.locator('#scans li').evaluateAll((items) => items.map((item) => `${item.className} ${item.textContent?.replace(/^\S+ · /, '')}`))
      expect(list).toEqual([
        expect.stringMatching(new RegExp(`^error ${handed.codes.nandu}: La carta ya se marcó`)),
        'error ZZZZZZZZZZ: Código desconocido: ZZZZZZZZZZ',
        `ok ${handed.codes.script} · ${SCRIPT_NAME} Pérez · Sevilla: enviada`,
      ])
      // The green and red are the page's own colours.
      await expect(page.evaluate<string>("getComputedStyle(document.getElementById('feedback')).backgroundColor")).resolves.toBe('rgb(253, 224, 224)')
      await expect(page.evaluate<number>("document.querySelectorAll('script').length")).resolves.toBe(1)
      await page.screenshot({ path: new URL('floor-scans.png', ARTIFACTS).pathname, fullPage: true })

      const [letter] = await pipeline.app.db.select({ status: letters.status }).from(letters).where(eq(letters.code, handed.codes.script))
      expect(letter?.status).toBe('mailed')
      expect(await page.evaluate<string[]>('window.cspViolations')).toEqual([])
      expect(problems.filter((text) => !/status of (404|409)/.test(text))).toEqual([])
      expect(outside).toEqual([])
      await context.close()
    },
  )
})
