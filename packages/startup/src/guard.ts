import closeWithGrace from 'close-with-grace'
import { isDriverError } from '@letters/db'

/** What the guard writes: pino's logger or Fastify's. */
export interface GuardLogger {
  error(details: object, message: string): void
}

export interface ShutdownReason {
  signal?: string
  err?: unknown
}

const FATAL_EVENTS = ['uncaughtException', 'unhandledRejection'] as const

/**
 * The lifecycle every entry point installs: `close` runs once, on SIGTERM/SIGINT (exit 0) or on
 * an uncaught exception or unhandled rejection (exit 1), and the process exits when it is done
 * or after `delay` ms. The one exception: an error of the Postgres driver (`isDriverError`) is
 * logged and the process keeps running, since a dropped connection (a failover, a pooler
 * restart) must not take a gateway or a worker down; what it failed is retried or answered 503.
 */
export function guardProcess(options: { log: GuardLogger; delay: number }, close: (reason: ShutdownReason) => Promise<void>): void {
  const { log } = options
  let failure: { err: unknown } | undefined
  let closing = false

  const grace = closeWithGrace(
    {
      delay: options.delay,
      // Errors come to onFatal first, which hands the fatal ones over through close().
      skip: [...FATAL_EVENTS],
      logger: false,
      onTimeout: (delay) => log.error({ delayMs: delay }, 'graceful shutdown took too long; exiting'),
    },
    async ({ signal }) => {
      closing = true
      try {
        await close(failure ? { err: failure.err } : { signal })
      } catch (err) {
        log.error({ err }, 'graceful shutdown failed')
        throw err
      }
      // A shutdown close-with-grace did not start itself exits 0 unless the callback throws.
      if (failure) throw failure.err
    },
  )

  function onFatal(err: unknown) {
    if (isDriverError(err)) {
      log.error({ err }, 'the Postgres driver failed outside any query we await; the pool replaces the connection and the process carries on')
      return
    }
    if (closing) {
      log.error({ err }, 'second error while shutting down; exiting')
      process.exit(1)
    }
    failure = { err }
    grace.close()
  }
  for (const event of FATAL_EVENTS) process.on(event, onFatal)
}
