import { mkdir } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect } from 'vitest'
import type { Browser } from 'playwright-core'
import { launchChromium } from '@letters/test/support/system-tools'
import { it as base } from '@letters/test/support/fixtures'

const ARTIFACTS = new URL('../../../test-artifacts/', import.meta.url)

/** The gateway listening on a real port, for the browser. */
const it = base.extend('baseUrl', { scope: 'file' }, ({ gateway }) => gateway.listen({ host: '127.0.0.1', port: 0 }))

let browser: Browser
beforeAll(async () => {
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
})

/**
 * A browser drawing the whole reference (every route, a full-page screenshot) takes 15 s on a
 * 2-core machine that three other test files keep busy, and 25 s or more when they are heavier:
 * the time is the browser's, not the gateway's, which answers its few requests in milliseconds.
 */
const BROWSER_TEST_TIMEOUT_MS = 90_000

describe('GET /docs', () => {
  it(
    'renders every public route in a real browser, with nothing fetched from outside and no CSP violation',
    async ({ baseUrl }) => {
      const page = await browser.newPage({ viewport: { width: 1280, height: 2000 } })
      const outside: string[] = []
      const problems: string[] = []
      // Anything not served by the gateway is refused and recorded: the page must work offline.
      await page.route('**/*', (route) => {
        const url = route.request().url()
        if (url.startsWith(baseUrl) || url.startsWith('data:')) return route.continue()
        outside.push(url)
        return route.abort()
      })
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text())
      })
      page.on('pageerror', (error) => problems.push(error.message))

      const response = await page.goto(`${baseUrl}/docs`)
      expect(response?.status()).toBe(200)
      await page.locator('.opblock').first().waitFor({ timeout: 15_000 })

      const document = (await (await fetch(`${baseUrl}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> }
      const expected = Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
      const rendered = await page
        .locator('.opblock-summary')
        .evaluateAll((blocks) =>
          blocks.map(
            (block) =>
              `${block.querySelector('.opblock-summary-method')?.textContent?.trim()} ${block.querySelector('.opblock-summary-path')?.getAttribute('data-path')}`,
          ),
        )
      expect(rendered.sort()).toEqual(expected.sort())
      await expect(page.locator('.info .title').innerText()).resolves.toMatch(/Letters API/)

      // Open POST /single, so that the screenshot shows its Spanish example body.
      await page.locator('#operations-Letters-post_single .opblock-summary').click()
      // The operation's body renders after the click, in a later frame: wait for its example.
      await page.locator('#operations-Letters-post_single').getByText('Querida Lucía').first().waitFor({ timeout: 30_000 })

      await mkdir(ARTIFACTS, { recursive: true })
      await page.screenshot({ path: new URL('docs.png', ARTIFACTS).pathname, fullPage: true })
      expect(outside).toEqual([])
      expect(problems).toEqual([])
    },
    BROWSER_TEST_TIMEOUT_MS,
  )
})
