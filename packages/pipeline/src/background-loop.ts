import { metrics } from '@letters/observability'
import type { Logger } from './queues.js'
import { Pause } from './timing.js'

export interface BackgroundLoopOptions {
  /** Names the loop in its logs and in letters_background_loop_failures_total. */
  name: string
  log: Logger
  /** One round. Resolving `true` says there is more work: the next round starts at once. */
  tick: () => Promise<boolean | void>
  /** The pause after a round that did not ask for more. */
  intervalMs: number
  /** The pause after the `failures`-th failed round in a row (default: intervalMs). */
  backoffMs?: (failures: number) => number
  /** How a failed round is logged; `warn` unless the loop says otherwise. */
  failureLevel?: 'warn' | 'error'
  failureMessage?: string
}

/**
 * The one loop behind every background job of a process (outbox dispatcher, reconciler, letter
 * clock, batch closer): a round, then a pause (none when the round says there is more); never
 * two rounds at once; a round that throws is logged and counted, and the loop goes on, since a
 * background job that dies silently is worse than one that retries; `stop` awaits the round
 * under way.
 */
export class BackgroundLoop {
  private active = false
  private loop: Promise<void> | undefined
  /** Which start the loop under way belongs to: a loop stopped and started again before its round ended must not go on beside the new one. */
  private generation = 0
  /** A poke that came during a round: the work it announces may have come after the round read what to do. */
  private poked = false
  private readonly pause = new Pause()

  constructor(private readonly options: BackgroundLoopOptions) {}

  /** False once stop was called: a long round checks it between steps to end early. */
  get running(): boolean {
    return this.active
  }

  start(): void {
    if (this.active) return
    this.active = true
    const generation = ++this.generation
    // After a stop whose round is still under way: the new loop's first round waits for it.
    const previous = this.loop
    this.loop = previous ? previous.catch(() => undefined).then(() => this.run(generation)) : this.run(generation)
  }

  /** Runs the next round now instead of at the end of the pause; during a round, the next starts as soon as it ends (it is not interrupted). */
  poke(): void {
    this.poked = true
    this.pause.end()
  }

  async stop(): Promise<void> {
    this.active = false
    this.pause.end()
    await this.loop
  }

  private async run(generation: number): Promise<void> {
    const {
      name,
      log,
      tick,
      intervalMs,
      backoffMs = () => intervalMs,
      failureLevel = 'warn',
      failureMessage = `${name} round failed; the next one tries again`,
    } = this.options
    let failures = 0
    const current = () => this.active && this.generation === generation
    while (current()) {
      let pauseMs: number
      this.poked = false
      try {
        const more = await tick()
        if (failures > 0) log.info({ loop: name, failures }, `${name} recovered`)
        failures = 0
        pauseMs = more === true || this.poked ? 0 : intervalMs
      } catch (err) {
        failures++
        pauseMs = intervalMs
        // Reporting the failure must not end the loop either (a backoff or a logger that throws).
        try {
          pauseMs = backoffMs(failures)
          metrics.backgroundLoopFailures.inc({ loop: name })
          log[failureLevel]({ err, loop: name, failures, retryInMs: pauseMs }, failureMessage)
        } catch {
          // The round's failure is already lost to the logger; the loop goes on at its interval.
        }
      }
      if (pauseMs > 0 && current()) await this.pause.for(pauseMs)
    }
  }
}
