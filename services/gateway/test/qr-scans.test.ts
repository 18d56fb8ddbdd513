import { Writable } from 'node:stream'
import { describe, expect } from 'vitest'
import { eq, sql } from 'drizzle-orm'
import { QR_CODE_PATTERN, QR_SCANNED_EVENT, QR_SCANS_COUNTED_PER_MINUTE, type LetterEvent, type QrScanKind } from '@letters/contracts'
import { letters, qrScans, webhookEvents, type Db } from '@letters/db'
import { loggerOptions, metrics } from '@letters/observability'
import { OutboxDispatcher } from '@letters/pipeline'
import { HistoryRetention } from '@letters/webhook-worker/history-retention'
import { startWebhookWorker } from '@letters/webhook-worker/worker'
import { verifiedAddress } from '@letters/test/support/factories'
import { it as base } from '@letters/test/support/fixtures'
import type { Account } from '@letters/test/support/gateway'
import { silentLog } from '@letters/test/support/pipeline'
import { removeEndpoints, startWebhookReceiver } from '@letters/test/support/webhook-receiver'
import { buildGateway, type App } from '../src/server.js'
import { destination } from '../src/features/qr/routes/redirect.js'
import { publicClient, sendSingle } from './helpers.js'

const TRACKING_URL = 'https://tienda.example.com/gracias?utm_source=carta&ref=qr'

interface Tracked {
  id: string
  code: string
}

/**
 * On a database of its own: the file's webhook worker delivers every pending webhook of it. The
 * worker (with the gateway's outbox dispatcher) runs only for the tests that ask for it.
 */
const it = base
  .extend('tracked', ({ gateway: app, account }) => async (owner: Account = account): Promise<Tracked> => {
    const id = await sendSingle(app, owner, { trackingUrl: TRACKING_URL })
    const [row] = await app.db.select({ code: letters.trackingCode }).from(letters).where(eq(letters.id, id))
    expect(row?.code).toMatch(QR_CODE_PATTERN)
    return { id, code: row!.code! }
  })
  .extend('webhookWorker', { scope: 'file' }, ({ gateway: app }, { onCleanup }) => {
    const dispatcher = new OutboxDispatcher(app.db, app.queues, silentLog, { idleMs: 50, maxBackoffMs: 500, sendTimeoutMs: 1000 })
    dispatcher.start()
    const worker = startWebhookWorker({ config: app.config, db: app.db, log: silentLog })
    onCleanup(async () => {
      await dispatcher.stop()
      await worker.close()
    })
    return worker
  })
it.override({ gatewayOptions: { isolate: 'qrscans', env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } } })

interface ScanOptions {
  query?: string
  method?: 'GET' | 'HEAD'
  headers?: Record<string, string>
}

const scan = (app: App, code: string, options: ScanOptions = {}) =>
  app.inject({
    method: options.method ?? 'GET',
    url: `/q/${code}${options.query ?? ''}`,
    headers: { 'user-agent': 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148', ...options.headers },
  })

const kindsOf = async (db: Db, letterId: string) =>
  (await db.select({ kind: qrScans.kind }).from(qrScans).where(eq(qrScans.letterId, letterId))).map((row) => row.kind).sort()

const trackingOf = async (app: App, owner: Account, id: string) => {
  const card = await publicClient(app, owner.apiKey).get(`/cards/${id}`)
  expect(card.statusCode, card.body).toBe(200)
  return card.json<{ tracking: { url: string; scans: number; firstScannedAt: string | null; lastScannedAt: string | null } }>().tracking
}

const scanEvents = async (app: App, owner: Account, id: string) => {
  const listed = await publicClient(app, owner.apiKey).get(`/events?cardId=${id}&type=${QR_SCANNED_EVENT}`)
  expect(listed.statusCode, listed.body).toBe(200)
  type ScanEvent = LetterEvent & { data: { scans: number; firstScannedAt: string; lastScannedAt: string; tracking: { scans: number } } }
  return listed.json<{ data: ScanEvent[] }>().data
}

const times = (n: number) => Array.from({ length: n }, (_, i) => i)

/** letters_qr_scans_total by kind, as this process counts it. */
const countedByKind = async (): Promise<Partial<Record<QrScanKind, number>>> =>
  Object.fromEntries((await metrics.qrScans.get()).values.map((sample) => [sample.labels.kind, sample.value]))
const added = (before: Partial<Record<QrScanKind, number>>, after: Partial<Record<QrScanKind, number>>) =>
  Object.fromEntries(
    Object.entries(after).flatMap(([kind, value]) => (value === (before[kind as QrScanKind] ?? 0) ? [] : [[kind, value - (before[kind as QrScanKind] ?? 0)]])),
  )

describe('GET /q/{code}', () => {
  it('redirects a scan to the letter’s URL with the request’s query parameters, and counts it', async ({ gateway: app, account, tracked }) => {
    const { id, code } = await tracked()
    const before = Date.now()
    const response = await scan(app, code, { query: '?utm_source=qr&utm_campaign=oto%C3%B1o' })
    expect(response.statusCode, response.body).toBe(302)
    // The URL's own `ref` stays, its `utm_source` gives way to the request's.
    expect(response.headers.location).toBe('https://tienda.example.com/gracias?ref=qr&utm_source=qr&utm_campaign=oto%C3%B1o')
    expect(response.headers['cache-control']).toBe('no-store')
    expect(response.headers['referrer-policy']).toBe('no-referrer')
    expect(response.body).toBe('')

    const tracking = await trackingOf(app, account, id)
    expect(tracking).toEqual({ url: TRACKING_URL, scans: 1, firstScannedAt: expect.stringMatching(/Z$/), lastScannedAt: tracking.firstScannedAt })
    expect(Date.parse(tracking.firstScannedAt!)).toBeGreaterThanOrEqual(before - 1000)
    expect(Date.parse(tracking.firstScannedAt!)).toBeLessThanOrEqual(Date.now() + 1000)
    expect(await kindsOf(app.db, id)).toEqual(['counted'])

    // Without parameters of its own, the letter's URL as it is; a second scan moves the last instant only.
    const again = await scan(app, code)
    expect(again.headers.location).toBe(TRACKING_URL)
    const after = await trackingOf(app, account, id)
    expect(after).toMatchObject({ scans: 2, firstScannedAt: tracking.firstScannedAt })
    expect(Date.parse(after.lastScannedAt!)).toBeGreaterThanOrEqual(Date.parse(tracking.firstScannedAt!))
  })

  it('redirects a HEAD, prefetches and link previews without counting them', async ({ gateway: app, account, tracked }) => {
    const { id, code } = await tracked()
    const prefetches: ScanOptions[] = [
      { method: 'HEAD' as const },
      { headers: { 'sec-purpose': 'prefetch;prerender' } },
      { headers: { purpose: 'prefetch' } },
      { headers: { 'x-moz': 'prefetch' } },
      { headers: { 'x-purpose': 'preview' } },
    ]
    const previews: ScanOptions[] = [
      'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)',
      'WhatsApp/2.23.20.0',
      'Twitterbot/1.0',
      'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
      'TelegramBot (like TwitterBot)',
      'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)',
      'Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)',
      'Mozilla/5.0 (compatible; Google-InspectionTool/1.0)',
      'Mediapartners-Google',
      'curl/8.0.1',
      'python-requests/2.31.0',
      // A phone's browser always names itself.
      '',
    ].map((agent) => ({ headers: { 'user-agent': agent } }))
    const before = await countedByKind()
    for (const options of [...prefetches, ...previews]) {
      const response = await scan(app, code, { ...options, query: '?utm_source=qr' })
      expect(response.statusCode, JSON.stringify(options)).toBe(302)
      expect(response.headers.location).toBe('https://tienda.example.com/gracias?ref=qr&utm_source=qr')
    }
    expect(await trackingOf(app, account, id)).toEqual({ url: TRACKING_URL, scans: 0, firstScannedAt: null, lastScannedAt: null })
    expect(await kindsOf(app.db, id)).toEqual([...times(prefetches.length).map(() => 'prefetch'), ...times(previews.length).map(() => 'preview')])
    expect(await scanEvents(app, account, id)).toEqual([])
    expect(added(before, await countedByKind())).toEqual({ prefetch: prefetches.length, preview: previews.length })

    // A phone whose maker's name ends in "bot" is a person scanning.
    expect((await scan(app, code, { headers: { 'user-agent': 'Mozilla/5.0 (Linux; Android 9; CUBOT P30) Mobile Safari/537.36' } })).statusCode).toBe(302)
    expect((await trackingOf(app, account, id)).scans).toBe(1)
  })

  it(`counts ${QR_SCANS_COUNTED_PER_MINUTE} of 30 scans of one code at once, and redirects the rest as limited`, async ({ gateway: app, account, tracked }) => {
    const { id, code } = await tracked()
    const before = await countedByKind()
    const responses = await Promise.all(times(30).map(() => scan(app, code)))
    expect(responses.map((response) => response.statusCode)).toEqual(times(30).map(() => 302))
    expect(new Set(responses.map((response) => response.headers.location))).toEqual(new Set([TRACKING_URL]))
    const kinds = await kindsOf(app.db, id)
    expect(kinds.filter((kind) => kind === 'counted')).toHaveLength(QR_SCANS_COUNTED_PER_MINUTE)
    expect(kinds.filter((kind) => kind === 'limited')).toHaveLength(30 - QR_SCANS_COUNTED_PER_MINUTE)
    expect((await trackingOf(app, account, id)).scans).toBe(QR_SCANS_COUNTED_PER_MINUTE)
    expect(added(before, await countedByKind())).toEqual({ counted: QR_SCANS_COUNTED_PER_MINUTE, limited: 30 - QR_SCANS_COUNTED_PER_MINUTE })
    // One event for them all, none of the counts lost.
    const events = await scanEvents(app, account, id)
    expect(events.map((event) => event.data.scans)).toEqual([QR_SCANS_COUNTED_PER_MINUTE])
  })

  it('makes the scans of 30 minutes one letter.qr_scanned event, sent once by webhook, and a later scan a new one', async ({
    gateway: app,
    account,
    tracked,
    webhookWorker: _worker,
  }) => {
    const receiver = await startWebhookReceiver()
    try {
      const created = await publicClient(app, account.apiKey).post('/webhooks', { url: receiver.url, events: [QR_SCANNED_EVENT] })
      expect(created.statusCode, created.body).toBe(201)
      const { id, code } = await tracked()
      const delivered = () => receiver.received.filter((webhook) => webhook.json.data.id === id)

      expect((await scan(app, code)).statusCode).toBe(302)
      await expect.poll(() => delivered().length, { timeout: 15_000, interval: 50 }).toBe(1)
      expect((await scan(app, code)).statusCode).toBe(302)

      const [event, ...others] = await scanEvents(app, account, id)
      expect(others).toEqual([])
      const tracking = await trackingOf(app, account, id)
      expect(event).toMatchObject({
        type: QR_SCANNED_EVENT,
        // The letter is still in its first status: a scan is no change of it.
        sequence: 1,
        occurredAt: tracking.firstScannedAt,
        data: { id, status: 'received', scans: 2, firstScannedAt: tracking.firstScannedAt, lastScannedAt: tracking.lastScannedAt, tracking },
      })
      // The webhook told of the window's first scan, and is not sent again for the second.
      const [webhook] = delivered()
      expect(webhook!.json).toMatchObject({ id: event!.id, type: QR_SCANNED_EVENT, sequence: 1, occurredAt: event!.occurredAt, data: { scans: 1 } })
      const endpointRows = () =>
        app.db
          .select({ id: webhookEvents.id })
          .from(webhookEvents)
          .where(sql`(${webhookEvents.body}::json -> 'data' ->> 'id') = ${id}`)
      expect(await endpointRows()).toHaveLength(1)

      // Once the window is over, the next scan is a new event, with a webhook of its own.
      await app.db.execute(sql`UPDATE events SET occurred_at = occurred_at - interval '31 minutes' WHERE letter_id = ${id} AND type = ${QR_SCANNED_EVENT}`)
      expect((await scan(app, code)).statusCode).toBe(302)
      const listed = await scanEvents(app, account, id)
      expect(listed.map((listedEvent) => [listedEvent.id === event!.id, listedEvent.data.scans])).toEqual([
        [false, 3],
        [true, 2],
      ])
      await expect.poll(() => delivered().map((received) => received.json.data.scans), { timeout: 15_000, interval: 50 }).toEqual([1, 3])
      expect(await endpointRows()).toHaveLength(2)
    } finally {
      await removeEndpoints(app.db, account.id)
      await receiver.close()
    }
  })

  it.for([
    ['an unknown code', 'zzzzzzzzzzzz'],
    ['a code too short', 'abc'],
    ['a code with characters no code has', '0O1lI0O1lI0O'],
    ['a code too long', 'a'.repeat(60)],
  ])('answers %s with a page in Spanish, recording nothing', async ([, code], { gateway: app }) => {
    const scansStored = async () => (await app.db.execute<{ count: number }>(sql`SELECT count(*)::int AS count FROM qr_scans`))[0]!.count
    const before = await scansStored()
    const response = await scan(app, code!)
    expect(response.statusCode).toBe(404)
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(response.headers['cache-control']).toBe('no-store')
    expect(response.body).toMatch(/^<!doctype html>\n<html lang="es">/)
    expect(response.body).toContain('no corresponde a ninguna de nuestras cartas')
    expect(response.body).not.toMatch(/"error"/)
    expect((await scan(app, code!, { method: 'HEAD' })).statusCode).toBe(404)
    expect(await scansStored()).toBe(before)
  })

  it('still redirects and counts the scans of a letter whose personal data was erased', async ({ gateway: app, account, tracked }) => {
    const { id, code } = await tracked()
    expect((await scan(app, code)).statusCode).toBe(302)
    // As the workers would have left a mailed letter.
    await app.db.update(letters).set({ status: 'mailed', address: verifiedAddress() }).where(eq(letters.id, id))
    const erased = await publicClient(app, account.apiKey).delete(`/cards/${id}/personal-data`)
    expect(erased.statusCode, erased.body).toBe(204)

    const response = await scan(app, code)
    expect(response.statusCode).toBe(302)
    expect(response.headers.location).toBe(TRACKING_URL)
    expect((await trackingOf(app, account, id)).scans).toBe(2)
    const [event] = await scanEvents(app, account, id)
    expect(event!.data).toMatchObject({ scans: 2, message: '', recipient: { name: '', surname: '' }, personalDataErasedAt: expect.stringMatching(/Z$/) })
  })
})

describe('what a scan leaves behind', () => {
  it('a row of its time and kind only: no address, no user agent', async ({ gateway: app }) => {
    const columns = await app.db.execute<{ column_name: string }>(
      sql`SELECT column_name FROM information_schema.columns WHERE table_name = 'qr_scans' AND table_schema = current_schema() ORDER BY ordinal_position`,
    )
    expect(columns.map((column) => column.column_name)).toEqual(['id', 'letter_id', 'kind', 'at'])
  })

  it('logs neither the address, the user agent nor the code of a request under the link, routed or not, though every request is logged', async ({
    gateway: app,
    account,
    tracked,
  }) => {
    const { code } = await tracked()
    const lines: string[] = []
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString())
        done()
      },
    })
    const logged = await buildGateway({ config: app.config, db: app.db, logger: { ...loggerOptions('gateway', 'info'), stream: sink } })
    try {
      await logged.ready()
      const address = '198.51.100.23'
      const agent = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) EscaneoDePrueba/7731'
      for (const method of ['GET', 'HEAD'] as const) {
        const response = await logged.inject({
          method,
          url: `/q/${code}?utm_source=qr`,
          remoteAddress: address,
          headers: { 'user-agent': agent, 'x-forwarded-for': '203.0.113.9' },
        })
        expect(response.statusCode).toBe(302)
      }
      expect((await logged.inject({ method: 'GET', url: '/q/zzzzzzzzzzzz', remoteAddress: address, headers: { 'user-agent': agent } })).statusCode).toBe(404)
      // Requests under the link that no route takes: a method it does not answer, a stray slash, a broken escape.
      for (const [method, url] of [
        ['OPTIONS', `/q/${code}`],
        ['GET', `/q/${code}/`],
        ['GET', `/q//${code}`],
        ['GET', `/q/${code}%`],
        ['GET', '/q'],
        ['GET', `/q?utm_source=${code}`],
        ['GET', `/Q/${code}`],
        ['GET', `/q%2F${code}`],
      ] as const) {
        const stray = await logged.inject({ method, url, remoteAddress: address, headers: { 'user-agent': agent } })
        expect(stray.statusCode, `${method} ${url}`).toBeGreaterThanOrEqual(400)
      }
      const text = lines.join('')
      expect(text).toContain('/q/:code')
      expect(text).toContain('request completed')
      for (const kept of [address, '203.0.113.9', agent, 'EscaneoDePrueba', 'remoteAddress', 'remotePort', 'utm_source', code]) expect(text).not.toContain(kept)
    } finally {
      await logged.close()
    }
    expect((await trackingOf(app, account, (await app.db.select({ id: letters.id }).from(letters).where(eq(letters.trackingCode, code)))[0]!.id)).scans).toBe(1)
  })

  it('is deleted once older than the events it could have made, by the history retention', async ({ gateway: app, tracked }) => {
    const { id, code } = await tracked()
    for (const _ of times(3)) expect((await scan(app, code)).statusCode).toBe(302)
    // The two earliest scans, as if made 31 days ago.
    await app.db.execute(sql`
      UPDATE qr_scans SET at = at - interval '31 days'
      WHERE id IN (SELECT id FROM qr_scans WHERE letter_id = ${id} ORDER BY id LIMIT 2)`)
    await new HistoryRetention(app.db, silentLog).trimOnce()
    const left = await app.db.select({ at: qrScans.at }).from(qrScans).where(eq(qrScans.letterId, id))
    expect(left).toHaveLength(1)
    expect(Date.now() - left[0]!.at.getTime()).toBeLessThan(60_000)
  })
})

describe('the link’s place in /openapi.json', () => {
  it('is documented without security, its 302 with Location and its 404 as a page', async ({ gateway: app }) => {
    const document = (await app.inject({ method: 'GET', url: '/openapi.json' })).json<{
      paths: Record<
        string,
        Record<string, { security: unknown; responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, unknown> }> }>
      >
    }>()
    const operation = document.paths['/q/{code}']!.get!
    expect(operation.security).toEqual([])
    expect(Object.keys(operation.responses).sort()).toEqual(['302', '400', '404', '429', '500', '503'])
    expect(operation.responses['302']!.headers).toHaveProperty('Location')
    expect(operation.responses['302']!.content).toBeUndefined()
    expect(Object.keys(operation.responses['404']!.content!)).toEqual(['text/html'])
  })
})

describe('destination', () => {
  it.for([
    ['keeps the URL as it is without parameters of the request', 'https://a.example/p?x=1#top', '/q/c', 'https://a.example/p?x=1#top'],
    ['adds them after the URL’s, before its fragment', 'https://a.example/p?x=1#top', '/q/c?y=2&z=3', 'https://a.example/p?x=1&y=2&z=3#top'],
    ['lets one replace every pair of the URL of the same name', 'https://a.example/p?x=1&x=2&k=%2C', '/q/c?x=3', 'https://a.example/p?k=%2C&x=3'],
    ['takes names as a form does', 'https://a.example/p?utm_source=a', '/q/c?utm%5Fsource=b', 'https://a.example/p?utm%5Fsource=b'],
    ['percent-encodes what a header cannot carry', 'https://tienda.example/añadir?q=ñ', '/q/c?r=é', 'https://tienda.example/a%C3%B1adir?q=%C3%B1&r=%C3%A9'],
  ])('%s', ([, url, requestUrl, expected]) => {
    expect(destination(url!, requestUrl!)).toBe(expected)
  })
})
