import { randomUUID } from 'node:crypto'
import { once } from 'node:events'
import { createServer, type ServerResponse } from 'node:http'
import { describe, expect } from 'vitest'
import { eq } from 'drizzle-orm'
import type { App } from '@letters/gateway/server'
import { webhookEvents } from '@letters/db'
import type { PublicClient } from '@letters/test/support/gateway'
import { startWebhookReceiver, type WebhookReceiver, removeEndpoints } from '@letters/test/support/webhook-receiver'
import { deliverEvent, DISABLE_AFTER_FAILED_EVENTS, retryDelay } from '../src/deliver.js'
import { send } from '../src/send.js'
import { it as base } from './fixtures.js'

/** Two quick retries, a short timeout: the schedule's shape, at test speed. */
const env = { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_SCHEDULE: '300,300', WEBHOOK_TIMEOUT_MS: '1000' }

// A database and queue prefix of its own: the dispatcher and the worker would take other files' rows and jobs.
const it = base.extend({ gatewayOptions: { isolate: 'webhooks', checkContract: false, env } })

const receivers: WebhookReceiver[] = []
it.afterEach(async ({ gateway }) => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()))
  await removeEndpoints(gateway.db)
})

async function endpointFor(client: PublicClient, answer: Parameters<typeof startWebhookReceiver>[0], url?: (receiver: WebhookReceiver) => string) {
  const receiver = await startWebhookReceiver(answer)
  receivers.push(receiver)
  const response = await client.post('/webhooks', { url: url ? url(receiver) : receiver.url })
  expect(response.statusCode, response.body).toBe(201)
  return { receiver, endpoint: response.json<{ id: string; secret: string }>() }
}

/**
 * Columns of an event the test delivers itself, by its lease: held for an hour, so the running
 * worker's admission leaves it alone.
 */
const heldByTest = () => ({ leaseId: randomUUID(), leasedUntil: new Date(Date.now() + 3_600_000) })
const leaseOf = (event: { id: string; leaseId: string | null }) => ({ eventId: event.id, leaseId: event.leaseId! })

/**
 * A bare HTTP server on 127.0.0.1 that records each request as `METHOD /path`, whatever its body
 * (a redirect followed as a GET has none), and answers it with `answer`.
 */
async function startRecorder(answer: (response: ServerResponse) => void) {
  const hits: string[] = []
  const server = createServer((request, response) => {
    hits.push(`${request.method} ${request.url}`)
    request.resume()
    request.on('end', () => answer(response))
  }).listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    hits,
    async close() {
      server.closeAllConnections()
      server.close()
      await once(server, 'close')
    },
  }
}

const sendTest = async (client: PublicClient, endpointId: string) => (await client.post(`/webhooks/${endpointId}/test`, {})).json<{ eventId: string }>().eventId
const deliveries = async (client: PublicClient, endpointId: string) =>
  (await client.get(`/webhooks/${endpointId}/deliveries`)).json<{
    data: Array<{ eventId: string; attempt: number; statusCode: number | null; error: string | null; outcome: string; nextAttemptAt: string | null }>
  }>().data

describe('delivering a webhook', () => {
  it('sends the Standard Webhooks headers and a signature the standardwebhooks package verifies', async ({ client }) => {
    const { receiver, endpoint } = await endpointFor(client, () => 204)
    const eventId = await sendTest(client, endpoint.id)
    await expect.poll(() => receiver.received.length, { timeout: 10_000, interval: 50 }).toBe(1)
    const [webhook] = receiver.received
    expect(webhook!.headers).toMatchObject({
      'webhook-id': eventId,
      'content-type': 'application/json',
      'webhook-signature': expect.stringMatching(/^v1,[A-Za-z0-9+/]+=*$/),
    })
    expect(Math.abs(Number(webhook!.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30)
    expect(receiver.verify(endpoint.secret, webhook!)).toEqual({ type: 'webhook.test', timestamp: expect.any(String), data: { webhookId: endpoint.id } })
    // Another secret does not verify it.
    expect(() => receiver.verify(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, webhook!)).toThrow()
    await expect
      .poll(() => deliveries(client, endpoint.id), { timeout: 5000, interval: 50 })
      .toEqual([expect.objectContaining({ eventId, attempt: 1, statusCode: 204, error: null, outcome: 'delivered', nextAttemptAt: null })])
  })

  it('retries a 500 with the same webhook-id and body, then records the success', async ({ client }) => {
    const { receiver, endpoint } = await endpointFor(client, (n) => (n === 0 ? 500 : 200))
    const eventId = await sendTest(client, endpoint.id)
    await expect.poll(() => receiver.received.length, { timeout: 10_000, interval: 50 }).toBe(2)
    const [first, second] = receiver.received
    expect([first!.headers['webhook-id'], second!.headers['webhook-id']]).toEqual([eventId, eventId])
    expect(second!.body).toBe(first!.body)
    for (const webhook of receiver.received) receiver.verify(endpoint.secret, webhook)
    await expect
      .poll(() => deliveries(client, endpoint.id), { timeout: 5000, interval: 50 })
      .toEqual([
        expect.objectContaining({ attempt: 2, statusCode: 200, outcome: 'delivered' }),
        expect.objectContaining({ attempt: 1, statusCode: 500, outcome: 'retrying', nextAttemptAt: expect.any(String) }),
      ])
  })

  it('gives up after the last retry of the schedule and shows the delivery failed', async ({ gateway: app, client }) => {
    const { receiver, endpoint } = await endpointFor(client, () => 503)
    const eventId = await sendTest(client, endpoint.id)
    await expect
      .poll(() => deliveries(client, endpoint.id), { timeout: 10_000, interval: 50 })
      .toEqual([
        expect.objectContaining({ attempt: 3, statusCode: 503, outcome: 'failed', nextAttemptAt: null }),
        expect.objectContaining({ attempt: 2, outcome: 'retrying' }),
        expect.objectContaining({ attempt: 1, outcome: 'retrying' }),
      ])
    expect(receiver.received).toHaveLength(3)
    expect((await app.db.select().from(webhookEvents).where(eq(webhookEvents.id, eventId)))[0]).toMatchObject({ state: 'failed', attempts: 3 })
  })

  it('sends a delivery again when asked (POST …/retry): the same webhook-id and body, recorded as its next attempt', async ({ client }) => {
    const { receiver, endpoint } = await endpointFor(client, () => 204)
    const eventId = await sendTest(client, endpoint.id)
    await expect
      .poll(() => deliveries(client, endpoint.id), { timeout: 10_000, interval: 50 })
      .toEqual([expect.objectContaining({ attempt: 1, outcome: 'delivered' })])
    const retried = await client.post(`/webhooks/${endpoint.id}/deliveries/${eventId}/retry`, {})
    expect(retried.statusCode, retried.body).toBe(202)
    await expect.poll(() => receiver.received.length, { timeout: 10_000, interval: 50 }).toBe(2)
    const [first, again] = receiver.received
    expect(again!.headers['webhook-id']).toBe(eventId)
    expect(again!.body).toBe(first!.body)
    await expect
      .poll(() => deliveries(client, endpoint.id), { timeout: 5000, interval: 50 })
      .toEqual([expect.objectContaining({ attempt: 2, outcome: 'delivered' }), expect.objectContaining({ attempt: 1, outcome: 'delivered' })])
  })

  it('does not follow a redirect: a 302 with a Location is a failed attempt, recorded with its status, and the Location gets nothing', async ({
    gateway: app,
    client,
  }) => {
    // Where the 302 points: a follower would turn the POST into a GET there, so any request counts.
    const target = await startRecorder((response) => response.writeHead(204).end())
    const redirecting = await startRecorder((response) => response.writeHead(302, { location: `${target.url}/moved` }).end())
    try {
      const response = await client.post('/webhooks', { url: `${redirecting.url}/webhooks` })
      expect(response.statusCode, response.body).toBe(201)
      const endpoint = response.json<{ id: string }>()
      const eventId = await sendTest(client, endpoint.id)
      await expect
        .poll(async () => (await deliveries(client, endpoint.id))[0], { timeout: 5000, interval: 50 })
        .toMatchObject({ attempt: 1, statusCode: 302, outcome: 'retrying' })
      // Every attempt of the schedule answered by the 302 itself, the last one giving up.
      await expect
        .poll(() => deliveries(client, endpoint.id), { timeout: 10_000, interval: 50 })
        .toEqual([
          expect.objectContaining({ eventId, attempt: 3, statusCode: 302, error: null, outcome: 'failed', nextAttemptAt: null }),
          expect.objectContaining({ eventId, attempt: 2, statusCode: 302, outcome: 'retrying' }),
          expect.objectContaining({ eventId, attempt: 1, statusCode: 302, outcome: 'retrying' }),
        ])
      expect((await app.db.select().from(webhookEvents).where(eq(webhookEvents.id, eventId)))[0]).toMatchObject({ state: 'failed', attempts: 3 })
      expect(redirecting.hits).toEqual(['POST /webhooks', 'POST /webhooks', 'POST /webhooks'])
      expect(target.hits).toEqual([])
    } finally {
      await Promise.all([target.close(), redirecting.close()])
    }
  })

  it('times out a receiver that never answers, while another endpoint is served meanwhile', async ({ client }) => {
    const dead = await endpointFor(client, () => 'hang')
    const live = await endpointFor(client, () => 204)
    const deadEvent = await sendTest(client, dead.endpoint.id)
    await expect.poll(() => dead.receiver.received.length, { timeout: 5000, interval: 20 }).toBe(1)
    await sendTest(client, live.endpoint.id)
    await expect.poll(() => live.receiver.received.length, { timeout: 5000, interval: 20 }).toBe(1)
    await expect
      .poll(async () => (await deliveries(client, dead.endpoint.id)).find((attempt) => attempt.attempt === 1), { timeout: 5000, interval: 50 })
      .toMatchObject({ eventId: deadEvent, error: 'timeout', statusCode: null })
    // The live endpoint was served while the dead receiver still held its delivery.
    const [attempt] = (await deliveries(client, dead.endpoint.id)).filter((entry) => entry.attempt === 1) as unknown as Array<{
      at: string
      durationMs: number
    }>
    expect(live.receiver.received[0]!.at).toBeLessThan(new Date(attempt!.at).getTime() + attempt!.durationMs)
  })

  it('reads at most 1 KB of an answer: a 200 whose body never ends is a success, not a timeout', async ({ client }) => {
    const server = createServer((_, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' })
      response.write('x'.repeat(4096))
    }).listen(0, '127.0.0.1')
    await once(server, 'listening')
    try {
      const response = await client.post('/webhooks', { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/` })
      const endpoint = response.json<{ id: string }>()
      await sendTest(client, endpoint.id)
      await expect
        .poll(async () => (await deliveries(client, endpoint.id))[0], { timeout: 5000, interval: 50 })
        .toMatchObject({ attempt: 1, statusCode: 200, error: null, outcome: 'delivered' })
    } finally {
      server.closeAllConnections()
      server.close()
    }
  })

  it('sends nothing to an endpoint that answers only a connection error, and records it', async ({ client }) => {
    const { receiver, endpoint } = await endpointFor(client, () => 204)
    await receiver.close()
    await sendTest(client, endpoint.id)
    await expect
      .poll(async () => (await deliveries(client, endpoint.id))[0], { timeout: 5000, interval: 50 })
      .toMatchObject({ attempt: 1, error: 'connection', statusCode: null })
  })
})

/**
 * A receiver that holds the first request it gets until `release()`, then answers it and every
 * later one 204: an attempt kept in flight for as long as a test needs.
 */
async function holdingReceiver(client: PublicClient) {
  const received: string[] = []
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  const server = createServer((request, response) => {
    request.resume()
    const answer = () => response.writeHead(204).end()
    if (received.push(String(request.headers['webhook-id'])) === 1) void released.then(answer)
    else answer()
  }).listen(0, '127.0.0.1')
  await once(server, 'listening')
  const created = await client.post('/webhooks', { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/` })
  expect(created.statusCode, created.body).toBe(201)
  receivers.push({
    close: async () => {
      release()
      server.closeAllConnections()
      server.close()
    },
  } as WebhookReceiver)
  return { endpointId: created.json<{ id: string }>().id, received, release }
}

const retryOf = (client: PublicClient, endpointId: string, eventId: string) => client.post(`/webhooks/${endpointId}/deliveries/${eventId}/retry`, {})
const eventRow = async (app: App, eventId: string) => (await app.db.select().from(webhookEvents).where(eq(webhookEvents.id, eventId)))[0]!

describe('a retry asked for while the delivery is in flight', () => {
  it('is refused with 409 while the attempt holds its lease, so no 202 is given for a send that would never come; asked again after, it is sent', async ({
    client,
  }) => {
    const { endpointId, received, release } = await holdingReceiver(client)
    const eventId = await sendTest(client, endpointId)
    await expect.poll(() => received.length, { timeout: 10_000, interval: 20 }).toBe(1)
    const refused = await retryOf(client, endpointId, eventId)
    expect({ status: refused.statusCode, message: refused.json<{ message: string }>().message }).toEqual({
      status: 409,
      message: 'La entrega se está enviando ahora; espera a su resultado (GET /webhooks/{id}/deliveries) y vuelve a pedirlo',
    })
    release()
    await expect
      .poll(() => deliveries(client, endpointId), { timeout: 10_000, interval: 50 })
      .toEqual([expect.objectContaining({ attempt: 1, outcome: 'delivered' })])
    expect(received).toEqual([eventId])

    expect((await retryOf(client, endpointId, eventId)).statusCode).toBe(202)
    await expect.poll(() => received, { timeout: 10_000, interval: 50 }).toEqual([eventId, eventId])
    await expect
      .poll(() => deliveries(client, endpointId), { timeout: 10_000, interval: 50 })
      .toEqual([expect.objectContaining({ attempt: 2, outcome: 'delivered' }), expect.objectContaining({ attempt: 1, outcome: 'delivered' })])
  })

  it('takes back a lease that passed while its worker was stalled: that worker records nothing over the retry, and the delivery is sent again', async ({
    gateway: app,
    client,
  }) => {
    const { endpointId, received, release } = await holdingReceiver(client)
    // Due only once retried: the running worker would otherwise take the lapsed lease itself,
    // before the retry is asked for.
    const [event] = await app.db
      .insert(webhookEvents)
      .values({ endpointId, type: 'webhook.test', body: '{}', ...heldByTest(), nextAttemptAt: new Date(Date.now() + 3_600_000) })
      .returning()
    const stalled = deliverEvent(app.db, { timeoutMs: 10_000, retryScheduleMs: [], allowPrivateUrls: true, allowHttp: true }, leaseOf(event!))
    await expect.poll(() => received.length, { timeout: 10_000, interval: 20 }).toBe(1)
    // The worker's lease passes before it records its attempt (a pause of its process, a slow commit).
    await app.db
      .update(webhookEvents)
      .set({ leasedUntil: new Date(Date.now() - 1000) })
      .where(eq(webhookEvents.id, event!.id))
    expect((await retryOf(client, endpointId, event!.id)).statusCode).toBe(202)
    release()
    expect(await stalled).toEqual({ outcome: 'already_done' })
    // The running worker's admission sends it again: recorded as its first attempt, since the stalled one recorded none.
    await expect.poll(() => received, { timeout: 10_000, interval: 50 }).toEqual([event!.id, event!.id])
    await expect
      .poll(() => deliveries(client, endpointId), { timeout: 10_000, interval: 50 })
      .toEqual([expect.objectContaining({ attempt: 1, outcome: 'delivered' })])
  })

  it('sends once for two retries asked for at the same time', async ({ gateway: app, client, webhookWorker }) => {
    const { endpointId, received, release } = await holdingReceiver(client)
    release()
    const eventId = await sendTest(client, endpointId)
    await expect.poll(async () => (await eventRow(app, eventId)).state, { timeout: 10_000, interval: 50 }).toBe('delivered')
    // The admission waits until both have answered, so that both find the delivery not leased yet.
    await webhookWorker.admission.stop()
    try {
      const answers = await Promise.all([retryOf(client, endpointId, eventId), retryOf(client, endpointId, eventId)])
      expect(answers.map((answer) => answer.statusCode)).toEqual([202, 202])
    } finally {
      webhookWorker.admission.start()
    }
    await expect.poll(async () => (await eventRow(app, eventId)).state, { timeout: 10_000, interval: 50 }).toBe('delivered')
    // Time for a second send, were one coming.
    await new Promise((resolve) => setTimeout(resolve, 1000))
    expect(received).toEqual([eventId, eventId])
    expect(await deliveries(client, endpointId)).toEqual([expect.objectContaining({ attempt: 2 }), expect.objectContaining({ attempt: 1 })])
  })
})

describe('jobs that hold no lease', () => {
  it('sends nothing for a job of an older release (its id the event’s), while the admission sends the event once', async ({ gateway: app, client }) => {
    const { receiver, endpoint } = await endpointFor(client, () => 204)
    const eventId = await sendTest(client, endpoint.id)
    // As the previous release queued it: the job's id is the event's, and it holds no lease.
    const legacy = await app.queues.webhooks.add('deliver-webhook', { eventId }, { jobId: eventId })
    await expect
      .poll(async () => (await app.queues.webhooks.getJob(legacy.id!))?.returnvalue, { timeout: 10_000, interval: 50 })
      .toMatch(/superseded|already_done/)
    await expect
      .poll(() => deliveries(client, endpoint.id), { timeout: 10_000, interval: 50 })
      .toEqual([expect.objectContaining({ eventId, outcome: 'delivered' })])
    expect(receiver.received).toHaveLength(1)
  })
})

describe('the delivery-time address check', () => {
  it('refuses to connect to a private address when private URLs are not allowed, whatever was registered', async ({ gateway: app, client }) => {
    const { receiver, endpoint } = await endpointFor(
      client,
      () => 204,
      (r) => r.url.replace('127.0.0.1', 'localhost'),
    )
    const [event] = await app.db
      .insert(webhookEvents)
      .values({ endpointId: endpoint.id, type: 'webhook.test', body: '{}', ...heldByTest() })
      .returning()
    const outcome = await deliverEvent(app.db, { timeoutMs: 1000, retryScheduleMs: [], allowPrivateUrls: false, allowHttp: true }, leaseOf(event!))
    expect(outcome).toEqual({ outcome: 'failed', attempt: 1 })
    expect((await deliveries(client, endpoint.id))[0]).toMatchObject({ error: 'refused_address', statusCode: null })
    expect(receiver.received).toEqual([])
  })

  it('sends nothing to an http:// URL when http is not allowed, even one registered while it was: the attempt fails as refused_address', async ({
    gateway: app,
    client,
  }) => {
    const { receiver, endpoint } = await endpointFor(client, () => 204)
    const [event] = await app.db
      .insert(webhookEvents)
      .values({ endpointId: endpoint.id, type: 'webhook.test', body: '{}', ...heldByTest() })
      .returning()
    const outcome = await deliverEvent(app.db, { timeoutMs: 1000, retryScheduleMs: [], allowPrivateUrls: true, allowHttp: false }, leaseOf(event!))
    expect(outcome).toEqual({ outcome: 'failed', attempt: 1 })
    expect((await deliveries(client, endpoint.id))[0]).toMatchObject({ error: 'refused_address', statusCode: null })
    expect(receiver.received).toEqual([])
  })
})

describe('disabling an endpoint', () => {
  it(`disables an endpoint once its last ${DISABLE_AFTER_FAILED_EVENTS} events all failed, and drops what it had pending`, async ({ gateway: app, client }) => {
    const { endpoint } = await endpointFor(client, () => 500)
    const settings = { timeoutMs: 1000, retryScheduleMs: [], allowPrivateUrls: true, allowHttp: true }
    const failed = Array.from({ length: DISABLE_AFTER_FAILED_EVENTS - 1 }, (_, n) => ({
      endpointId: endpoint.id,
      type: 'webhook.test',
      body: '{}',
      state: 'failed' as const,
      attempts: 1,
      finishedAt: new Date(Date.now() - 60_000 + n),
    }))
    await app.db.insert(webhookEvents).values([{ ...failed[0]!, state: 'delivered' }, ...failed.slice(1)])
    const [first, second, pending] = await app.db
      .insert(webhookEvents)
      .values([0, 1, 2].map(() => ({ endpointId: endpoint.id, type: 'webhook.test', body: '{}', ...heldByTest() })))
      .returning()
    // 48 failed and one success among the last 50: still enabled.
    expect(await deliverEvent(app.db, settings, leaseOf(first!))).toEqual({ outcome: 'failed', attempt: 1 })
    expect((await client.get('/webhooks')).json<{ data: Array<{ disabled: boolean }> }>().data[0]!.disabled).toBe(false)
    // The success drops out of the last 50: disabled.
    expect(await deliverEvent(app.db, settings, leaseOf(second!))).toEqual({ outcome: 'failed', attempt: 1 })
    expect((await client.get('/webhooks')).json<{ data: Array<{ disabled: boolean }> }>().data[0]!.disabled).toBe(true)
    expect(await deliverEvent(app.db, settings, leaseOf(pending!))).toEqual({ outcome: 'dropped' })
  })
})

describe('retryDelay', () => {
  it('follows the schedule with up to 20% of jitter either way, and ends with it', () => {
    const schedule = [5000, 30_000]
    expect(retryDelay(schedule, 1, () => 0)).toBe(4000)
    expect(retryDelay(schedule, 1, () => 1)).toBe(6000)
    expect(retryDelay(schedule, 2, () => 0.5)).toBe(30_000)
    expect(retryDelay(schedule, 3)).toBeUndefined()
  })
})

describe('looking up a receiver', () => {
  it('answers a name DNS cannot resolve with a connection error, not a hang, through the resolver of its own', async () => {
    // A dotted name goes to c-ares (not getaddrinfo's threads); `.invalid` never resolves.
    const result = await send(new URL('https://no-such-receiver.invalid/hooks'), { 'content-type': 'application/json' }, '{}', {
      timeoutMs: 10_000,
      allowPrivate: false,
      allowHttp: false,
    })
    expect(result).toMatchObject({ error: 'connection' })
  })
})
