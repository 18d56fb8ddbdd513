import { expect, onTestFinished } from 'vitest'
import type { Browser, BrowserContext, Page, Request } from 'playwright-core'
import { GOOD_PASSWORD, type Credentials } from './dashboard.js'
import { it as base } from './fixtures.js'
import type { PipelineOptions } from './pipeline.js'
import { launchChromium } from './system-tools.js'
import { until } from './wait.js'

/**
 * The dashboard's browser tests' set-up: the file's pipeline (`options`) with its gateway on a
 * real port (`baseUrl`), and one Chromium for the file (`browser`), closed before that gateway.
 */
export function dashboardTest(options: PipelineOptions) {
  return base
    .extend({ pipelineOptions: options })
    .extend('baseUrl', { scope: 'file' }, ({ pipeline }) => pipeline.app.listen({ host: '127.0.0.1', port: 0 }))
    .extend('browser', { scope: 'file' }, async ({ baseUrl: _ }, { onCleanup }): Promise<Browser> => {
      const browser = await launchChromium()
      onCleanup(() => browser.close())
      return browser
    })
}

export const DESKTOP = { width: 1280, height: 800 }
export const PHONE = { width: 375, height: 740 }

export interface Tab {
  context: BrowserContext
  page: Page
  /** Console errors and uncaught exceptions, each with the URL it is about. */
  problems: string[]
  /**
   * Resolves once none of the page's API calls is waiting for an answer, twice in a row a quarter
   * second apart: what a page asked for on showing has been answered, so a change made to the
   * server afterwards meets only the requests a test provokes.
   */
  settled: () => Promise<void>
}

export interface TabOptions {
  /** Console warnings recorded too, each line then headed by its type (`error: …`, `warning: …`). */
  warnings?: boolean
}

/** A fresh browser context (its own cookies) and page, closed when the test ends; it records the page's console errors. */
export async function openTab(browser: Browser, baseUrl: string, viewport = DESKTOP, { warnings = false }: TabOptions = {}): Promise<Tab> {
  const context = await browser.newContext({ baseURL: baseUrl, viewport, locale: 'es-ES', timezoneId: 'Europe/Madrid' })
  onTestFinished(() => context.close())
  context.setDefaultTimeout(30_000)
  const page = await context.newPage()
  const problems: string[] = []
  page.on('console', (message) => {
    const line = `${message.text()} [${message.location().url}]`
    if (!warnings) {
      if (message.type() === 'error') problems.push(line)
    } else if (message.type() === 'error' || message.type() === 'warning') problems.push(`${message.type()}: ${line}`)
  })
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`))
  const pending = new Set<Request>()
  page.on('request', (request) => {
    if (request.resourceType() === 'fetch' || request.resourceType() === 'xhr') pending.add(request)
  })
  const answered = (request: Request) => pending.delete(request)
  page.on('requestfinished', answered)
  page.on('requestfailed', answered)
  let quietBefore = false
  const settled = async () => {
    quietBefore = false
    await until(
      'the page’s API calls answered',
      () => {
        const quiet = pending.size === 0
        const twice = quiet && quietBefore
        quietBefore = quiet
        return twice || undefined
      },
      { everyMs: 250 },
    )
  }
  return { context, page, problems, settled }
}

/**
 * A fresh tab (as `openTab`) signed in as `who`, the way the sign-in page does it: POST /session
 * from the dashboard's origin, the cookies it sets the tab's. (The sign-in form itself is what
 * dashboard-access.test.ts tests.)
 */
export async function signedInTab(browser: Browser, baseUrl: string, who: Credentials, viewport = DESKTOP, options: TabOptions = {}): Promise<Tab> {
  const tab = await openTab(browser, baseUrl, viewport, options)
  const response = await tab.context.request.post(`${baseUrl}/session`, {
    data: { email: who.email, password: who.password ?? GOOD_PASSWORD },
    headers: { origin: baseUrl },
  })
  expect(response.status(), await response.text()).toBe(200)
  return tab
}

/** The console errors left once those a test provoked on purpose (each a pattern) are taken out. */
export const unexpected = (problems: string[], allowed: RegExp[] = []) => problems.filter((problem) => !allowed.some((pattern) => pattern.test(problem)))

/** Chromium's line for an answer with that status to that path. */
export const failedLoad = (status: number, path: string) =>
  new RegExp(`status of ${status} .*\\[http://127\\.0\\.0\\.1:\\d+${path.replace(/[/?]/g, '\\$&')}\\]$`)

/** A page's title, its one h1. */
export const heading = (page: Page, name: string) => page.getByRole('heading', { level: 1, name, exact: true })
