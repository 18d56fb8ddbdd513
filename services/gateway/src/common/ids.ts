import { UUID_PATTERN } from '@letters/contracts'

/**
 * Looks a thing up by an id from a path only when the id can be one: a string that is not a UUID
 * names nothing, and answers as another account's would (404), without a query that Postgres
 * would refuse.
 */
export const findIfUuid = <T>(id: string, find: () => Promise<T | undefined>): Promise<T | undefined> =>
  UUID_PATTERN.test(id) ? find() : Promise.resolve(undefined)
