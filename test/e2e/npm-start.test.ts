import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect } from 'vitest'
import { ADMIN_TOKEN, testConfig } from '../support/context.js'
import { it as base } from '../support/fixtures.js'
import { freePort, processAlive, processTree, repositoryRoot, serviceEnv, waitUntilAnswering } from '../support/processes.js'

/** Linux only: the processes are read from /proc. */
const onLinux = process.platform === 'linux'

/** The process that runs `entry` itself, under npm start's supervisor: `node --import tsx <entry>`. */
async function serviceProcess(npmPid: number, entry: string) {
  return (await processTree(npmPid)).find((proc) => proc.args.includes('--import tsx') && proc.args.endsWith(entry))
}

/**
 * `npm start` on the file's database, in a process group of its own, so that the test can press
 * Ctrl-C: SIGINT to every process in it. `output` is everything it has written so far.
 */
const it = base.extend('npmStart', { scope: 'file' }, async ({ databaseUrl }, { onCleanup }) => {
  const floorDir = await mkdtemp(join(tmpdir(), 'letters-start-'))
  const port = await freePort()
  const baseUrl = `http://127.0.0.1:${port}`
  const config = testConfig({
    DATABASE_URL: databaseUrl,
    QUEUE_PREFIX: `${testConfig().queuePrefix}-start`,
    ARTIFACTS_DIR: join(floorDir, 'artifacts'),
    SPOOL_DIR: join(floorDir, 'spool'),
  })
  const npm = spawn('npm', ['start'], {
    cwd: repositoryRoot,
    env: serviceEnv(config, { PORT: String(port), ADMIN_TOKEN, LOG_LEVEL: 'warn' }),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const started = { npm, baseUrl, output: '' }
  npm.stdout.on('data', (chunk: Buffer) => (started.output += chunk.toString()))
  npm.stderr.on('data', (chunk: Buffer) => (started.output += chunk.toString()))
  const stop = async () => {
    if (npm.exitCode === null && npm.signalCode === null) {
      for (const proc of await processTree(npm.pid!)) process.kill(proc.pid, 'SIGKILL')
      process.kill(-npm.pid!, 'SIGKILL')
      await once(npm, 'exit')
    }
    await rm(floorDir, { recursive: true, force: true })
  }
  await waitUntilAnswering(`${baseUrl}/healthz`, 60_000).catch(async (error: unknown) => {
    await stop()
    throw error
  })
  onCleanup(stop)
  return started
})
it.override({ databaseLabel: 'start' })

describe.skipIf(!onLinux)('npm start', () => {
  // Its timeout includes `npm start` answering.
  it('migrates first, restarts a process that crashed, leaves the others running, and stops all four on Ctrl-C', async ({ npmStart }) => {
    const { npm, baseUrl } = npmStart
    const pid = npm.pid!
    expect(npmStart.output).toMatch(/el esquema (ya estaba al día|está en)/)
    const gateway = await serviceProcess(pid, 'services/gateway/src/main.ts')
    await expect.poll(() => serviceProcess(pid, 'services/address-worker/src/main.ts'), { timeout: 30_000, interval: 200 }).toBeDefined()
    const crashed = (await serviceProcess(pid, 'services/address-worker/src/main.ts'))!
    expect(gateway).toBeDefined()

    process.kill(crashed.pid, 'SIGKILL')
    // The supervisor starts it again 3 s later.
    const restarted = async () => (await serviceProcess(pid, 'services/address-worker/src/main.ts'))?.pid ?? crashed.pid
    await expect.poll(restarted, { timeout: 30_000, interval: 200 }).not.toBe(crashed.pid)
    expect(npmStart.output).toMatch(/address-worker\/src\/main\.ts exited with signal SIGKILL; starting it again in 3 s/)
    expect((await serviceProcess(pid, 'services/gateway/src/main.ts'))?.pid).toBe(gateway!.pid)
    expect((await fetch(`${baseUrl}/healthz`)).status).toBe(200)
    expect(await serviceProcess(pid, 'services/production-worker/src/main.ts')).toBeDefined()
    await expect.poll(() => serviceProcess(pid, 'services/webhook-worker/src/main.ts'), { timeout: 30_000, interval: 200 }).toBeDefined()
    const services = (await processTree(pid)).filter((proc) => proc.args.includes('--import tsx'))
    expect(services).toHaveLength(4)

    // Ctrl-C: the terminal sends SIGINT to the whole foreground group (npm and the supervisor);
    // the supervisor sends each process SIGTERM once.
    process.kill(-pid, 'SIGINT')
    const [code, signal] = (await once(npm, 'exit')) as [number | null, string | null]
    // npm passes on the supervisor's code: 0, every process having stopped as told.
    expect({ code, signal }, npmStart.output).toEqual({ code: 0, signal: null })
    // Each stops as told: exit code 0, or by the signal itself if it was still starting.
    await expect
      .poll(() => npmStart.output.match(/src\/main\.ts exited with (code 0|signal SIGTERM)\n/g)?.length ?? 0, { timeout: 15_000, interval: 200 })
      .toBe(4)
    // Nothing is left behind, nothing was started again.
    const pids = [...services.map((proc) => proc.pid), services[0]!.ppid]
    await expect.poll(async () => (await Promise.all(pids.map(processAlive))).filter(Boolean).length, { timeout: 15_000, interval: 200 }).toBe(0)
    expect(npmStart.output.match(/starting it again/g)).toHaveLength(1)
  }, 210_000)
})
