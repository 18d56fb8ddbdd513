import { describe, expect } from 'vitest'
import { eq, sql } from 'drizzle-orm'
import { webhookEvents } from '@letters/db'
import type { PublicClient } from '@letters/test/support/gateway'
import { it } from '@letters/test/support/fixtures'
import { adminAccount, expectError, publicClient, singleLetter } from './helpers.js'

/** A public address given as an IP literal: no DNS is asked, and nothing is sent to it here (no webhook worker runs). */
const PUBLIC_URL = 'https://93.184.216.34/hooks/letters'

type Event = { id: string; type: string; sequence: number; occurredAt: string; timestamp: string; data: { id: string; status: string; livemode: boolean } }
type Page = { data: Event[]; nextCursor: string | null }

const list = async (client: PublicClient, query = '') => {
  const response = await client.get(`/events${query}`)
  expect(response.statusCode, response.body).toBe(200)
  return response.json<Page>()
}
const send = async (client: PublicClient, account: Parameters<typeof singleLetter>[0], overrides: Record<string, unknown> = {}) => {
  const response = await client.post('/single', singleLetter(account, overrides))
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ cardId: string }>().cardId
}
const createEndpoint = async (client: PublicClient) => {
  const response = await client.post('/webhooks', { url: PUBLIC_URL })
  expect(response.statusCode, response.body).toBe(201)
  return response.json<{ id: string }>().id
}
const summary = (event: Event) => [event.data.id, event.type, event.sequence]

/** The deliveries written for an endpoint (no webhook worker runs here: they stay pending). */
let gatewayDeliveries: (endpointId: string) => Promise<Array<typeof webhookEvents.$inferSelect>>
it.beforeAll(({ gateway }) => {
  gatewayDeliveries = (endpointId) => gateway.db.select().from(webhookEvents).where(eq(webhookEvents.endpointId, endpointId))
})

describe('GET /events', () => {
  it('lets a client catch up on what happened while it had no endpoint: every event of the account, newest first, none sent to the new endpoint', async ({
    client,
    account,
  }) => {
    const first = await createEndpoint(client)
    const early = await send(client, account)
    expect((await client.delete(`/webhooks/${first}`)).statusCode).toBe(204)
    // With no endpoint: the early letter is cancelled, another letter arrives.
    expect((await client.delete(`/cards/${early}`)).statusCode).toBe(200)
    const late = await send(client, account)
    const second = await createEndpoint(client)

    const page = await list(client)
    expect(page.data.map(summary)).toEqual([
      [late, 'letter.received', 1],
      [early, 'letter.cancelled', 2],
      [early, 'letter.received', 1],
    ])
    expect(page.nextCursor).toBeNull()
    expect(page.data[1]!.data.status).toBe('cancelled')
    // Listed, not sent: the endpoint created afterwards has nothing queued.
    expect(await gatewayDeliveries(second)).toEqual([])
  })

  it('lists the very bodies its webhooks carry', async ({ client, account }) => {
    const endpoint = await createEndpoint(client)
    const cardId = await send(client, account)
    const [event] = (await list(client)).data
    const [delivery] = await gatewayDeliveries(endpoint)
    expect(event).toEqual(JSON.parse(delivery!.body))
    expect(event).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      type: 'letter.received',
      sequence: 1,
      occurredAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      data: expect.objectContaining({ id: cardId, status: 'received' }),
    })
    const { events: _events, ...card } = (await client.get(`/cards/${cardId}`)).json<Record<string, unknown>>()
    expect(event!.data).toEqual(card)
  })

  it('lists an event kept from before letters had an ink as it was written, without one', async ({ client, account, gateway }) => {
    const cardId = await send(client, account)
    // As an earlier release wrote the body: the same letter, no inkColor.
    await gateway.db.execute(sql`UPDATE events SET body = (body::jsonb #- '{data,inkColor}')::text WHERE letter_id = ${cardId}`)
    const response = await client.get(`/events?cardId=${cardId}`)
    expect(response.statusCode, response.body).toBe(200)
    const [event] = response.json<{ data: Array<{ data: Record<string, unknown> }> }>().data
    expect(event!.data).toMatchObject({ id: cardId, status: 'received' })
    expect(event!.data).not.toHaveProperty('inkColor')
  })

  it('filters by type, by card, or both; a card of another account has no events here', async ({ client, account, gateway }) => {
    const cancelled = await send(client, account)
    expect((await client.delete(`/cards/${cancelled}`)).statusCode).toBe(200)
    const kept = await send(client, account)
    const stranger = await adminAccount(gateway, 10)
    const theirs = await send(publicClient(gateway, stranger.apiKey), stranger)

    expect((await list(client, '?type=letter.cancelled')).data.map(summary)).toEqual([[cancelled, 'letter.cancelled', 2]])
    expect((await list(client, '?type=letter.received')).data.map(summary)).toEqual([
      [kept, 'letter.received', 1],
      [cancelled, 'letter.received', 1],
    ])
    expect((await list(client, `?cardId=${cancelled}`)).data.map(summary)).toEqual([
      [cancelled, 'letter.cancelled', 2],
      [cancelled, 'letter.received', 1],
    ])
    expect((await list(client, `?cardId=${kept}&type=letter.cancelled`)).data).toEqual([])
    expect((await list(client, `?cardId=${theirs}`)).data).toEqual([])
  })

  it('pages with the nextCursor of the page before, newest first, until the last page says null', async ({ client, account }) => {
    const letters = [await send(client, account), await send(client, account), await send(client, account)]
    const first = await list(client, '?limit=2')
    expect(first.data.map((event) => event.data.id)).toEqual([letters[2], letters[1]])
    expect(first.nextCursor).toEqual(expect.any(String))
    const second = await list(client, `?limit=2&cursor=${first.nextCursor}`)
    expect(second).toEqual({ data: [expect.objectContaining({ data: expect.objectContaining({ id: letters[0] }) })], nextCursor: null })
    // The filters hold across pages.
    const filtered = await list(client, `?limit=1&type=letter.received&cursor=${first.nextCursor}`)
    expect(filtered.data.map((event) => event.data.id)).toEqual([letters[0]])
  })

  it("shows a key only its own mode's events: a test key's letters are not a live key's, and the other way round", async ({ client, testClient, account }) => {
    const live = await send(client, account)
    const test = await send(testClient, account)
    expect((await list(client)).data.map((event) => [event.data.id, event.data.livemode])).toEqual([[live, true]])
    expect((await list(testClient)).data.map((event) => [event.data.id, event.data.livemode])).toEqual([[test, false]])
    expect((await list(client, `?cardId=${test}`)).data).toEqual([])
  })

  it.for([
    ['an unknown event type', '?type=letter.lost', /Tipo de evento desconocido/],
    ['a card id that is not a UUID', '?cardId=carta-1', /'cardId' debe ser el id de una carta/],
    ['a cursor it did not hand out', '?cursor=xyz', /'cursor' no es válido/],
    ['a limit of 0', '?limit=0', /limit/],
    ['a limit over 100', '?limit=101', /limit/],
    ['a parameter it does not know', '?status=printed', /status/],
  ] as const)('answers 400 to %s', async ([, query, message], { client }) => {
    expectError(await client.get(`/events${query}`), 400, 'Bad Request', message)
  })

  it('answers 401 without a key', async ({ gateway }) => {
    expectError(await gateway.inject({ method: 'GET', url: '/events' }), 401, 'Unauthorized')
  })
})
