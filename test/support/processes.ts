import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'
import type { Config } from '@letters/config'

export const repositoryRoot = fileURLToPath(new URL('../..', import.meta.url))

export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  server.close()
  await once(server, 'close')
  return port
}

/** The environment a child process needs to run on a test's database, Redis and queue prefix. */
export function serviceEnv(config: Config, env: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: config.databaseUrl,
    REDIS_URL: config.redisUrl,
    QUEUE_PREFIX: config.queuePrefix,
    ARTIFACTS_DIR: config.artifactsDir,
    SPOOL_DIR: config.spoolDir,
    LOG_LEVEL: 'silent',
    SEED_DEMO: 'false',
    ...env,
  }
}

export interface ServiceProcess {
  child: ChildProcess
  /** Everything it wrote, stdout and stderr. */
  output(): string
  /** Resolves with its exit code (or signal) once it has exited. */
  exited: Promise<number | string>
  alive(): boolean
}

/** A TypeScript entry point (a service's main.ts, a test fixture) run as a process of its own through tsx. */
export function startProcess(entry: string, env: NodeJS.ProcessEnv): ServiceProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], { cwd: repositoryRoot, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()))
  let exitCode: number | string | undefined
  const exited = once(child, 'exit').then(([code, signal]) => (exitCode = (code as number | null) ?? (signal as string)))
  return { child, output: () => output, exited, alive: () => exitCode === undefined }
}

/**
 * test/support/production-worker-process.ts: the real production worker with short locks, for a
 * test to kill. Resolves once it consumes the queue.
 */
export async function startFloorProcess(config: Config, env: Record<string, string> = {}): Promise<ServiceProcess> {
  const started = startProcess('test/support/production-worker-process.ts', serviceEnv(config, env))
  const [line] = (await once(started.child.stdout!, 'data')) as [Buffer]
  if (line.toString() !== 'consuming\n') throw new Error(`the production worker process said: ${line.toString()}`)
  return started
}

/** Waits until `url` answers 200 (a gateway process started), outside a test's own polling. */
export async function waitUntilAnswering(url: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while ((await fetch(url).then((response) => response.status, () => 0)) !== 200) {
    if (Date.now() > deadline) throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}
