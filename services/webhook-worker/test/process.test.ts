import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort, startServiceProcess, type ServiceProcess } from '@letters/test/support/processes'
import { testConfig } from '@letters/test/support/context'

let worker: ServiceProcess
let port: number
beforeAll(async () => {
  port = await freePort()
  worker = await startServiceProcess('webhook-worker', testConfig({ QUEUE_PREFIX: `${testConfig().queuePrefix}-webhook-process` }), {
    METRICS_PORT: String(port),
  })
})
afterAll(() => worker?.kill())

describe('the webhook worker process', () => {
  it('answers /healthz and serves its metrics on METRICS_PORT', async () => {
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200)
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
    expect(metrics).toContain('webhook_attempts_total')
    expect(metrics).toContain('webhook_endpoints_disabled_total')
  })

  it('stops cleanly on SIGTERM', async () => {
    worker.child.kill('SIGTERM')
    expect(await worker.exited).toBe(0)
  })
})
