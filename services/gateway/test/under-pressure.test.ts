import { describe, expect } from 'vitest'
import { it as base } from '@letters/test/support/fixtures'
import { overThreshold } from '../src/plugins/app/under-pressure.js'
import { adminAccount, expectError, publicClient } from './helpers.js'

/** Holds this thread (and the gateway's event loop with it) for `ms`, as a render on the loop would. */
function blockEventLoop(ms: number) {
  const until = Date.now() + ms
  while (Date.now() < until) {
    // busy: nothing else runs meanwhile
  }
}

const it = base.extend({ gatewayOptions: { env: { EVENT_LOOP_MAX_DELAY_MS: '100' } } })

describe('an event loop that falls behind', () => {
  it('answers 503 with Retry-After in our error shape, readiness 503 too, while liveness stays 200', async ({ gateway: app }) => {
    // Set-up starts from a calm loop: the render threads' warm-up at the gateway's start can hold
    // a loaded machine's cores for a second or two (as /readyz tells a balancer), and the delay
    // reads 0 until the first sample, so the wait covers the warm-up before it asks.
    await new Promise((resolve) => setTimeout(resolve, 3000))
    await expect.poll(() => app.memoryUsage().eventLoopDelay, { timeout: 15_000, interval: 100 }).toBeLessThan(100)
    const account = await adminAccount(app)
    // Blocked again and again, as renders on the loop would: once under-pressure's next sample
    // (every second) has seen it, the loop's delay is far past 100 ms, and every sample taken
    // while the requests below run covers a second of the same blocking.
    const deadline = Date.now() + 15_000
    while (app.memoryUsage().eventLoopDelay <= 100) {
      if (Date.now() > deadline) throw new Error(`the event loop delay never passed 100 ms: ${app.memoryUsage().eventLoopDelay}`)
      blockEventLoop(300)
      await new Promise((resolve) => setTimeout(resolve, 5))
    }

    const shed = await publicClient(app, account.apiKey).get('/campaigns')
    expectError(shed, 503, 'Service Unavailable', 'El servicio está saturado en este momento; inténtalo de nuevo en unos segundos')
    expect(shed.json<{ requestId: string }>().requestId).toEqual(expect.any(String))
    expect(Number(shed.headers['retry-after'])).toBeGreaterThan(0)
    expectError(await app.inject({ method: 'GET', url: '/readyz' }), 503, 'Service Unavailable')
    const liveness = await app.inject({ method: 'GET', url: '/healthz' })
    expect(liveness.statusCode).toBe(200)

    // Once the loop keeps up again, so does the gateway.
    await expect.poll(async () => (await publicClient(app, account.apiKey).get('/campaigns')).statusCode, { timeout: 5000, interval: 100 }).toBe(200)
  })
})

describe('what counts as over EVENT_LOOP_MAX_DELAY_MS', () => {
  it('sheds past the threshold; a second the loop was blocked through (reported as an infinite delay) only under a threshold of a second or less', () => {
    expect(overThreshold(1500, 1000)).toBe(true)
    expect(overThreshold(900, 1000)).toBe(false)
    expect(overThreshold(Infinity, 1000)).toBe(true)
    expect(overThreshold(Infinity, 100)).toBe(true)
    // A blocked second says the delay reached a second, not that it reached 5 or 60.
    expect(overThreshold(Infinity, 5000)).toBe(false)
    expect(overThreshold(Infinity, 60_000)).toBe(false)
    expect(overThreshold(6000, 5000)).toBe(true)
  })
})
