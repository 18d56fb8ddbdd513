import closeWithGrace from 'close-with-grace'

/** Where postgres.js's own code sits, in the ESM and the CommonJS build alike. */
const DRIVER_FRAME = /[\\/]node_modules[\\/]postgres[\\/]/

/**
 * A connection that dropped or could not open: postgres.js's own codes, SQLSTATE class 08
 * (connection exception) and 57P01-57P03 (backend terminated, server shutting down or
 * starting), and the socket errors the driver passes on with the query they failed.
 */
const CONNECTION_CODES = new Set(['CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT', '57P01', '57P02', '57P03'])
const SOCKET_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH'])

type ErrorLike = { code?: unknown; stack?: unknown; cause?: unknown }

function thrownByDriver(error: ErrorLike): boolean {
  if (typeof error.stack !== 'string') return false
  const firstFrame = error.stack.split('\n').find((line) => /^\s+at /.test(line))
  return firstFrame !== undefined && DRIVER_FRAME.test(firstFrame)
}

function* causes(error: unknown): Generator<ErrorLike> {
  // drizzle wraps a failed query's error as its cause.
  for (
    let current = error as ErrorLike | undefined, depth = 0;
    current && typeof current === 'object' && depth < 4;
    current = current.cause as ErrorLike | undefined, depth++
  )
    yield current
}

/**
 * True when a query failed because its connection dropped or could not open: the pool opens a
 * new one for the next query, so the work may be tried again at once.
 */
export function isConnectionError(error: unknown): boolean {
  for (const current of causes(error)) {
    const code = typeof current.code === 'string' ? current.code : ''
    if (CONNECTION_CODES.has(code) || code.startsWith('08')) return true
    // postgres.js marks each error it rejects a query with by the query's text.
    if (SOCKET_CODES.has(code) && 'query' in current) return true
  }
  return false
}

/**
 * True for an error of the Postgres driver about its connections: raised inside postgres.js
 * (as its null-socket TypeError was, from a timer), or a dropped connection's error that no one
 * awaited. Such an error concerns one connection, which the pool replaces on its next query;
 * anything else is a bug of ours, and the process stops.
 */
export function isDriverError(error: unknown): boolean {
  return isConnectionError(error) || [...causes(error)].some(thrownByDriver)
}

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
