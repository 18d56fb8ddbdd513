import { describe, expect } from 'vitest'
import { it as base } from '@letters/test/support/fixtures'
import { freePort, startServiceProcess } from '@letters/test/support/processes'
import { testConfig } from '@letters/test/support/context'

/** The worker as a process, its metrics on a port of its own; killed before its database is dropped. */
const it = base.extend('worker', { scope: 'file' }, async ({ databaseUrl }, { onCleanup }) => {
  const port = await freePort()
  const worker = await startServiceProcess(
    'webhook-worker',
    testConfig({ DATABASE_URL: databaseUrl, QUEUE_PREFIX: `${testConfig().queuePrefix}-webhook-process` }),
    { METRICS_PORT: String(port) },
  )
  onCleanup(() => worker.kill())
  return { service: worker, port }
})
// A database of its own: the worker admits every pending delivery it finds and dispatches every outbox row, other files' included.
it.override({ databaseLabel: 'webhook-process' })

describe('the webhook worker process', () => {
  // The first test also waits for the worker to start.
  it('answers /healthz and serves its metrics on METRICS_PORT', async ({ worker }) => {
    expect((await fetch(`http://127.0.0.1:${worker.port}/healthz`)).status).toBe(200)
    const metrics = await (await fetch(`http://127.0.0.1:${worker.port}/metrics`)).text()
    expect(metrics).toContain('webhook_attempts_total')
    expect(metrics).toContain('webhook_endpoints_disabled_total')
  }, 60_000)

  it('stops cleanly on SIGTERM', async ({ worker }) => {
    worker.service.child.kill('SIGTERM')
    expect(await worker.service.exited).toBe(0)
  })
})
