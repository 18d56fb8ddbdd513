import type { FastifyReply } from 'fastify'
import { Type } from 'typebox'
import { UUID_PATTERN, errorResponses } from '@letters/contracts'

/** What a list read of the public API may answer besides 200: no key, the rate limit, a fault, load shed. */
export const readErrors = errorResponses(401, 429, 500, 503)

/** Reads of one thing by its id: an id holding a character no id has (a NUL) is refused with a 400 before the route. */
export const byIdErrors = errorResponses(400, 401, 404, 429, 500, 503)

/** What an admin write of one of an account's things may answer besides its success. */
export const adminWriteErrors = errorResponses(400, 401, 404, 415, 500)

/** A path's `id` taken as any string: one that is not a UUID names nothing (`findIfUuid`). */
export const AnyIdParams = Type.Object({ id: Type.String() })

/**
 * Looks a thing up by an id from a path only when the id can be one: a string that is not a UUID
 * names nothing, and answers as another account's would (404), without a query that Postgres
 * would refuse.
 */
export const findIfUuid = <T>(id: string, find: () => Promise<T | undefined>): Promise<T | undefined> =>
  UUID_PATTERN.test(id) ? find() : Promise.resolve(undefined)

/** A preview PNG, which the caller's browser may keep a minute. */
export const sendPreview = (reply: FastifyReply, png: Buffer) => reply.type('image/png').header('cache-control', 'private, max-age=60').send(png)
