import { randomBytes } from 'node:crypto'
import { rm } from 'node:fs/promises'
import { Redis } from 'ioredis'
import postgres from 'postgres'
import type { TestProject } from 'vitest/node'
import { dropDatabase, prepareDatabase } from '@letters/db'
import { copyDatabase, runDirectory } from './context.js'
import { deleteKeys } from './redis-keys.js'
import { runBuild } from './production-build.js'
import { missingSystemTools } from './system-tools.js'

const localPostgres = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const localRedis = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

async function postgresReachable(url: string): Promise<boolean> {
  const sql = postgres(url, { max: 1, connect_timeout: 2, onnotice: () => {} })
  try {
    await sql`SELECT 1`
    return true
  } catch {
    return false
  } finally {
    await sql.end({ timeout: 1 })
  }
}

async function redisReachable(url: string): Promise<boolean> {
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null })
  try {
    await redis.connect()
    return (await redis.ping()) === 'PONG'
  } catch {
    return false
  } finally {
    redis.disconnect()
  }
}

/** Where no local server answers, a Docker engine (if any) runs one for the duration of the run. */
async function startContainers(needPostgres: boolean, needRedis: boolean) {
  const stops: Array<() => Promise<unknown>> = []
  let postgresUrl = localPostgres
  let redisUrl = localRedis
  if (needPostgres) {
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql')
    const container = await new PostgreSqlContainer('postgres:16-alpine').withUsername('postgres').withPassword('postgres').start()
    postgresUrl = container.getConnectionUri().replace(/\/[^/]*$/, '/postgres')
    stops.push(() => container.stop())
  }
  if (needRedis) {
    const { RedisContainer } = await import('@testcontainers/redis')
    const container = await new RedisContainer('redis:7-alpine').withCommand(['redis-server', '--maxmemory-policy', 'noeviction']).start()
    redisUrl = container.getConnectionUrl()
    stops.push(() => container.stop())
  }
  return { postgresUrl, redisUrl, stop: () => Promise.all(stops.map((stop) => stop())) }
}

/**
 * `npm run build`, once per run: the root and each project run this setup, side by side, and two
 * builds writing the same files at once could leave one half-written. Kept on globalThis, which
 * every setup of the run shares, whichever module graph loaded it.
 */
function buildOnce(): Promise<void> {
  const holder = globalThis as { lettersTestBuild?: Promise<void> }
  holder.lettersTestBuild ??= runBuild()
  return holder.lettersTestBuild
}

/**
 * The migrated database that each setup's database and every isolated one (isolatedDatabase) are
 * copies of: migrations run once per run rather than two hundred times. Made by the first setup
 * and kept on globalThis, as the build is; no session connects to it, as a copy requires.
 */
function templateDatabaseOnce(postgresUrl: string, runId: string): Promise<string> {
  const holder = globalThis as { lettersTestTemplate?: Promise<string> }
  holder.lettersTestTemplate ??= (async () => {
    const url = postgresUrl.replace(/\/[^/]*$/, `/letters_test_${runId}_template`)
    await prepareDatabase(url)
    return url
  })()
  return holder.lettersTestTemplate
}

export default async function setup(project: TestProject) {
  const missing = missingSystemTools()
  if (missing) throw new Error(missing)
  const needPostgres = !(await postgresReachable(localPostgres))
  const needRedis = !(await redisReachable(localRedis))
  const servers =
    needPostgres || needRedis ? await startContainers(needPostgres, needRedis) : { postgresUrl: localPostgres, redisUrl: localRedis, stop: async () => {} }

  // The services' processes run from the build (servicesFromBuild, ./processes.ts): brought up to
  // date once, here, unless npm test has just built it (TEST_BUILD_FRESH).
  if (project.config.env?.RUN_FROM_BUILD === '1' && process.env.TEST_BUILD_FRESH !== '1') await buildOnce()

  const runId = `${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`
  const databaseUrl = servers.postgresUrl.replace(/\/[^/]*$/, `/letters_test_${runId}`)
  const queuePrefix = `letters-test-${runId}`
  const templateDatabaseUrl = await templateDatabaseOnce(servers.postgresUrl, runId)
  await copyDatabase(templateDatabaseUrl, databaseUrl)

  project.provide('databaseUrl', databaseUrl)
  project.provide('templateDatabaseUrl', templateDatabaseUrl)
  project.provide('redisUrl', servers.redisUrl)
  project.provide('queuePrefix', queuePrefix)

  return async () => {
    await dropDatabase(databaseUrl)
    // Every setup's teardown runs once every test file is done: the first drops it.
    await dropDatabase(templateDatabaseUrl)
    await deleteKeys(servers.redisUrl, `${queuePrefix}*`)
    await rm(runDirectory(queuePrefix), { recursive: true, force: true })
    await servers.stop()
  }
}
