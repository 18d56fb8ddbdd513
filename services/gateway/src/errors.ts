import { STATUS_CODES } from 'node:http'

/** An error whose message is meant for the client: Spanish, no internals. */
export class ApiError extends Error {
  override name = 'ApiError'
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message)
  }
}

export const badRequest = (message: string) => new ApiError(400, message)
export const notFound = (message: string) => new ApiError(404, message)
export const conflict = (message: string) => new ApiError(409, message)

export function reasonPhrase(status: number): string {
  return STATUS_CODES[status] ?? 'Error'
}
