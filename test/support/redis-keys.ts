import { Redis } from 'ioredis'

/** Deletes every key matching `pattern` (a run's prefix and `*`): never a flush, which would take other runs' keys too. */
export async function deleteKeys(url: string, pattern: string): Promise<void> {
  const redis = new Redis(url)
  try {
    for await (const keys of redis.scanStream({ match: pattern, count: 500 })) {
      if ((keys as string[]).length > 0) await redis.unlink(...(keys as string[]))
    }
  } finally {
    redis.disconnect()
  }
}
