import { pino, type Logger, type LoggerOptions } from 'pino'

/**
 * Fields of an error that say what went wrong without carrying data: Postgres's diagnostic
 * fields (except `detail`, `where` and `internal_query`, which quote rows and values), the SQL
 * of a statement postgres.js failed (`query`: placeholders only, every statement of ours is
 * parameterized), Node's system error fields, HTTP status codes. Anything else an error carries
 * (a query's parameters, a row, a request body) stays out of the logs.
 */
const SAFE_FIELDS = [
  'query',
  'code',
  'errno',
  'syscall',
  'severity',
  'routine',
  'constraint_name',
  'table_name',
  'column_name',
  'schema_name',
  'statusCode',
  'status',
] as const

/** drizzle wraps a failed query as "Failed query: <sql>\nparams: <values>": the SQL stays, the values go. */
const FAILED_QUERY = /^(Failed query: [\s\S]*?)\nparams: [\s\S]*$/

function withoutParameters(message: string): string {
  const match = FAILED_QUERY.exec(message)
  return match ? `${match[1]}\nparams: [redacted]` : message
}

export interface SafeError {
  type: string
  message: string
  stack?: string
  cause?: SafeError
  [field: string]: unknown
}

/**
 * What a log line keeps of an error: its type, its message and stack with any query parameters
 * cut out, the safe diagnostic fields, and the same for its cause. The stack's first line
 * repeats the message, so it is rebuilt from the cleaned message and the frames.
 */
export function safeError(error: unknown, depth = 0): SafeError | unknown {
  if (!(error instanceof Error) && (typeof error !== 'object' || error === null)) return error
  const err = error as Error & Record<string, unknown>
  const type = err.constructor?.name ?? 'Error'
  const message = withoutParameters(String(err.message ?? ''))
  const frames = typeof err.stack === 'string' ? err.stack.split('\n').filter((line) => /^\s+at /.test(line)) : []
  const safe: SafeError = { type, message, stack: [`${err.name ?? type}: ${message}`, ...frames].join('\n') }
  for (const field of SAFE_FIELDS) {
    const value = err[field]
    if (typeof value === 'string' || typeof value === 'number') safe[field] = value
  }
  if (err.cause !== undefined && depth < 4) safe.cause = safeError(err.cause, depth + 1) as SafeError
  return safe
}

/**
 * The same error with a failed query's parameters cut out of its message and stack, for what a
 * job's failure leaves in Redis (BullMQ keeps the message and the stack, and /ops/queues shows
 * them). It is rewritten in place so its class (UnrecoverableError, say) still counts.
 */
export function withoutQueryParameters<T>(error: T): T {
  if (!(error instanceof Error)) return error
  const message = withoutParameters(error.message)
  if (message === error.message) return error
  if (typeof error.stack === 'string') error.stack = [`${error.name}: ${message}`, ...error.stack.split('\n').filter((line) => /^\s+at /.test(line))].join('\n')
  error.message = message
  for (const field of ['params', 'parameters', 'args']) delete (error as unknown as Record<string, unknown>)[field]
  return error
}

/** Serializers for every key our code logs errors under. */
const logSerializers = { err: safeError, error: safeError }

/** The options every process's logger is built with (the gateway hands them to Fastify). */
export function loggerOptions(name: string, level: string): LoggerOptions {
  return { name, level, serializers: logSerializers }
}

export function createLogger(name: string, level: string): Logger {
  return pino(loggerOptions(name, level))
}
