import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_TOKEN, isolatedDatabase, testConfig } from '../support/context.js'
import { freePort, repositoryRoot, serviceEnv, waitUntilAnswering } from '../support/processes.js'

/** Linux only: the processes are read from /proc. */
const onLinux = process.platform === 'linux'

let database: Awaited<ReturnType<typeof isolatedDatabase>>
let floorDir: string
let npm: ChildProcess | undefined
let output = ''
let baseUrl: string

/** The processes of a process group (npm start's, which the test made a group of its own), with their arguments. */
async function processGroup(pgid: number): Promise<Array<{ pid: number; ppid: number; args: string }>> {
  const found = []
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const [stat, cmdline] = await Promise.all([readFile(`/proc/${entry}/stat`, 'utf8'), readFile(`/proc/${entry}/cmdline`, 'utf8')]).catch(() => ['', ''])
    // Fields after the command name, which is in parentheses and may hold spaces: state ppid pgrp ...
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    if (Number(fields[2]) === pgid) found.push({ pid: Number(entry), ppid: Number(fields[1]), args: cmdline.replaceAll('\0', ' ') })
  }
  return found
}

/** The process that runs `entry` itself: tsx's CLI starts it as `node … --import <tsx loader> <entry>`. */
async function serviceProcess(pgid: number, entry: string) {
  return (await processGroup(pgid)).find((proc) => proc.args.includes('--import') && proc.args.trim().endsWith(entry))
}

beforeAll(async () => {
  if (!onLinux) return
  database = await isolatedDatabase('start')
  floorDir = await mkdtemp(join(tmpdir(), 'letters-start-'))
  const port = await freePort()
  baseUrl = `http://127.0.0.1:${port}`
  const config = testConfig({
    DATABASE_URL: database.url,
    QUEUE_PREFIX: `${testConfig().queuePrefix}-start`,
    ARTIFACTS_DIR: join(floorDir, 'artifacts'),
    SPOOL_DIR: join(floorDir, 'spool'),
  })
  // A process group of its own, so that the test can press Ctrl-C: SIGINT to every process in it.
  npm = spawn('npm', ['start'], {
    cwd: repositoryRoot,
    env: serviceEnv(config, { PORT: String(port), ADMIN_TOKEN, LOG_LEVEL: 'warn' }),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  npm.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()))
  npm.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()))
  await waitUntilAnswering(`${baseUrl}/healthz`, 60_000)
}, 90_000)

afterAll(async () => {
  if (!onLinux) return
  if (npm && npm.exitCode === null && npm.signalCode === null) {
    process.kill(-npm.pid!, 'SIGKILL')
    await once(npm, 'exit')
  }
  await database.drop()
  await rm(floorDir, { recursive: true, force: true })
})

describe.skipIf(!onLinux)('npm start', () => {
  it('restarts a process that crashed, leaves the others running, and stops all four on Ctrl-C', async () => {
    const pgid = npm!.pid!
    const gateway = await serviceProcess(pgid, 'services/gateway/src/main.ts')
    await expect.poll(() => serviceProcess(pgid, 'services/address-worker/src/main.ts'), { timeout: 30_000, interval: 200 }).toBeDefined()
    const crashed = (await serviceProcess(pgid, 'services/address-worker/src/main.ts'))!
    expect(gateway).toBeDefined()

    process.kill(crashed.pid, 'SIGKILL')
    // concurrently starts it again 3 s later.
    const restarted = async () => (await serviceProcess(pgid, 'services/address-worker/src/main.ts'))?.pid ?? crashed.pid
    await expect.poll(restarted, { timeout: 30_000, interval: 200 }).not.toBe(crashed.pid)
    expect(output).toMatch(/address-worker\/src\/main\.ts restarted/)
    expect((await serviceProcess(pgid, 'services/gateway/src/main.ts'))?.pid).toBe(gateway!.pid)
    expect((await fetch(`${baseUrl}/healthz`)).status).toBe(200)
    expect(await serviceProcess(pgid, 'services/production-worker/src/main.ts')).toBeDefined()
    await expect.poll(() => serviceProcess(pgid, 'services/webhook-worker/src/main.ts'), { timeout: 30_000, interval: 200 }).toBeDefined()

    // Ctrl-C: the terminal sends SIGINT to the whole foreground group.
    process.kill(-pgid, 'SIGINT')
    // npm itself ends by the signal, as it does in a terminal; concurrently, under it, exits 0.
    const [code, signal] = (await once(npm!, 'exit')) as [number | null, string | null]
    expect({ code, signal }).toEqual({ code: null, signal: 'SIGINT' })
    expect(output).toMatch(/services\/gateway\/src\/main\.ts exited with code SIGINT/)
    // Nothing is left behind, nothing was started again.
    await expect.poll(async () => (await processGroup(pgid)).map((proc) => proc.args), { timeout: 15_000, interval: 200 }).toEqual([])
    expect(output.match(/restarted/g)).toHaveLength(1)
  }, 120_000)
})
