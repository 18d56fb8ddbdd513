import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { readFile, readdir } from 'node:fs/promises'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'
import type { Config, ProcessName } from '@letters/config'

export const repositoryRoot = fileURLToPath(new URL('../..', import.meta.url))

/**
 * How long a process may take to be ready: the machine is shared. A start is 3 to 6 s of CPU; on two cores shared by a dozen busy processes (CI's load beside
 * other test files that start processes too) that is 20 s or more. A process that dies is
 * reported at once, not at this deadline.
 */
const READY_TIMEOUT_MS = 120_000

/** A port nobody listens on now, for a process (or a server of the test's own) to take. */
export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  server.close()
  await once(server, 'close')
  return port
}

/** The environment a child process needs to run on a test's database, Redis, queue prefix and directories; `env` on top. */
export function serviceEnv(config: Config, env: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: config.databaseUrl,
    DATABASE_POOL_MAX: String(config.databasePoolMax),
    REDIS_URL: config.redisUrl,
    QUEUE_PREFIX: config.queuePrefix,
    ...(config.adminToken === undefined ? {} : { ADMIN_TOKEN: config.adminToken }),
    ARTIFACTS_DIR: config.artifactsDir,
    SPOOL_DIR: config.spoolDir,
    // The config's shedding threshold: a child gateway on a loaded machine would otherwise shed
    // the test's requests with 503 at the default 1 s of event-loop delay.
    EVENT_LOOP_MAX_DELAY_MS: String(config.eventLoopMaxDelayMs),
    RENDER_WARM_UP: String(config.proofs.renderWarmUp),
    RENDER_PRIORITY: config.proofs.renderPriority,
    LOG_LEVEL: 'silent',
    SEED_DEMO: 'false',
    ...env,
  }
}

/** A TypeScript entry point (a service's main.ts, a test fixture) in a process of its own, for a test to kill. */
export interface ServiceProcess {
  child: ChildProcess
  /** Everything it wrote, stdout and stderr. */
  output(): string
  /** Resolves with its exit code (or signal) once it has exited. */
  exited: Promise<number | string>
  alive(): boolean
  /** SIGKILL, as when the machine or the OOM killer takes it: no handler of its runs. Resolves once it is gone. */
  kill(): Promise<void>
}

export interface StartOptions {
  /**
   * Through the tsx CLI, as `npm start` runs it, instead of `node --import tsx`: threads then
   * inherit tsx's loader from the CLI's arguments. The CLI runs the entry in a child of its own,
   * so the two get a process group of their own, which kill() ends as a whole.
   */
  throughTsxCli?: boolean
  /**
   * Node's own arguments before `entry`, instead of tsx's loader: `entry` is compiled JavaScript
   * (`npm run build`), run as `npm run start:prod` runs it.
   */
  nodeArgs?: string[]
  /** The checkout it runs from (another release's, in a rolling upgrade); the repository by default. */
  cwd?: string
  timeoutMs?: number
  /**
   * Called with the process as soon as it is spawned, before it is ready: a caller that must
   * kill everything it started when interrupted (the benchmark's Ctrl-C) holds it from then on.
   */
  onSpawn?: (started: ServiceProcess) => void
}

/**
 * The package export condition under which a workspace package resolves to its compiled
 * `dist/*.js` instead of its `src/*.ts` (the default, which tsx, vitest and tsc read).
 */
export const BUILT_CONDITION = 'letters-dist'

/**
 * Whether a service's `src/main.ts` is started from its compiled `dist/main.js`, as `npm run
 * start:prod` runs it. The test run sets `RUN_FROM_BUILD=1` (vitest.config.ts) and its global
 * setup brings the build up to date first (`npm run build`, incremental). A start then costs
 * about half the CPU of tsx compiling and loading the sources (3.5 s against 6 s on CI's machine
 * kind), and a run starts about a hundred. `RUN_FROM_BUILD=0` runs them through tsx, as `vitest
 * --watch` needs while the sources change under it; the benchmark, which builds nothing, runs
 * them from the sources too.
 */
export const servicesFromBuild = () => process.env.RUN_FROM_BUILD === '1'

/** `services/<name>/src/main.ts` → `['--conditions=letters-dist', 'services/<name>/dist/main.js']`; undefined for any other entry. */
function builtArgs(entry: string): string[] | undefined {
  const service = /^services\/([a-z-]+)\/src\/main\.ts$/.exec(entry)?.[1]
  return service ? [`--conditions=${BUILT_CONDITION}`, `services/${service}/dist/main.js`] : undefined
}

/** Starts `entry` (a path from the repository root); not waiting for anything. */
function startProcess(entry: string, env: NodeJS.ProcessEnv, options: Pick<StartOptions, 'throughTsxCli' | 'nodeArgs' | 'cwd'> = {}): ServiceProcess {
  // Another release's checkout (a rolling upgrade) is not built: it runs from its sources.
  const built = servicesFromBuild() && options.cwd === undefined ? builtArgs(entry) : undefined
  const args = options.throughTsxCli
    ? ['node_modules/tsx/dist/cli.mjs', entry]
    : options.nodeArgs
      ? [...options.nodeArgs, entry]
      : (built ?? ['--import', 'tsx', entry])
  const detached = options.throughTsxCli ?? false
  const child = spawn(process.execPath, args, { cwd: options.cwd ?? repositoryRoot, env, detached, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
  const exited = once(child, 'exit').then(([code, signal]) => (code as number | null) ?? (signal as string))
  const alive = () => child.exitCode === null && child.signalCode === null
  return {
    child,
    output: () => output,
    exited,
    alive,
    async kill() {
      if (alive()) process.kill(detached ? -child.pid! : child.pid!, 'SIGKILL')
      await exited
    },
  }
}

/** The end of what a process wrote, for an error message. */
const tail = (output: string) => (output.length > 4000 ? `…${output.slice(-4000)}` : output)

/**
 * Resolves once `ready` says so; fails as soon as `started` exits, or at the deadline, with what
 * it wrote. Either way a process that never got ready is killed.
 */
async function untilReady(name: string, started: ServiceProcess, ready: () => boolean | Promise<boolean>, timeoutMs: number): Promise<ServiceProcess> {
  const deadline = Date.now() + timeoutMs
  while (
    !(await Promise.resolve()
      .then(ready)
      .catch(() => false))
  ) {
    let failure: string | undefined
    if (!started.alive()) failure = `${name} exited with ${await started.exited} before it was ready`
    else if (Date.now() > deadline) failure = `${name} was not ready within ${timeoutMs} ms`
    if (failure) {
      await started.kill()
      throw new Error(`${failure}; it wrote:\n${tail(started.output())}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return started
}

/** One probe of /healthz; a starting process on a loaded machine may take seconds to answer it, and a probe given up early only starts the next. */
const answersHealthz = (port: string) => async () => (await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(10_000) })).ok

export type ServiceName = ProcessName

/**
 * Starts `services/<name>/src/main.ts` on 127.0.0.1 with the test's configuration, `env` on top;
 * resolves once its /healthz answers 200: the gateway's on PORT (which `env` must give), a
 * worker's on METRICS_PORT, a free one unless `env` gives it, since several workers in one run
 * must not fight over the default 9101 and 9102.
 */
export async function startServiceProcess(
  name: ServiceName,
  config: Config,
  env: Record<string, string> = {},
  options: StartOptions = {},
): Promise<ServiceProcess> {
  const ports: Record<string, string> = name === 'gateway' || env.METRICS_PORT ? {} : { METRICS_PORT: String(await freePort()) }
  const variables = serviceEnv(config, { HOST: '127.0.0.1', ...ports, ...env })
  const healthPort = name === 'gateway' ? variables.PORT : variables.METRICS_PORT
  if (!healthPort) throw new Error(`${name} needs PORT in env: its readiness is its /healthz`)
  return startHttpProcess(`services/${name}/src/main.ts`, variables, healthPort, options)
}

/**
 * Starts any TypeScript entry point that serves HTTP (a service, the benchmark's baseline
 * servers) with exactly `env`; resolves once its /healthz on 127.0.0.1:`healthPort` answers 200.
 */
export function startHttpProcess(entry: string, env: NodeJS.ProcessEnv, healthPort: string | number, options: StartOptions = {}): Promise<ServiceProcess> {
  const started = startProcess(entry, env, options)
  options.onSpawn?.(started)
  return untilReady(entry, started, answersHealthz(String(healthPort)), options.timeoutMs ?? READY_TIMEOUT_MS)
}

/** A gateway process on 127.0.0.1:`port`, ready once its /healthz answers. */
export function startGatewayProcess(config: Config, port: number, env: Record<string, string> = {}, options: StartOptions = {}): Promise<ServiceProcess> {
  return startServiceProcess('gateway', config, { PORT: String(port), ...env }, options)
}

/**
 * test/support/production-worker-process.mjs: the real production worker with short locks, for a
 * test to kill. Resolves once it consumes the queue. From the build, as the services are
 * (servicesFromBuild); through tsx, on the sources, otherwise.
 */
export function startFloorProcess(config: Config, env: Record<string, string> = {}, options: Pick<StartOptions, 'timeoutMs'> = {}): Promise<ServiceProcess> {
  const started = startProcess(
    'test/support/production-worker-process.mjs',
    serviceEnv(config, env),
    servicesFromBuild() ? { nodeArgs: [`--conditions=${BUILT_CONDITION}`] } : {},
  )
  return untilReady('the production worker process', started, () => started.output().includes('consuming\n'), options.timeoutMs ?? READY_TIMEOUT_MS)
}

/** Waits until `url` answers 200: a process the test started some other way (npm start) serves. */
export async function waitUntilAnswering(url: string, timeoutMs = READY_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (
    (await fetch(url).then(
      (response) => response.status,
      () => 0,
    )) !== 200
  ) {
    if (Date.now() > deadline) throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

/** The processes under `rootPid` (children, their children, …), with their arguments, read from /proc (Linux). */
export async function processTree(rootPid: number): Promise<Array<{ pid: number; ppid: number; args: string }>> {
  const all: Array<{ pid: number; ppid: number; args: string }> = []
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const [stat, cmdline] = await Promise.all([readFile(`/proc/${entry}/stat`, 'utf8'), readFile(`/proc/${entry}/cmdline`, 'utf8')]).catch(() => ['', ''])
    if (!stat) continue
    // Fields after the command name, which is in parentheses and may hold spaces: state ppid ...
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    all.push({ pid: Number(entry), ppid: Number(fields[1]), args: cmdline.replaceAll('\0', ' ').trim() })
  }
  const under = new Set([rootPid])
  for (let grew = true; grew;) {
    grew = false
    for (const proc of all) {
      if (under.has(proc.pid) || !under.has(proc.ppid)) continue
      under.add(proc.pid)
      grew = true
    }
  }
  return all.filter((proc) => proc.pid !== rootPid && under.has(proc.pid))
}

/** Whether a process of that pid is still there (a zombie counts as gone). */
export async function processAlive(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')
  return stat !== '' && stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z'
}
