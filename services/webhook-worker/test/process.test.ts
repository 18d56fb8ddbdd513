import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort, startServiceProcess, type ServiceProcess } from '@letters/test/support/processes'
import { isolatedDatabase, testConfig } from '@letters/test/support/context'

let database: Awaited<ReturnType<typeof isolatedDatabase>>
let worker: ServiceProcess
let port: number
beforeAll(async () => {
  port = await freePort()
  // A database of its own: the worker admits every pending delivery it finds and dispatches every outbox row, other files' included.
  database = await isolatedDatabase('webhook-process')
  worker = await startServiceProcess(
    'webhook-worker',
    testConfig({ DATABASE_URL: database.url, QUEUE_PREFIX: `${testConfig().queuePrefix}-webhook-process` }),
    { METRICS_PORT: String(port) },
  )
})
afterAll(async () => {
  await worker?.kill()
  await database?.drop()
})

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
