import { STATUS_CODES } from 'node:http'

/** An error whose message is meant for the client: Spanish, no internals. */
export class ApiError extends Error {
  override name = 'ApiError'
  constructor(
    readonly statusCode: number,
    message: string,
    /** A request that breaks its schema: each problem on its own, as the Error object's `details`. */
    readonly details?: ReadonlyArray<{ field: string; message: string }>,
  ) {
    super(message)
  }
}

/**
 * A 503 whose Spanish message tells the client what to do: nothing was done, retry. Answered on
 * purpose, to shed load (a full render queue) or at a request's deadline; or for a passing fault
 * of ours (a helper process that would not start), whose cause is logged and never sent.
 */
export class Unavailable extends ApiError {
  override name = 'Unavailable'
  constructor(
    message: string,
    /** The Retry-After it is answered with; the error handler's default where unset. */
    readonly retryAfterSeconds?: number,
    /** The fault of ours behind the answer, if any: logged as an error, never sent. */
    override readonly cause?: unknown,
  ) {
    super(503, message)
  }
}

/**
 * A 500 whose Spanish message the client needs: what it asked for may or may not have been
 * done. Its cause stays in the logs, never in the answer.
 */
export class OutcomeUnknown extends ApiError {
  override name = 'OutcomeUnknown'
  constructor(
    message: string,
    override readonly cause: unknown,
  ) {
    super(500, message)
  }
}

export const badRequest = (message: string) => new ApiError(400, message)
export const notFound = (message: string) => new ApiError(404, message)
export const conflict = (message: string) => new ApiError(409, message)

export function reasonPhrase(status: number): string {
  return STATUS_CODES[status] ?? 'Error'
}
