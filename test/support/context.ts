import { inject } from 'vitest'
import { loadConfig, type Config } from '@letters/config'

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string
    redisUrl: string
    queuePrefix: string
  }
}

export const ADMIN_TOKEN = 'test-admin-token-0123456789'

/** The configuration every test process runs with: this run's database, Redis and queue prefix. */
export function testConfig(overrides: Record<string, string> = {}): Config {
  return loadConfig({
    DATABASE_URL: inject('databaseUrl'),
    REDIS_URL: inject('redisUrl'),
    QUEUE_PREFIX: inject('queuePrefix'),
    ADMIN_TOKEN,
    LOG_LEVEL: 'silent',
    SEED_DEMO: 'false',
    ...overrides,
  })
}
