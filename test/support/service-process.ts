import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import type { Config } from '@letters/config'

const repositoryRoot = fileURLToPath(new URL('../..', import.meta.url))

/** A service's real entry point in a process of its own, on this run's database, Redis and prefix, for a test to kill. */
export interface ServiceProcess {
  child: ChildProcess
  /** SIGKILL: no handler runs, as when the machine or the OOM killer takes it. */
  kill(): Promise<void>
}

/** The environment a service process starts with: the test's configuration, then `env` on top. */
export function serviceEnv(config: Config, env: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: config.databaseUrl,
    REDIS_URL: config.redisUrl,
    QUEUE_PREFIX: config.queuePrefix,
    ADMIN_TOKEN: config.adminToken ?? '',
    LOG_LEVEL: 'silent',
    SEED_DEMO: 'false',
    ...env,
  }
}

/** Starts `services/<name>/src/main.ts`; resolves once `ready` says it serves. */
export async function startServiceProcess(name: 'gateway' | 'address-worker' | 'production-worker', config: Config, env: Record<string, string>, ready: () => Promise<boolean>): Promise<ServiceProcess> {
  // Workers serve /metrics on a port of their own: several in one run must not share the default.
  const metricsPort: Record<string, string> = name === 'gateway' || env.METRICS_PORT ? {} : { METRICS_PORT: String(await freePort()) }
  const child = spawn(process.execPath, ['--import', 'tsx', `services/${name}/src/main.ts`], { cwd: repositoryRoot, env: serviceEnv(config, { ...metricsPort, ...env }), stdio: ['ignore', 'ignore', 'inherit'] })
  const exited = once(child, 'exit')
  const deadline = Date.now() + 30_000
  while (!(await ready().catch(() => false))) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode} before it was ready`)
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`${name} was not ready within 30 s`)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return {
    child,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      await exited
    },
  }
}

/** A gateway process on `port`, ready once /healthz answers. */
export function startGatewayProcess(config: Config, port: number, env: Record<string, string> = {}): Promise<ServiceProcess> {
  return startServiceProcess('gateway', config, { HOST: '127.0.0.1', PORT: String(port), ...env }, async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok)
}

/** A port nobody listens on now, for a process to take. */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net')
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  server.close()
  await once(server, 'close')
  return port
}
