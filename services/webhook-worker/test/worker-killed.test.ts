import { describe, expect } from 'vitest'
import { eq } from 'drizzle-orm'
import { webhookEvents } from '@letters/db'
import { silentLog } from '@letters/test/support/pipeline'
import { startServiceProcess, type ServiceProcess } from '@letters/test/support/processes'
import { startWebhookReceiver, removeEndpoints } from '@letters/test/support/webhook-receiver'
import { it as base } from '@letters/test/support/fixtures'
import { RECORDING_MARGIN_MS } from '../src/deliver.js'
import { startWebhookWorker } from '../src/worker.js'

const TIMEOUT_MS = 5000
const CAP = 3
const env = {
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
  WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: String(CAP),
  WEBHOOK_RETRY_SCHEDULE: '600000',
}

const it = base.extend({ gatewayOptions: { isolate: 'webhook-worker-killed', checkContract: false, env }, accountCredits: 10 })

describe('a webhook worker killed mid-delivery', () => {
  it('holds its endpoint’s slots no longer than the timeout and the recording margin: then another worker sends what it held and the rest', async ({
    gateway: app,
    client,
    onTestFinished,
  }) => {
    let killed: ServiceProcess | undefined
    let survivor: ReturnType<typeof startWebhookWorker> | undefined
    // Until the worker is killed, the receiver holds every request without answering.
    let dead = true
    const receiver = await startWebhookReceiver(() => (dead ? 'hang' : 204))
    onTestFinished(async () => {
      await killed?.kill()
      await removeEndpoints(app.db)
      await survivor?.close()
      await receiver.close()
    })
    const created = await client.post('/webhooks', { url: receiver.url })
    expect(created.statusCode, created.body).toBe(201)
    const endpointId = created.json<{ id: string }>().id
    const eventIds: string[] = []
    for (let n = 0; n < 8; n++) eventIds.push((await client.post(`/webhooks/${endpointId}/test`, {})).json<{ eventId: string }>().eventId)

    killed = await startServiceProcess('webhook-worker', app.config, env)
    await expect.poll(() => receiver.received.length, { timeout: 20_000, interval: 20 }).toBe(CAP)
    // The cap holds: no fourth request while three hang.
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(receiver.received).toHaveLength(CAP)
    const held = receiver.received.map((webhook) => String(webhook.headers['webhook-id']))
    await killed.kill()
    const killedAt = Date.now()
    dead = false

    survivor = startWebhookWorker({ config: app.config, db: app.db, log: silentLog })
    await expect
      .poll(
        async () =>
          (await app.db.select({ state: webhookEvents.state }).from(webhookEvents).where(eq(webhookEvents.endpointId, endpointId))).every(
            (event) => event.state === 'delivered',
          ),
        { timeout: TIMEOUT_MS + RECORDING_MARGIN_MS + 20_000, interval: 200 },
      )
      .toBe(true)
    // What the dead worker held went again, once its leases had passed; each event reached the receiver answered once.
    const answered = receiver.received.slice(CAP)
    expect(answered.map((webhook) => String(webhook.headers['webhook-id'])).sort()).toEqual([...eventIds].sort())
    const firstAgain = Math.min(...answered.filter((webhook) => held.includes(String(webhook.headers['webhook-id']))).map((webhook) => webhook.at))
    expect(firstAgain - killedAt).toBeLessThan(TIMEOUT_MS + RECORDING_MARGIN_MS + 2000)
  }, 90_000)
})
