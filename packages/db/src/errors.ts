/**
 * The SQLSTATE codes our code tells apart, by the names Postgres gives them (Appendix A of its
 * manual), and the helpers that read them off an error: the one place either is written.
 */
export const SQLSTATE = {
  foreignKeyViolation: '23503',
  uniqueViolation: '23505',
  checkViolation: '23514',
  duplicateDatabase: '42P04',
  /** The database named in the connection does not exist. */
  invalidCatalogName: '3D000',
  /** A statement timeout (or a cancel). */
  queryCanceled: '57014',
  /** A lock timeout, or NOWAIT/SKIP LOCKED refused. */
  lockNotAvailable: '55P03',
  /** Two sessions each waited for the other's lock; Postgres cancelled one. */
  deadlockDetected: '40P01',
  /** Every connection slot of the server is taken ("sorry, too many clients already"). */
  tooManyConnections: '53300',
  /** The server is starting up or shutting down. */
  cannotConnectNow: '57P03',
} as const

/** drizzle wraps the driver's errors: the SQLSTATE sits on the error or on its cause. */
export function sqlState(error: unknown): string | undefined {
  const candidate = error as { code?: unknown; cause?: { code?: unknown } } | undefined
  const code = candidate?.cause?.code ?? candidate?.code
  return typeof code === 'string' ? code : undefined
}

/** Where postgres.js's own code sits, in the ESM and the CommonJS build alike. */
const DRIVER_FRAME = /[\\/]node_modules[\\/]postgres[\\/]/

/**
 * A connection that dropped or could not open: postgres.js's own codes, SQLSTATE class 08
 * (connection exception), 57P01-57P03 (backend terminated, server shutting down or starting),
 * 53300 (every connection slot taken: the server refused to open one), and the socket errors the
 * driver passes on with the query they failed.
 */
const CONNECTION_CODES = new Set<string>([
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  '57P01',
  '57P02',
  SQLSTATE.cannotConnectNow,
  SQLSTATE.tooManyConnections,
])
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
