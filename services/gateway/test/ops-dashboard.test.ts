import { randomUUID } from 'node:crypto'
import { mkdir } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect } from 'vitest'
import type { Browser } from 'playwright-core'
import { inArray } from 'drizzle-orm'
import { webhookEvents } from '@letters/db'
import { ADMIN_TOKEN } from '@letters/test/support/context'
import { it as base } from '@letters/test/support/fixtures'
import { openGateway } from '@letters/test/support/gateway'
import { deleteKeys } from '@letters/test/support/redis-keys'
import { launchChromium } from '@letters/test/support/system-tools'
import { adminAccount, adminClient, expectError, publicClient, sendSingle, startGateway } from './helpers.js'

/** A gateway like the file's, but started without an ADMIN_TOKEN. */
const it = base
  .extend('closed', async ({ gatewayOptions }, { onCleanup }) => {
    const closed = await openGateway({ ...gatewayOptions, env: { ...gatewayOptions.env, ADMIN_TOKEN: '' } })
    onCleanup(() => closed.close())
    return closed.app
  })
  .extend('baseUrl', { scope: 'file' }, ({ gateway }) => gateway.listen({ host: '127.0.0.1', port: 0 }))

const basic = (password: string) => `Basic ${Buffer.from(`ops:${password}`).toString('base64')}`

describe('the queue dashboard at /ops/queues', () => {
  it('asks a browser for the admin token (Basic auth) and answers 401 without it', async ({ gateway: app }) => {
    const response = await app.inject({ method: 'GET', url: '/ops/queues' })
    expectError(response, 401, 'Unauthorized', /token de administración/)
    expect(response.headers['www-authenticate']).toBe('Basic realm="letters ops", charset="UTF-8"')
    expectError(await app.inject({ method: 'GET', url: '/ops/queues', headers: { authorization: basic('otra-cosa-0123456789') } }), 401, 'Unauthorized')
  })

  it('serves the dashboard page for the token given as the Basic password', async ({ gateway: app }) => {
    const response = await app.inject({ method: 'GET', url: '/ops/queues', headers: { authorization: basic(ADMIN_TOKEN) } })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toMatch(/^text\/html/)
    expect(response.body).toContain('Cartas: colas')
    // Nothing the page loads comes from another host (Bull Board's own page links Google Fonts).
    expect(response.body).not.toMatch(/(src|href)="(https?:)?\/\//)
  })

  it('lists every queue with its job counts through its API, for a bearer token too', async ({ gateway: app }) => {
    const response = await app.inject({ method: 'GET', url: '/ops/queues/api/queues', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
    expect(response.statusCode, response.body).toBe(200)
    const { queues } = response.json<{ queues: Array<{ name: string; counts: Record<string, number> }> }>()
    expect(queues.map((queue) => queue.name).sort()).toEqual(['address', 'production', 'webhooks'])
    for (const queue of queues) expect(queue.counts).toMatchObject({ failed: expect.any(Number), waiting: expect.any(Number), active: expect.any(Number) })
  })

  it("refuses a change another site's page asks the browser for with its cached Basic credentials (403), and reads are still served", async ({
    gateway: app,
  }) => {
    const authorization = basic(ADMIN_TOKEN)
    for (const headers of [{ 'sec-fetch-site': 'cross-site' }, { origin: 'https://evil.example' }]) {
      const response = await app.inject({ method: 'PUT', url: '/ops/queues/api/queues/address/pause', headers: { authorization, ...headers } })
      expectError(response, 403, 'Forbidden', /no desde otro sitio web/)
    }
    expect(await app.queues.address.isPaused()).toBe(false)
    const read = await app.inject({ method: 'GET', url: '/ops/queues/api/queues', headers: { authorization, 'sec-fetch-site': 'cross-site' } })
    expect(read.statusCode, read.body).toBe(200)
  })

  it('does not exist without an ADMIN_TOKEN', async ({ closed }) => {
    expectError(await closed.inject({ method: 'GET', url: '/ops/queues', headers: { authorization: basic(ADMIN_TOKEN) } }), 404, 'Not Found')
  })
})

const ARTIFACTS = new URL('../../../test-artifacts/', import.meta.url)

describe('the queue dashboard in a browser', () => {
  let browser: Browser
  beforeAll(async () => {
    browser = await launchChromium()
  })
  afterAll(() => browser?.close())

  /** A browser context that answers the gateway's Basic challenge with `password`. */
  const contextWith = (password: string) => browser.newContext({ httpCredentials: { username: 'ops', password }, viewport: { width: 1280, height: 900 } })

  it('draws every queue with nothing asked of another host, even where another host never answers', { timeout: 90_000 }, async ({ baseUrl }) => {
    const context = await contextWith(ADMIN_TOKEN)
    try {
      const page = await context.newPage()
      const requested: string[] = []
      page.on('request', (request) => requested.push(request.url()))
      // Another host is one that cannot be reached: its requests are left unanswered, as a
      // dropped connection leaves them, so a page that waits on one never draws.
      await page.route('**/*', (route) => (route.request().url().startsWith(`${baseUrl}/`) ? route.continue() : undefined))
      expect((await page.goto(`${baseUrl}/ops/queues`, { waitUntil: 'commit' }))?.status()).toBe(200)
      // Each queue's card in the overview, with its count of jobs: the page's data, not its sidebar.
      for (const queue of ['address', 'production', 'webhooks'])
        await page
          .locator(`main li:has(a[href="/ops/queues/queue/${queue}"])`)
          .getByText(/^\d+ Jobs?$/)
          .waitFor({ timeout: 20_000 })
      await expect(page.getByText('Loading').count()).resolves.toBe(0)
      expect(requested.filter((url) => !url.startsWith(`${baseUrl}/`))).toEqual([])
      expect(requested.length).toBeGreaterThan(1)
      await mkdir(ARTIFACTS, { recursive: true })
      await page.screenshot({ path: new URL('ops-queues.png', ARTIFACTS).pathname })
    } finally {
      await context.close()
    }
  })

  it('answers a wrong password with a 401 that names Basic authentication', { timeout: 60_000 }, async ({ baseUrl }) => {
    const context = await contextWith('otra-cosa-0123456789')
    try {
      const page = await context.newPage()
      const response = await page.goto(`${baseUrl}/ops/queues`)
      expect(response?.status()).toBe(401)
      const body = (await response!.json()) as { message: string }
      expect(body.message).toMatch(/autenticación Basic/)
    } finally {
      await context.close()
    }
  })
})

describe('test mode on the queue dashboard', () => {
  it("names a test letter's jobs and a test endpoint's deliveries apart, in the list and on a job's page, without renaming the jobs", async () => {
    // Queues of its own: the jobs it lists are only the ones it adds.
    const queuePrefix = `ops-test-mode-${randomUUID().slice(0, 8)}`
    const own = await startGateway({ QUEUE_PREFIX: queuePrefix, WEBHOOK_ALLOW_PRIVATE_URLS: 'true' })
    try {
      const account = await adminAccount(own)
      const testKey = (await adminClient(own).post(`/admin/accounts/${account.id}/api-keys`, { mode: 'test' })).json<{ apiKey: string }>().apiKey
      const endpoints: string[] = []
      for (const key of [account.apiKey, testKey]) {
        const created = await publicClient(own, key).post('/webhooks', { url: 'http://127.0.0.1:9/hooks', events: ['letter.received'] })
        expect(created.statusCode, created.body).toBe(201)
        endpoints.push(created.json<{ id: string }>().id)
      }
      const live = await sendSingle(own, account)
      const test = await sendSingle(own, { ...account, apiKey: testKey })
      // The jobs as the dispatcher queues them: ids only.
      const jobIds = { [live]: randomUUID(), [test]: randomUUID() }
      for (const letterId of [live, test]) await own.queues.production.add('produce-letter', { letterId }, { jobId: jobIds[letterId] })
      const events = await own.db
        .select({ id: webhookEvents.id, endpointId: webhookEvents.endpointId })
        .from(webhookEvents)
        .where(inArray(webhookEvents.endpointId, endpoints))
      expect(events).toHaveLength(2)
      for (const event of events) await own.queues.webhooks.add('deliver-webhook', { eventId: event.id }, { jobId: event.id })

      const board = (url: string) => own.inject({ method: 'GET', url, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
      const listed = async (queue: string) => {
        const response = await board(`/ops/queues/api/queues?activeQueue=${queue}&status=waiting&jobsPerPage=50`)
        expect(response.statusCode, response.body).toBe(200)
        const found = response
          .json<{ queues: Array<{ name: string; description?: string; jobs: Array<{ id: string; name: string }> }> }>()
          .queues.find((entry) => entry.name === queue)!
        expect(found.description).toMatch(/cartas de prueba/)
        return Object.fromEntries(found.jobs.map((job) => [job.id, job.name]))
      }
      expect(await listed('production')).toEqual({ [jobIds[live]!]: 'produce-letter', [jobIds[test]!]: 'produce-letter (prueba)' })
      const testEvent = events.find((event) => event.endpointId === endpoints[1])!.id
      const liveEvent = events.find((event) => event.endpointId === endpoints[0])!.id
      expect(await listed('webhooks')).toEqual({ [liveEvent]: 'deliver-webhook', [testEvent]: 'deliver-webhook (prueba)' })

      const page = await board(`/ops/queues/api/queues/production/${jobIds[test]}`)
      expect(page.statusCode, page.body).toBe(200)
      expect(page.json<{ job: { name: string; data: unknown } }>().job).toMatchObject({ name: 'produce-letter (prueba)', data: { letterId: test } })
      expect((await own.queues.production.getJob(jobIds[test]!))?.name).toBe('produce-letter')
    } finally {
      await Promise.all(Object.values(own.queues).map((queue) => queue.obliterate({ force: true })))
      await own.close()
      await deleteKeys(own.config.redisUrl, `${queuePrefix}*`)
    }
  })
})
