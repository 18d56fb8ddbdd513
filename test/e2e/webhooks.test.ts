import { describe, expect } from 'vitest'
import { startWebhookWorker } from '@letters/webhook-worker/worker'
import { adminAccount } from '../support/accounts.js'
import { reachStatus, silentLog } from '../support/pipeline.js'
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js'
import { it as base } from '../support/fixtures.js'

/**
 * A webhook worker on the pipeline, the account's endpoint (`receiver`, with its `secret`) and
 * another account's (`otherReceiver`), for the whole file: each receiver keeps every request
 * it got from the file's tests.
 */
const it = base.extend('webhooks', { scope: 'file' }, async ({ pipeline }, { onCleanup }) => {
  const webhookWorker = startWebhookWorker({ config: pipeline.config, db: pipeline.app.db, log: silentLog })
  // The account's receiver answers 500 to the first request of each event, then 204.
  const seen = new Set<string>()
  const receiver = await startWebhookReceiver((_, webhook) => {
    const id = String(webhook.headers['webhook-id'])
    if (seen.has(id)) return 204
    seen.add(id)
    return 500
  })
  const otherReceiver = await startWebhookReceiver(() => 204)
  onCleanup(async () => {
    await webhookWorker.close()
    await receiver.close()
    await otherReceiver.close()
  })
  const created = await pipeline.client('POST', '/webhooks', { url: receiver.url })
  expect(created.statusCode, created.body).toBe(201)
  const secret = created.json<{ secret: string }>().secret
  // Another account, with an endpoint of its own, subscribed to everything.
  const other = await adminAccount(pipeline.app, 10)
  const theirs = await pipeline.app.inject({ method: 'POST', url: '/webhooks', headers: { 'x-api-key': other.apiKey }, payload: { url: otherReceiver.url } })
  expect(theirs.statusCode, theirs.body).toBe(201)
  return { receiver, otherReceiver, secret }
})
it.override({
  pipelineOptions: { label: 'webhooks', env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_SCHEDULE: '300,300,300', WEBHOOK_TIMEOUT_MS: '2000' } },
})

/** The deliveries that reached the receiver for a letter, first of each webhook-id, verified. */
function verifiedFor({ receiver, secret }: { receiver: WebhookReceiver; secret: string }, letterId: string) {
  const firsts = new Map<string, ReturnType<WebhookReceiver['verify']>>()
  for (const webhook of receiver.received) {
    const payload = receiver.verify(secret, webhook)
    if (payload.data.id === letterId && !firsts.has(String(webhook.headers['webhook-id']))) firsts.set(String(webhook.headers['webhook-id']), payload)
  }
  return [...firsts.values()]
}

describe('webhooks on the running pipeline', () => {
  it('delivers a signed webhook for every status a letter passes through, each retried after a 500 with the same webhook-id', async ({
    pipeline,
    webhooks,
  }) => {
    const id = await pipeline.send({ inkColor: 'purple' })
    await reachStatus(pipeline, id, 'printed')
    const mailed = await pipeline.admin('POST', `/admin/cards/${id}/mailed`)
    expect(mailed.statusCode, mailed.body).toBe(200)
    const statuses = ['received', 'ready_for_print', 'printing', 'printed', 'mailed']
    await expect
      .poll(
        () =>
          verifiedFor(webhooks, id)
            .map((payload) => payload.type)
            .sort(),
        { timeout: 20_000, interval: 100 },
      )
      .toEqual(statuses.map((status) => `letter.${status}`).sort())

    // Every event came twice (a 500, then the retry), under one webhook-id and with the same body.
    const requestsFor = () => webhooks.receiver.received.filter((webhook) => webhook.json.data.id === id)
    await expect.poll(() => requestsFor().length, { timeout: 20_000, interval: 100 }).toBe(statuses.length * 2)
    const requests = requestsFor()
    const byId = new Map<string, typeof requests>()
    for (const webhook of requests) byId.set(String(webhook.headers['webhook-id']), [...(byId.get(String(webhook.headers['webhook-id'])) ?? []), webhook])
    expect(byId.size).toBe(statuses.length)
    for (const pair of byId.values()) expect(pair.map((webhook) => webhook.body)).toEqual([pair[0]!.body, pair[0]!.body])
    // Each body is the letter as GET /cards/{id} shows it, its ink with it.
    for (const payload of verifiedFor(webhooks, id)) expect(payload.data).toMatchObject({ id, inkColor: 'purple' })

    // Each body is the letter as it was at its change; the last is the letter as GET /cards shows it, without events.
    for (const payload of verifiedFor(webhooks, id)) expect(payload.data.status).toBe(payload.type.slice('letter.'.length))
    const { events: _events, ...card } = await pipeline.card(id)
    const last = verifiedFor(webhooks, id).find((payload) => payload.type === 'letter.mailed')!
    expect(last.data).toEqual(card)
    expect(verifiedFor(webhooks, id).find((payload) => payload.type === 'letter.received')!.data.address).toBeNull()
  })

  it("numbers each letter's events 1, 2, 3… in the order of its statuses, in every body whatever order they arrive in, and GET /events lists the same", async ({
    pipeline,
    webhooks,
  }) => {
    const id = await pipeline.send()
    await reachStatus(pipeline, id, 'printed')
    const mailed = await pipeline.admin('POST', `/admin/cards/${id}/mailed`)
    expect(mailed.statusCode, mailed.body).toBe(200)
    const statuses = ['received', 'ready_for_print', 'printing', 'printed', 'mailed']
    await expect.poll(() => verifiedFor(webhooks, id).length, { timeout: 20_000, interval: 100 }).toBe(statuses.length)
    const bySequence = verifiedFor(webhooks, id).sort((a, b) => a.sequence! - b.sequence!)
    expect(bySequence.map((payload) => [payload.sequence, payload.type])).toEqual(statuses.map((status, n) => [n + 1, `letter.${status}`]))
    // The instants of the changes follow the same order.
    const instants = bySequence.map((payload) => Date.parse(payload.occurredAt!))
    expect([...instants].sort((a, b) => a - b)).toEqual(instants)
    const listed = (await pipeline.client('GET', `/events?cardId=${id}`)).json<{ data: Array<{ id: string; sequence: number; type: string }> }>().data
    expect(listed.map((event) => [event.id, event.sequence, event.type])).toEqual(
      bySequence.map((payload) => [payload.id, payload.sequence, payload.type]).reverse(),
    )
  })

  it('tells of a refused address', async ({ pipeline, webhooks }) => {
    const rejected = await pipeline.send({ address: '...' })
    await reachStatus(pipeline, rejected, 'address_rejected')
    await expect
      .poll(
        () =>
          verifiedFor(webhooks, rejected)
            .map((payload) => payload.type)
            .sort(),
        { timeout: 20_000, interval: 100 },
      )
      .toEqual(['letter.address_rejected', 'letter.received'])
  })

  it("delivers nothing to another account's endpoint", async ({ webhooks }) => {
    // Every letter of the file went through above; the other account's receiver got none of them.
    expect(webhooks.receiver.received.length).toBeGreaterThan(0)
    expect(webhooks.otherReceiver.received).toEqual([])
  })
})
