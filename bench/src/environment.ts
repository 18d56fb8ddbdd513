import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { promisify } from 'node:util'
import { Redis } from 'ioredis'
import postgres from 'postgres'
import { loadConfig, type Config } from '@letters/config'
import { dropDatabase, prepareDatabase } from '@letters/db'
import { closeQueues, openQueues, type Queues } from '@letters/pipeline'
import { freePort, serviceEnv, startHttpProcess, startServiceProcess, type ServiceName, type ServiceProcess } from '@letters/test/support/processes'
import { deleteKeys } from '@letters/test/support/redis-keys'
import type { Cleanup } from './cleanup.js'

export interface ServerOptions {
  postgresUrl: string
  redisUrl: string
  /**
   * Another release's checkout (`--against`): its gateway runs from there, on a database its own
   * migrations made. This checkout's by default.
   */
  releaseDir?: string
}

/**
 * What every process under test runs with, beyond the run's database, Redis prefix and
 * directories. The rate limits stay on (their Redis round trip is part of each request's cost)
 * but never refuse the benchmark's few keys; request logs are off, as in the baselines.
 */
const SETTINGS = {
  LOG_LEVEL: 'warn',
  RATE_LIMIT_MAX: '1000000000',
  PROOF_RATE_LIMIT_MAX: '1000000',
}

export type Baseline = 'hello-world' | 'bare-path' | 'bare-read'

/** One run's world: a fresh database, Redis prefix and directory, and the processes it starts. */
export interface BenchEnvironment {
  config: Config
  adminToken: string
  /** The run's database, for the benchmark's own reads (how many letters are printed). */
  sql: postgres.Sql
  /** The run's queues, to hold the workers back while letters pile up. */
  queues: Queues
  /** Starts the gateway as `npm start` does (through the tsx CLI); resolves with its URL once it answers /healthz. */
  startGateway(): Promise<string>
  /** Starts a service the same way; resolves once it answers /healthz. */
  startService(name: ServiceName, env?: Record<string, string>): Promise<ServiceProcess>
  /** Starts a baseline server (bench/src/baselines) the same way; resolves with its URL. */
  startBaseline(name: Baseline): Promise<string>
}

/** A database made by another release's own migrations, in a process run from its checkout. */
async function prepareDatabaseOf(releaseDir: string, databaseUrl: string): Promise<void> {
  const script = `const { prepareDatabase } = await import('@letters/db'); await prepareDatabase(${JSON.stringify(databaseUrl)}); process.exit(0)`
  await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', script], { cwd: releaseDir })
}

export async function prepareEnvironment(cleanup: Cleanup, servers: ServerOptions): Promise<BenchEnvironment> {
  const runId = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`
  // Each undo is registered before its resource is made, and waits for the making to end: an
  // interruption in between must not undo first and leave what is made afterwards behind.
  const creatingDirectory = mkdtemp(join(tmpdir(), 'letters-bench-'))
  cleanup.defer('the run’s directory', async () => rm(await creatingDirectory, { recursive: true, force: true }))
  const directory = await creatingDirectory

  const queuePrefix = `letters-bench-${runId.replace('_', '-')}`
  cleanup.defer(`the Redis keys ${queuePrefix}*`, () => deleteKeys(servers.redisUrl, `${queuePrefix}*`))

  const databaseUrl = new URL(servers.postgresUrl)
  databaseUrl.pathname = `/letters_bench_${runId}`
  const preparing = servers.releaseDir ? prepareDatabaseOf(servers.releaseDir, databaseUrl.toString()) : prepareDatabase(databaseUrl.toString())
  cleanup.defer(`the database ${databaseUrl.pathname.slice(1)}`, async () => {
    await preparing.catch(() => {})
    await dropDatabase(databaseUrl.toString())
  })
  await preparing

  const adminToken = randomBytes(24).toString('hex')
  const config = loadConfig({
    DATABASE_URL: databaseUrl.toString(),
    REDIS_URL: servers.redisUrl,
    QUEUE_PREFIX: queuePrefix,
    ARTIFACTS_DIR: join(directory, 'artifacts'),
    SPOOL_DIR: join(directory, 'spool'),
    ADMIN_TOKEN: adminToken,
    SEED_DEMO: 'false',
    ...SETTINGS,
  })

  const sql = postgres(config.databaseUrl, { max: 2, onnotice: () => {} })
  cleanup.defer('the benchmark’s Postgres connections', () => sql.end({ timeout: 2 }))
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: null })
  const queues = openQueues(redis, queuePrefix, console)
  cleanup.defer('the benchmark’s Redis connection', async () => {
    await closeQueues(queues)
    redis.disconnect()
  })

  const track = (started: ServiceProcess) => cleanup.defer(`process ${started.child.pid}`, () => started.kill())
  const startService = (name: ServiceName, env: Record<string, string> = {}) =>
    startServiceProcess(name, config, { ...SETTINGS, ...env }, { throughTsxCli: true, onSpawn: track, cwd: servers.releaseDir })
  return {
    config,
    adminToken,
    sql,
    queues,
    startService,
    async startGateway() {
      const port = await freePort()
      await startService('gateway', { PORT: String(port) })
      return `http://127.0.0.1:${port}`
    },
    async startBaseline(name) {
      const port = await freePort()
      const env = serviceEnv(config, { ...SETTINGS, HOST: '127.0.0.1', PORT: String(port) })
      await startHttpProcess(`bench/src/baselines/${name}.ts`, env, port, { throughTsxCli: true, onSpawn: track })
      return `http://127.0.0.1:${port}`
    },
  }
}

/** Waits until the gateway's dispatcher has moved every outbox row to Redis, so the backlog of one row does not slow the next. */
export async function untilOutboxEmpty(env: Pick<BenchEnvironment, 'sql'>, warn: (text: string) => void): Promise<void> {
  const deadline = performance.now() + 60_000
  for (;;) {
    const [row] = await env.sql<Array<{ pending: number }>>`SELECT count(*)::int AS pending FROM outbox WHERE sent_at IS NULL`
    if (!row || row.pending === 0) return
    if (performance.now() > deadline) {
      warn(`warning: ${row.pending} outbox rows still unsent after 60 s; going on`)
      return
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}
