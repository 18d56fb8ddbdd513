import { Writable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { pino } from 'pino'
import { metrics } from '@letters/observability'
import { until } from '@letters/test/support/wait'
import { BackgroundLoop } from '../src/index.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Every callback and promise already due has run: a round the loop would start at once has started. */
const settled = () => new Promise((resolve) => setImmediate(resolve))

/**
 * Lets five of a loop's intervals pass: what must not happen (a round after a stop, two rounds at
 * once) has had every chance to. Waiting for something that does happen is `until`'s.
 */
const intervalsPass = (intervalMs: number) => sleep(5 * intervalMs)

/** A logger whose lines the test reads back. */
function capturedLog() {
  const lines: Array<{ level: number; msg: string; loop?: string; failures?: number; retryInMs?: number; err?: { message: string } }> = []
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()))
      done()
    },
  })
  return { log: pino({ level: 'info' }, stream), lines }
}

const failuresOf = async (loop: string) => (await metrics.backgroundLoopFailures.get()).values.find((value) => value.labels.loop === loop)?.value ?? 0

describe('BackgroundLoop', () => {
  it('runs a round, then pauses the interval, never two rounds at once', async () => {
    const { log } = capturedLog()
    const starts: number[] = []
    let inFlight = 0
    let overlapped = false
    const loop = new BackgroundLoop({
      name: 'test paced',
      log,
      intervalMs: 100,
      tick: async () => {
        starts.push(Date.now())
        inFlight++
        if (inFlight > 1) overlapped = true
        await sleep(30)
        inFlight--
      },
    })
    loop.start()
    loop.start() // a second start is a no-op, not a second loop
    await until('three rounds', () => starts.length >= 3)
    await loop.stop()
    expect(overlapped).toBe(false)
    expect(starts.length).toBeGreaterThanOrEqual(3)
    // Each round starts after the previous one's 30 ms and the 100 ms pause: a lower bound, which a
    // busy machine only makes longer.
    for (let n = 1; n < starts.length; n++) expect(starts[n]! - starts[n - 1]!).toBeGreaterThanOrEqual(125)
  })

  it('runs again at once when a round says there is more work', async () => {
    const { log } = capturedLog()
    const starts: number[] = []
    const loop = new BackgroundLoop({
      name: 'test more',
      log,
      intervalMs: 60_000,
      // Four rounds with more work, then an idle one: all five before any pause.
      tick: async () => {
        starts.push(Date.now())
        await settled()
        return starts.length < 5
      },
    })
    loop.start()
    // Half the interval: a pause between any two of the five rounds would make this wait fail.
    await until('five rounds', () => starts.length >= 5, { timeoutMs: 30_000, everyMs: 10 })
    // The fifth round said there is no more: once what it set off has run, the loop is in its pause.
    await settled()
    await settled()
    expect(starts).toHaveLength(5)
    await loop.stop()
    expect(starts).toHaveLength(5)
  })

  it('logs and counts a round that throws, backs off as told, and goes on', async () => {
    const { log, lines } = capturedLog()
    const before = await failuresOf('test failing')
    let rounds = 0
    const loop = new BackgroundLoop({
      name: 'test failing',
      log,
      intervalMs: 20,
      backoffMs: (failures) => failures * 10,
      failureLevel: 'error',
      failureMessage: 'test round failed',
      tick: async () => {
        rounds++
        if (rounds <= 2) throw new Error(`round ${rounds} broke`)
      },
    })
    loop.start()
    await until('four rounds', () => rounds >= 4, { everyMs: 10 })
    await loop.stop()
    expect(await failuresOf('test failing')).toBe(before + 2)
    const failed = lines.filter((line) => line.msg === 'test round failed')
    expect(failed.map((line) => ({ level: line.level, failures: line.failures, retryInMs: line.retryInMs, err: line.err?.message }))).toEqual([
      { level: 50, failures: 1, retryInMs: 10, err: 'round 1 broke' },
      { level: 50, failures: 2, retryInMs: 20, err: 'round 2 broke' },
    ])
    expect(lines.filter((line) => line.msg === 'test failing recovered')).toHaveLength(1)
  })

  it('stops cleanly: stop waits for the round under way, and no round starts after it', async () => {
    const { log } = capturedLog()
    let rounds = 0
    let finished = 0
    let release: () => void = () => {}
    const loop = new BackgroundLoop({
      name: 'test stopping',
      log,
      intervalMs: 10,
      tick: async () => {
        rounds++
        await new Promise<void>((resolve) => (release = resolve))
        finished++
        return true
      },
    })
    loop.start()
    await until('the first round', () => rounds === 1)
    let stopped = false
    const stopping = loop.stop().then(() => (stopped = true))
    expect(loop.running).toBe(false)
    await intervalsPass(10)
    expect(stopped).toBe(false)
    release()
    await stopping
    expect({ rounds, finished }).toEqual({ rounds: 1, finished: 1 })
    await intervalsPass(10)
    expect(rounds).toBe(1)
  })

  it('runs the next round at once when poked during the pause', async () => {
    const { log } = capturedLog()
    let rounds = 0
    const loop = new BackgroundLoop({
      name: 'test poked',
      log,
      intervalMs: 60_000,
      tick: async () => {
        rounds++
      },
    })
    loop.start()
    await until('the first round', () => rounds === 1)
    loop.poke()
    // Far below the 60 s interval: only the poke can have started the second round.
    await until('the round the poke starts', () => rounds === 2, { timeoutMs: 30_000 })
    await loop.stop()
  })

  it('runs the next round at once when poked during a round, not after the pause', async () => {
    const { log } = capturedLog()
    let rounds = 0
    let release: () => void = () => {}
    const loop = new BackgroundLoop({
      name: 'test poked in a round',
      log,
      intervalMs: 60_000,
      tick: async () => {
        rounds++
        if (rounds === 1) await new Promise<void>((resolve) => (release = resolve))
      },
    })
    loop.start()
    await until('the first round', () => rounds === 1)
    // The work the poke announces may have come after the round read what it had to do.
    loop.poke()
    release()
    await until('the round the poke starts', () => rounds === 2, { timeoutMs: 30_000 })
    await loop.stop()
  })

  it('started again before a stop is over, still runs one round at a time', async () => {
    const { log } = capturedLog()
    let inFlight = 0
    let overlapped = false
    let rounds = 0
    let release: () => void = () => {}
    const loop = new BackgroundLoop({
      name: 'test restarted',
      log,
      intervalMs: 10,
      tick: async () => {
        rounds++
        inFlight++
        if (inFlight > 1) overlapped = true
        if (rounds === 1) await new Promise<void>((resolve) => (release = resolve))
        else await sleep(5)
        inFlight--
      },
    })
    loop.start()
    await until('the first round', () => rounds === 1)
    const stopping = loop.stop()
    loop.start()
    // The new loop's first round must wait for the one held under way.
    await intervalsPass(10)
    expect(rounds).toBe(1)
    release()
    await stopping
    await until('four rounds', () => rounds >= 4)
    await loop.stop()
    const after = rounds
    await intervalsPass(10)
    expect({ overlapped, roundsAfterStop: rounds - after }).toEqual({ overlapped: false, roundsAfterStop: 0 })
  })

  it('goes on when reporting a failed round fails too (a backoff that throws), at its interval, without an unhandled rejection', async () => {
    const { log } = capturedLog()
    let rounds = 0
    const loop = new BackgroundLoop({
      name: 'test broken backoff',
      log,
      intervalMs: 20,
      backoffMs: () => {
        throw new Error('backoff broken')
      },
      tick: async () => {
        rounds++
        if (rounds < 3) throw new Error('round fails')
      },
    })
    loop.start()
    // Two failed rounds, then the loop is still alive to run the third and more.
    await until('four rounds', () => rounds >= 4)
    await loop.stop()
    expect(rounds).toBeGreaterThanOrEqual(4)
  })
})
