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
  private readonly pause = new Pause()

  constructor(private readonly options: BackgroundLoopOptions) {}

  /** False once stop was called: a long round checks it between steps to end early. */
  get running(): boolean {
    return this.active
  }

  start(): void {
    if (this.active) return
    this.active = true
    this.loop = this.run()
  }

  /** Runs the next round now instead of at the end of the pause (a round under way is not interrupted). */
  poke(): void {
    this.pause.end()
  }

  async stop(): Promise<void> {
    this.active = false
    this.pause.end()
    await this.loop
  }

  private async run(): Promise<void> {
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
    while (this.active) {
      let pauseMs: number
      try {
        const more = await tick()
        if (failures > 0) log.info({ loop: name, failures }, `${name} recovered`)
        failures = 0
        pauseMs = more === true ? 0 : intervalMs
      } catch (err) {
        failures++
        pauseMs = backoffMs(failures)
        metrics.backgroundLoopFailures.inc({ loop: name })
        log[failureLevel]({ err, loop: name, failures, retryInMs: pauseMs }, failureMessage)
      }
      if (pauseMs > 0 && this.active) await this.pause.for(pauseMs)
    }
  }
}
