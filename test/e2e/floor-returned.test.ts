/**
 * The floor's scan page in its "Devuelta" mode, in a real browser (Debian's chromium through
 * playwright-core) on the running stack: a live letter sent through the public API, printed by
 * the real workers and scanned out to the post (POST /floor/scan, as the page's first mode does),
 * then scanned back in as returned with the reason the post marked.
 *
 * With FLOOR_SCREENSHOTS=1 it also writes the page in that mode to docs/floor/scan-returned.png,
 * for docs/floor.md.
 */
import { mkdir, readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { describe, expect, onTestFinished } from 'vitest'
import type { Browser, Page } from 'playwright-core'
import { eq } from 'drizzle-orm'
import { letters } from '@letters/db'
import { it as base } from '../support/fixtures.js'
import { reachStatus } from '../support/pipeline.js'
import { launchChromium } from '../support/system-tools.js'

const FLOOR_TOKEN = 'test-floor-token-returned-0123'
const axeSource = readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')
const SCREENSHOTS = process.env.FLOOR_SCREENSHOTS === '1' ? new URL('../../docs/floor/', import.meta.url) : undefined

const it = base
  .extend({ pipelineOptions: { label: 'floorret', env: { FLOOR_TOKEN } } })
  .extend('baseUrl', { scope: 'file' }, ({ pipeline }) => pipeline.app.listen({ host: '127.0.0.1', port: 0 }))
  .extend('browser', { scope: 'file' }, async ({ baseUrl: _ }, { onCleanup }): Promise<Browser> => {
    const browser = await launchChromium()
    onCleanup(() => browser.close())
    return browser
  })

const floorHeaders = { authorization: `Basic ${Buffer.from(`planta:${FLOOR_TOKEN}`).toString('base64')}` }

interface AxeViolation {
  id: string
  impact: string | null
  help: string
  nodes: Array<{ target: string[] }>
}

/** Every axe-core violation, whatever its impact, one line each. */
async function axeViolations(page: Page): Promise<string[]> {
  // Evaluated rather than added as a <script>: the page's policy (script-src 'self') refuses inline scripts.
  if (!(await page.evaluate<boolean>("'axe' in window"))) await page.evaluate(await axeSource)
  const violations = await page.evaluate<AxeViolation[]>('axe.run().then((results) => results.violations)')
  return violations.map(
    (violation) => `${violation.impact} ${violation.id} (${violation.help}): ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`,
  )
}

describe('the floor page in "Devuelta" mode', () => {
  it(
    'marks a mailed letter returned with the reason picked: green with its code and "Devuelta: <motivo>", its address suppressed, no refund; a second scan and an unknown code in red',
    { timeout: 120_000 },
    async ({ pipeline, baseUrl, browser }) => {
      // A live letter through the real pipeline (address check, production), then handed to the post by the floor's scanner.
      const id = await pipeline.send({ name: 'Remedios', surname: 'Olabarrieta', address: 'Calle de Fuencarral 77', zip: '28004', city: 'Madrid' })
      await reachStatus(pipeline, id, 'printed', 90_000)
      const [{ code } = { code: '' }] = await pipeline.app.db.select({ code: letters.code }).from(letters).where(eq(letters.id, id))
      const mailed = await pipeline.app.inject({ method: 'POST', url: '/floor/scan', headers: floorHeaders, payload: { code } })
      expect(mailed.statusCode, mailed.body).toBe(200)
      const balance = await pipeline.balance()

      const context = await browser.newContext({
        httpCredentials: { username: 'planta', password: FLOOR_TOKEN },
        viewport: { width: 1280, height: 800 },
        locale: 'es-ES',
        timezoneId: 'Europe/Madrid',
      })
      onTestFinished(() => context.close())
      const page = await context.newPage()
      const problems: string[] = []
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text())
      })
      page.on('pageerror', (error) => problems.push(error.message))

      expect((await page.goto(`${baseUrl}/floor`))?.status()).toBe(200)
      const focused = () => page.evaluate<string | undefined>('document.activeElement?.id')
      const reasons = page.getByRole('group', { name: /Motivo de la devolución/ })
      await expect.poll(focused).toBe('scan')
      // The first mode marks letters mailed; the reasons are not there until "Devuelta" is picked.
      await expect(page.getByRole('radio', { name: /Enviada/ }).isChecked()).resolves.toBe(true)
      await expect(reasons.isVisible()).resolves.toBe(false)

      await page.getByRole('radio', { name: /Devuelta/ }).click()
      await expect(reasons.isVisible()).resolves.toBe(true)
      // Each reason by its Spanish name (the contract's labels); none picked to start with.
      await expect(reasons.getByRole('radio').evaluateAll((radios) => radios.map((radio) => radio.parentElement?.textContent?.trim()))).resolves.toEqual([
        'Desconocido',
        'Dirección incorrecta o incompleta',
        'Rehusado',
        'Se ha mudado',
        'Fallecido',
        'Otro motivo',
      ])
      await expect(reasons.locator('input:checked').count()).resolves.toBe(0)
      // The mode is in the URL: a reload (or the page's own refresh link) stays in it.
      expect(new URL(page.url()).search).toBe('?modo=devuelta')
      await expect(page.locator('#refresh').getAttribute('href')).resolves.toBe('/floor?modo=devuelta')
      await expect.poll(focused).toBe('scan')

      const feedback = page.locator('#feedback')
      const scanCode = async (typed: string, colour: 'ok' | 'error') => {
        const before = await page.locator('#scans li').count()
        // A scanner is a keyboard: the code's characters, then Enter.
        await page.keyboard.type(typed, { delay: 5 })
        await page.keyboard.press('Enter')
        await expect.poll(() => page.locator('#scans li').count()).toBe(before + 1)
        await expect(feedback.getAttribute('class')).resolves.toBe(`feedback ${colour}`)
        await expect.poll(focused).toBe('scan')
        await expect(page.locator('#scan').inputValue()).resolves.toBe('')
        return feedback.innerText()
      }
      const pick = async (reason: string) => {
        await reasons.getByRole('radio', { name: reason, exact: true }).click()
        // Picked with the mouse, the focus is back in the box for the scanner.
        await expect.poll(focused).toBe('scan')
      }

      // Without a reason nothing is sent: the letter stays mailed.
      await expect(scanCode(code, 'error')).resolves.toBe(`${code}: elige primero el motivo de la devolución y vuelve a escanearlo`)
      expect((await pipeline.card(id)).status).toBe('mailed')

      await pick('Dirección incorrecta o incompleta')
      await expect(scanCode(code.toLowerCase(), 'ok')).resolves.toBe(
        `${code} · Remedios Olabarrieta · Madrid · Devuelta: Dirección incorrecta o incompleta · dirección añadida a la lista de supresión del cliente`,
      )
      // The next envelope's reason is picked afresh.
      await expect(reasons.locator('input:checked').count()).resolves.toBe(0)
      expect(await axeViolations(page)).toEqual([])
      if (SCREENSHOTS) {
        // As the floor sees it while the next envelope's reason is being picked.
        await pick('Se ha mudado')
        await mkdir(SCREENSHOTS, { recursive: true })
        await page.screenshot({ path: new URL('scan-returned.png', SCREENSHOTS).pathname })
      }

      const card = (await pipeline.client('GET', `/cards/${id}`)).json<{ status: string; returnReason: string; returnedAt: string | null }>()
      expect(card).toMatchObject({ status: 'returned', returnReason: 'bad_address', returnedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) })
      const events = (await pipeline.client('GET', `/events?cardId=${id}&type=letter.returned`)).json<{
        data: Array<{ type: string; data: { status: string } }>
      }>()
      expect(events.data).toEqual([expect.objectContaining({ type: 'letter.returned', data: expect.objectContaining({ status: 'returned' }) })])
      // Made and posted: nothing is refunded.
      expect(await pipeline.balance()).toBe(balance)
      const suppressions = await pipeline.client('GET', '/suppressions')
      expect(suppressions.json()).toEqual({
        data: [{ id: expect.any(String), reason: 'bad_address', createdAt: expect.any(String), zip: '28004', country: 'ES' }],
        nextCursor: null,
      })
      expect(suppressions.body).not.toMatch(/Fuencarral/i)

      await pick('Dirección incorrecta o incompleta')
      await expect(scanCode(code, 'error')).resolves.toBe(`${code}: La carta ya se marcó como devuelta`)
      // A refusal leaves the reason picked: the same envelope is usually scanned again.
      await expect(reasons.getByRole('radio', { name: 'Dirección incorrecta o incompleta' }).isChecked()).resolves.toBe(true)
      await expect(scanCode('ZZZZZZZZZZ', 'error')).resolves.toBe('ZZZZZZZZZZ: Código desconocido: ZZZZZZZZZZ')

      // A keyboard reaches the reasons (Shift+Tab) without the box taking the focus back, picks with the arrows, and Enter returns to the box.
      await page.keyboard.press('Shift+Tab')
      await expect.poll(() => page.evaluate<string | undefined>('document.activeElement?.name')).toBe('reason')
      await page.keyboard.press('ArrowDown')
      await expect(reasons.getByRole('radio', { name: 'Rehusado' }).isChecked()).resolves.toBe(true)
      await page.keyboard.press('Enter')
      await expect.poll(focused).toBe('scan')

      expect(await axeViolations(page)).toEqual([])

      const list = await page.locator('#scans li').evaluateAll((items) => items.map((item) => `${item.className} ${item.textContent?.replace(/^\S+ · /, '')}`))
      expect(list).toEqual([
        'error ZZZZZZZZZZ: Código desconocido: ZZZZZZZZZZ',
        `error ${code}: La carta ya se marcó como devuelta`,
        expect.stringMatching(new RegExp(`^ok ${code} · Remedios Olabarrieta · Madrid · Devuelta: Dirección incorrecta`)),
        `error ${code}: elige primero el motivo de la devolución y vuelve a escanearlo`,
      ])

      // Reloaded, the page is still in "Devuelta"; back to "Enviada", the reasons go and the URL is the page's own.
      await page.reload()
      await expect(page.getByRole('radio', { name: /Devuelta/ }).isChecked()).resolves.toBe(true)
      await expect(reasons.isVisible()).resolves.toBe(true)
      await page.getByRole('radio', { name: /Enviada/ }).click()
      await expect(reasons.isVisible()).resolves.toBe(false)
      expect(new URL(page.url()).search).toBe('')
      await expect.poll(focused).toBe('scan')

      expect(problems.filter((text) => !/status of (404|409)/.test(text))).toEqual([])
    },
  )
})
