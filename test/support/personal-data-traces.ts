import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { Redis } from 'ioredis'

const run = promisify(execFile)

/** Everything the database holds, as pg_dump writes it: every table's rows, whatever column or table a copy may hide in. */
export async function databaseDump(databaseUrl: string): Promise<string> {
  const { stdout } = await run('pg_dump', ['--no-owner', '--no-privileges', `--dbname=${databaseUrl}`], { maxBuffer: 512 * 1024 * 1024 })
  return stdout
}

/** Every key under `prefix` in Redis with its value, whatever its type (BullMQ's job hashes, event streams, lists, sets), as one text. */
export async function redisDump(redisUrl: string, prefix: string): Promise<string> {
  const redis = new Redis(redisUrl)
  try {
    const parts: string[] = []
    for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 500 })) {
      for (const key of keys as string[]) {
        const type = await redis.type(key)
        const value =
          type === 'string'
            ? [(await redis.getBuffer(key))?.toString('utf8') ?? '']
            : type === 'hash'
              ? Object.entries(await redis.hgetall(key)).flat()
              : type === 'list'
                ? await redis.lrange(key, 0, -1)
                : type === 'set'
                  ? await redis.smembers(key)
                  : type === 'zset'
                    ? await redis.zrange(key, '0', '-1')
                    : type === 'stream'
                      ? (await redis.xrange(key, '-', '+')).flatMap(([id, fields]) => [id, ...fields])
                      : []
        parts.push(key, ...value)
      }
    }
    return parts.join('\n')
  } finally {
    redis.disconnect()
  }
}

/** Which of `values` appear in `text`. */
export const found = (text: string, values: readonly string[]) => values.filter((value) => text.includes(value))
