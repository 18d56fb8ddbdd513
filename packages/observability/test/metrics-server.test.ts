import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { pino } from 'pino'
import { metrics, startMetricsServer } from '../src/index.js'

let close: (() => void) | undefined
afterEach(() => close?.())

async function serve(healthy: () => boolean, token?: string) {
  const server = await startMetricsServer({ host: '127.0.0.1', port: 0, log: pino({ level: 'silent' }), healthy, token })
  if (!server) throw new Error('the metrics server did not start')
  close = () => server.close()
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

describe('a worker’s metrics server', () => {
  it('serves this process’s metrics, without the pipeline gauges only the gateway reads', async () => {
    metrics.lettersReconciled.inc({ status: 'received' })
    const base = await serve(() => true)
    const response = await fetch(`${base}/metrics`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
    const text = await response.text()
    expect(text).toMatch(/^letters_reconciled_total\{status="received"\} [1-9]/m)
    expect(text).toMatch(/^process_resident_memory_bytes \d/m)
    expect(text).not.toMatch(/letters_outbox_pending|letters_stuck|letters_queue_jobs/)
  })

  it('lets the worker go on without metrics when its port is taken, and says to give each worker a port of its own', async () => {
    const base = await serve(() => true)
    const port = Number(new URL(base).port)
    const lines: string[] = []
    const log = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) })
    expect(await startMetricsServer({ host: '127.0.0.1', port, log, healthy: () => true })).toBeUndefined()
    expect((await fetch(`${base}/healthz`)).status).toBe(200)
    // Not "set METRICS_PORT": one value for the three workers of a stack would collide again.
    expect(lines.map((line) => JSON.parse(line) as { level: number; msg: string; port: number })).toEqual([
      expect.objectContaining({ level: 40, port, msg: expect.stringMatching(new RegExp(`port ${port} is taken.*a free METRICS_PORT of its own`)) }),
    ])
  })

  it('answers /healthz 200 while the worker runs and 503 once it stopped; 404 elsewhere', async () => {
    let running = true
    const base = await serve(() => running)
    expect((await fetch(`${base}/healthz`)).status).toBe(200)
    running = false
    const stopped = await fetch(`${base}/healthz`)
    expect(stopped.status).toBe(503)
    expect(await stopped.json()).toEqual({ status: 'stopped' })
    expect((await fetch(`${base}/nada`)).status).toBe(404)
  })

  it('asks for METRICS_TOKEN on /metrics when it is set, and never on /healthz', async () => {
    const base = await serve(() => true, 'a-read-only-token-for-prometheus')
    for (const authorization of [undefined, 'Bearer wrong-token-of-some-length', 'Basic YTphLXJlYWQtb25seS10b2tlbi1mb3ItcHJvbWV0aGV1cw==']) {
      const refused = await fetch(`${base}/metrics`, { headers: authorization ? { authorization } : {} })
      expect(refused.status, authorization).toBe(401)
      expect(await refused.text()).not.toMatch(/process_resident_memory_bytes/)
    }
    const scraped = await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer a-read-only-token-for-prometheus' } })
    expect(scraped.status).toBe(200)
    expect(await scraped.text()).toMatch(/^process_resident_memory_bytes \d/m)
    expect((await fetch(`${base}/healthz`)).status).toBe(200)
  })
})
