import { describe, expect } from 'vitest'
import { eq, inArray } from 'drizzle-orm'
import type { LightMyRequestResponse } from 'fastify'
import { LocalArtifactStore } from '@letters/artifacts'
import { ledgerEntries, printHandoffs } from '@letters/db'
import { TEST_RENDERED_DETAIL } from '@letters/production-worker/produce-letter'
import { TEST_MAILED_DETAIL } from '@letters/pipeline'
import { startWebhookWorker } from '@letters/webhook-worker/worker'
import { it as base } from '../support/fixtures.js'
import { metricSamples } from '../support/metrics.js'
import { reachStatus, silentLog, type CardView, type Pipeline } from '../support/pipeline.js'
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js'

const TEST_MAILED_AFTER_MS = 500

/**
 * The account's test key, with a campaign and one webhook endpoint per mode (each registered with
 * that mode's key, subscribed to everything), and a webhook worker, for the whole file.
 */
interface TestMode {
  campaignId: string
  liveReceiver: WebhookReceiver
  testReceiver: WebhookReceiver
  /** The public API with the account's test key. */
  asTest: (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) => Promise<LightMyRequestResponse>
}

const recipient = { name: 'Lucía', surname: 'García', address: 'C/ Mayor 1', zip: '28013', city: 'Madrid', province: '', country: 'ES' }

async function sendTest(pipeline: Pipeline, testMode: TestMode, kind: 'single' | 'campaign', overrides: Record<string, unknown> = {}): Promise<string> {
  const body =
    kind === 'single'
      ? {
          cardDesignId: pipeline.account.cardDesignId,
          envelopeDesignId: pipeline.account.envelopeDesignId,
          senderId: pipeline.account.senderId,
          message: 'Una carta de prueba.',
          ...recipient,
        }
      : { campaignId: testMode.campaignId, ...recipient, variables: { nombre: 'Lucía' } }
  const response = await testMode.asTest('POST', kind === 'single' ? '/single' : '/card', { ...body, ...overrides })
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ cardId: string }>().cardId
}

type TestCardView = Omit<CardView, 'events'> & { livemode: boolean; events: Array<{ status: string; at: string; detail: string | null }> }
const testCard = async (testMode: TestMode, id: string) => (await testMode.asTest('GET', `/cards/${id}`)).json<TestCardView>()

async function testReaches(testMode: TestMode, id: string, status: string) {
  await expect.poll(async () => (await testCard(testMode, id)).status, { timeout: 20_000, interval: 50 }).toBe(status)
  return testCard(testMode, id)
}

const ledgerCount = async (pipeline: Pipeline) =>
  (await pipeline.app.db.select().from(ledgerEntries).where(eq(ledgerEntries.accountId, pipeline.account.id))).length

/** The first delivery of each webhook-id a receiver got for a letter. */
const deliveredFor = (receiver: WebhookReceiver, letterId: string) => {
  const firsts = new Map<string, WebhookReceiver['received'][number]['json']>()
  for (const webhook of receiver.received) if (webhook.json.data.id === letterId) firsts.set(String(webhook.headers['webhook-id']), webhook.json)
  return [...firsts.values()]
}

const it = base
  .extend('testMode', { scope: 'file' }, async ({ pipeline }, { onCleanup }): Promise<TestMode> => {
    const webhookWorker = startWebhookWorker({ config: pipeline.config, db: pipeline.app.db, log: silentLog })
    const liveReceiver = await startWebhookReceiver()
    const testReceiver = await startWebhookReceiver()
    onCleanup(async () => {
      await webhookWorker.close()
      await liveReceiver.close()
      await testReceiver.close()
    })
    const issued = await pipeline.admin('POST', `/admin/accounts/${pipeline.account.id}/api-keys`, { mode: 'test' })
    expect(issued.statusCode, issued.body).toBe(201)
    const testKey = issued.json<{ apiKey: string }>().apiKey
    expect(testKey).toMatch(/^lk_test_/)
    // One endpoint per mode, registered with that mode's key, both subscribed to everything.
    for (const [key, receiver] of [
      [pipeline.account.apiKey, liveReceiver],
      [testKey, testReceiver],
    ] as const) {
      const created = await pipeline.app.inject({ method: 'POST', url: '/webhooks', headers: { 'x-api-key': key }, payload: { url: receiver.url } })
      expect(created.statusCode, created.body).toBe(201)
    }
    const campaign = await pipeline.admin('POST', `/admin/accounts/${pipeline.account.id}/campaigns`, {
      name: 'Primavera',
      cardDesignId: pipeline.account.cardDesignId,
      envelopeDesignId: pipeline.account.envelopeDesignId,
      senderId: pipeline.account.senderId,
      message: 'Hola {{nombre}}, te esperamos en primavera.',
      variables: [{ name: 'nombre', maxSize: 40, defaultValue: 'amigo', example: 'Lucía' }],
    })
    expect(campaign.statusCode, campaign.body).toBe(201)
    return {
      campaignId: campaign.json<{ id: string }>().id,
      liveReceiver,
      testReceiver,
      asTest: (method, url, payload) => pipeline.app.inject({ method, url, headers: { 'x-api-key': testKey }, ...(payload ? { payload } : {}) }),
    }
  })
  /**
   * The letters the first four tests look at, sent once for the file: a test single, a test
   * campaign letter and a live letter, waited for until the test ones are mailed and the live one
   * printed; with the account's balance, ledger and metrics from just before they were sent.
   */
  .extend('sent', { scope: 'file' }, async ({ pipeline, testMode }) => {
    const before = { balance: await pipeline.balance(), entries: await ledgerCount(pipeline), metrics: await metricSamples(pipeline.app) }
    const single = await sendTest(pipeline, testMode, 'single')
    const campaign = await sendTest(pipeline, testMode, 'campaign')
    const live = await pipeline.send()
    for (const id of [single, campaign]) await testReaches(testMode, id, 'mailed')
    await reachStatus(pipeline, live, 'printed', 20_000)
    return { single, campaign, live, before }
  })
it.override({
  pipelineOptions: {
    label: 'test-mode',
    env: {
      TEST_MAILED_AFTER_MS: String(TEST_MAILED_AFTER_MS),
      CLOCK_INTERVAL_MS: '100',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '300,300,300',
    },
  },
})

const lifecycle = ['received', 'ready_for_print', 'printing', 'printed', 'mailed']

describe('test letters on the running pipeline', () => {
  it('go received → ready_for_print → printing → printed → mailed by themselves, never reaching the spool nor the ledger, while a live letter is printed', async ({
    pipeline,
    testMode,
    sent,
  }) => {
    const { single, campaign, live } = sent
    const { balance: balanceBefore, entries: entriesBefore, metrics: metricsBefore } = sent.before

    for (const id of [single, campaign]) {
      const card = await testReaches(testMode, id, 'mailed')
      expect(card.livemode).toBe(false)
      expect(card.events.map((event) => event.status)).toEqual(lifecycle)
      const printed = card.events.find((event) => event.status === 'printed')!
      const mailed = card.events.find((event) => event.status === 'mailed')!
      expect([printed.detail, mailed.detail]).toEqual([TEST_RENDERED_DETAIL, TEST_MAILED_DETAIL])
      expect(Date.parse(mailed.at) - Date.parse(printed.at)).toBeGreaterThanOrEqual(TEST_MAILED_AFTER_MS)
    }
    const liveCard = await reachStatus(pipeline, live, 'printed', 20_000)
    expect(liveCard).toMatchObject({ livemode: true })

    // The floor got the live letter's files and nothing of the test letters, which were rendered and kept.
    expect(await pipeline.spooled()).toEqual([`${live}.card.pdf`, `${live}.envelope.pdf`])
    const handoffs = await pipeline.app.db
      .select({ letterId: printHandoffs.letterId })
      .from(printHandoffs)
      .where(inArray(printHandoffs.letterId, [single, campaign, live]))
    expect(handoffs.map((row) => row.letterId)).toEqual([live, live])
    const store = new LocalArtifactStore(pipeline.config.artifactsDir)
    for (const id of [single, campaign]) {
      for (const file of ['card', 'envelope']) expect((await store.get(`${id}/${file}.pdf`))?.subarray(0, 5).toString()).toBe('%PDF-')
    }

    // Only the live letter was charged: one ledger entry more, its cost off the balance.
    expect(await ledgerCount(pipeline)).toBe(entriesBefore + 1)
    expect(await pipeline.balance()).toBe(balanceBefore - liveCard.cost)

    // Metrics tell the modes apart.
    const metricsAfter = await metricSamples(pipeline.app)
    const delta = (name: string) => (metricsAfter[name] ?? 0) - (metricsBefore[name] ?? 0)
    expect(delta('letters_created_total{type="single",country="ES",mode="test"}')).toBe(1)
    expect(delta('letters_created_total{type="campaign",country="ES",mode="test"}')).toBe(1)
    expect(delta('letters_created_total{type="single",country="ES",mode="live"}')).toBe(1)
    expect(delta('letters_status_changes_total{to="printed",mode="test"}')).toBe(2)
    expect(delta('letters_status_changes_total{to="mailed",mode="test"}')).toBe(2)
    expect(delta('letters_status_changes_total{to="printed",mode="live"}')).toBe(1)
    expect(delta('letters_status_changes_total{to="mailed",mode="live"}')).toBe(0)
  })

  it('serve their proof to the test key only', async ({ pipeline, testMode, sent }) => {
    const { single, live } = sent
    const proof = await testMode.asTest('GET', `/cards/${single}/proof`)
    expect(proof.statusCode).toBe(200)
    expect(proof.rawPayload.subarray(0, 5).toString()).toBe('%PDF-')
    expect((await pipeline.client('GET', `/cards/${single}/proof`)).statusCode).toBe(404)
    expect((await testMode.asTest('GET', `/cards/${live}/proof`)).statusCode).toBe(404)
  })

  it('are listed to the test key only, and live letters to the live key only', async ({ pipeline, testMode, sent }) => {
    const { single, campaign, live } = sent
    const testList = (await testMode.asTest('GET', '/cards?limit=100')).json<{ data: Array<{ id: string; livemode: boolean }> }>().data
    expect(testList.map((card) => card.id)).toEqual(expect.arrayContaining([single, campaign]))
    expect(testList.every((card) => card.livemode === false)).toBe(true)
    const liveList = (await pipeline.client('GET', '/cards?limit=100')).json<{ data: Array<{ id: string; livemode: boolean }> }>().data
    expect(liveList.map((card) => card.id)).toContain(live)
    expect(liveList.every((card) => card.livemode === true)).toBe(true)
    expect((await pipeline.client('GET', `/cards/${single}`)).statusCode).toBe(404)
    expect((await testMode.asTest('GET', `/cards/${live}`)).statusCode).toBe(404)
  })

  it('tell a test endpoint of every step, with livemode false, and a live endpoint nothing; a live letter the other way round', async ({ testMode, sent }) => {
    const { single, campaign, live } = sent
    for (const id of [single, campaign]) {
      await expect
        .poll(
          () =>
            deliveredFor(testMode.testReceiver, id)
              .map((event) => event.type)
              .sort(),
          { timeout: 20_000, interval: 100 },
        )
        .toEqual(lifecycle.map((status) => `letter.${status}`).sort())
      expect(deliveredFor(testMode.testReceiver, id).every((event) => event.data.livemode === false)).toBe(true)
    }
    await expect
      .poll(
        () =>
          deliveredFor(testMode.liveReceiver, live)
            .map((event) => event.type)
            .sort(),
        { timeout: 20_000, interval: 100 },
      )
      .toEqual(['letter.printed', 'letter.printing', 'letter.ready_for_print', 'letter.received'])
    expect(deliveredFor(testMode.liveReceiver, live).every((event) => event.data.livemode === true)).toBe(true)
    // Every delivery so far went to its own mode's endpoint.
    expect(testMode.testReceiver.received.every((webhook) => webhook.json.data.livemode === false)).toBe(true)
    expect(testMode.liveReceiver.received.every((webhook) => webhook.json.data.livemode === true)).toBe(true)
    expect(deliveredFor(testMode.liveReceiver, single)).toEqual([])
    expect(deliveredFor(testMode.testReceiver, live)).toEqual([])
  })

  it('with an undeliverable address is rejected without a refund', async ({ pipeline, testMode }) => {
    const balanceBefore = await pipeline.balance()
    const entriesBefore = await ledgerCount(pipeline)
    const id = await sendTest(pipeline, testMode, 'single', { address: '...' })
    const card = await testReaches(testMode, id, 'address_rejected')
    expect(card.events.at(-1)?.detail).toMatch(/^Dirección no entregable: .*\. Carta de prueba: sin cargo que devolver\.$/)
    expect(await ledgerCount(pipeline)).toBe(entriesBefore)
    expect(await pipeline.balance()).toBe(balanceBefore)
    expect(await pipeline.spooled()).not.toContain(`${id}.card.pdf`)
  })

  it('answer 402 when the balance could not pay, storing nothing', async ({ pipeline }) => {
    // An account of its own with 2 credits: a Spanish letter costs 3.
    const poor = await pipeline.admin('POST', '/admin/accounts', { name: 'Sin saldo', credits: 2 })
    const poorId = poor.json<{ id: string }>().id
    const poorTestKey = (await pipeline.admin('POST', `/admin/accounts/${poorId}/api-keys`, { mode: 'test' })).json<{ apiKey: string }>().apiKey
    const design = async (kind: string) => (await pipeline.admin('POST', `/admin/accounts/${poorId}/${kind}`, { name: kind })).json<{ id: string }>().id
    const body = {
      cardDesignId: await design('card-designs'),
      envelopeDesignId: await design('envelope-designs'),
      senderId: await design('senders'),
      message: 'Sin saldo.',
      ...recipient,
    }
    const refused = await pipeline.app.inject({ method: 'POST', url: '/single', headers: { 'x-api-key': poorTestKey }, payload: body })
    expect(refused.statusCode, refused.body).toBe(402)
    expect(refused.json()).toMatchObject({
      error: 'Payment Required',
      message: 'Créditos insuficientes: la carta cuesta 3 créditos y el saldo de la cuenta es 2',
    })
    const listed = await pipeline.app.inject({ method: 'GET', url: '/cards', headers: { 'x-api-key': poorTestKey } })
    expect(listed.json()).toEqual({ data: [], nextCursor: null })
  })

  it("scheduled, tell their own mode's endpoint letter.scheduled with their sendAt, and the other mode's endpoint nothing", async ({ pipeline, testMode }) => {
    const sendAt = new Date(Date.now() + 86_400_000).toISOString()
    const scheduledTest = await sendTest(pipeline, testMode, 'single', { sendAt })
    const scheduledLive = await pipeline.send({ sendAt })
    for (const [id, receiver, other, livemode] of [
      [scheduledTest, testMode.testReceiver, testMode.liveReceiver, false],
      [scheduledLive, testMode.liveReceiver, testMode.testReceiver, true],
    ] as const) {
      await expect.poll(() => deliveredFor(receiver, id).map((event) => event.type), { timeout: 20_000, interval: 100 }).toEqual(['letter.scheduled'])
      expect(deliveredFor(receiver, id)[0]!.data).toMatchObject({ id, status: 'scheduled', livemode, sendAt })
      expect(deliveredFor(other, id)).toEqual([])
    }
  })
})
