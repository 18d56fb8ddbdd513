import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect } from 'vitest'
import { processNames, type ProcessName } from '@letters/config'
import { adminAccount, overHttp } from '../support/accounts.js'
import { testConfig } from '../support/context.js'
import { it as base } from '../support/fixtures.js'
import { compact, pdfText } from '../support/pdf.js'
import {
  freePort,
  processAlive,
  processTree,
  repositoryRoot,
  serviceEnv,
  startHttpProcess,
  waitUntilAnswering,
  type ServiceProcess,
} from '../support/processes.js'
import { BUILT_CONDITION, productionCommands, runBuild } from '../support/production-build.js'

/** Linux only: the processes' command lines and environments are read from /proc. */
const onLinux = process.platform === 'linux'

/** A process's command line and environment, as the kernel holds them. */
async function procOf(pid: number) {
  const [cmdline, environ] = await Promise.all([readFile(`/proc/${pid}/cmdline`, 'utf8'), readFile(`/proc/${pid}/environ`, 'utf8')])
  return { argv: cmdline.split('\0').filter(Boolean), environ: environ.split('\0').filter(Boolean) }
}

/**
 * The project built (npm run build: the build this file runs is the one it checks, tsc -b compiles
 * what changed since the last), then every service started from it as `npm run start:prod` does,
 * each on a port of its own, on the file's database. The tests share them, in order: the last
 * but one stops them.
 */
const it = base.extend('production', { scope: 'file' }, async ({ databaseUrl }, { onCleanup }) => {
  await runBuild()
  const commands = await productionCommands()
  const floorDir = await mkdtemp(join(tmpdir(), 'letters-prod-'))
  const config = testConfig({
    DATABASE_URL: databaseUrl,
    QUEUE_PREFIX: `${testConfig().queuePrefix}-prod`,
    ARTIFACTS_DIR: join(floorDir, 'artifacts'),
    SPOOL_DIR: join(floorDir, 'spool'),
  })
  const started = new Map<ProcessName, { service: ServiceProcess; healthUrl: string }>()
  /** Starts `name` on a port of its own; resolves once its /healthz answers. */
  async function startBuilt(name: ProcessName) {
    const port = await freePort()
    const command = commands[name]
    // NODE_OPTIONS emptied: nothing this test's own process was started with (a loader) reaches it.
    const env = serviceEnv(config, {
      HOST: '127.0.0.1',
      NODE_ENV: 'production',
      NODE_OPTIONS: '',
      LOG_LEVEL: 'warn',
      ...(name === 'gateway' ? { PORT: String(port) } : { METRICS_PORT: String(port) }),
    })
    const service = await startHttpProcess(command.entry, env, port, { nodeArgs: command.nodeArgs, timeoutMs: 60_000 })
    started.set(name, { service, healthUrl: `http://127.0.0.1:${port}/healthz` })
    return port
  }
  const stop = async () => {
    for (const { service } of started.values()) await service.kill()
    await rm(floorDir, { recursive: true, force: true })
  }
  try {
    const baseUrl = `http://127.0.0.1:${await startBuilt('gateway')}`
    // Every worker's start settled before a failure is thrown, so that stop() finds each that runs.
    const workers = await Promise.allSettled(processNames.filter((name) => name !== 'gateway').map(startBuilt))
    for (const worker of workers) if (worker.status === 'rejected') throw worker.reason
    onCleanup(stop)
    return { baseUrl, config, floorDir, started }
  } catch (error) {
    await stop()
    throw error
  }
})
it.override({ databaseLabel: 'prod' })

/** What each worker logs once it consumes its queue (runWorkerProcess). */
const CONSUMING = ['address worker consuming', 'production worker consuming', 'webhook worker consuming']

describe.skipIf(!onLinux)('the production build (npm run build, then npm run start:prod)', () => {
  // The first test also waits for the build and for the services to start.
  it('runs every service as compiled JavaScript under plain node: no tsx in any command line or environment', async ({ production: { started } }) => {
    for (const name of processNames) {
      const { argv, environ } = await procOf(started.get(name)!.service.child.pid!)
      expect(argv.slice(1), name).toEqual([`--conditions=${BUILT_CONDITION}`, `services/${name}/dist/main.js`])
      expect(argv.join(' '), name).not.toMatch(/tsx/)
      expect(
        environ.find((variable) => variable.startsWith('NODE_OPTIONS=')),
        name,
      ).toBe('NODE_OPTIONS=')
      expect(
        environ.filter((variable) => /tsx/.test(variable)),
        name,
      ).toEqual([])
    }
  }, 360_000)

  it('answers /healthz and /readyz on the gateway and /healthz on every worker’s metrics port', async ({ production: { baseUrl, started } }) => {
    expect(await (await fetch(`${baseUrl}/healthz`)).json()).toEqual({ status: 'ok' })
    expect(await (await fetch(`${baseUrl}/readyz`)).json()).toEqual({ status: 'ready' })
    for (const name of processNames.filter((name) => name !== 'gateway')) {
      const response = await fetch(started.get(name)!.healthUrl)
      expect(response.status, name).toBe(200)
    }
  })

  it('takes a letter from the API to the printer: migrations, render threads, fonts and patched packages all found from dist', async ({
    production: { baseUrl, floorDir },
  }) => {
    const account = await adminAccount(overHttp(baseUrl), 100, 'Papelería Luna')
    const headers = { 'x-api-key': account.apiKey, 'content-type': 'application/json' }
    const created = await fetch(`${baseUrl}/single`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        cardDesignId: account.cardDesignId,
        envelopeDesignId: account.envelopeDesignId,
        senderId: account.senderId,
        message: 'Gracias por tu pedido, Lucía.',
        name: 'Lucía',
        surname: 'García',
        address: 'C/ Mayor 1',
        zip: '28013',
        city: 'Madrid',
        country: 'ES',
      }),
    })
    expect(created.status, await created.clone().text()).toBe(200)
    const { cardId } = (await created.json()) as { cardId: string }

    // The gateway draws proofs in worker threads: their compiled file, loaded from dist.
    const proof = await fetch(`${baseUrl}/cards/${cardId}/proof`, { headers })
    expect(proof.headers.get('content-type')).toBe('application/pdf')
    expect((await pdfText(Buffer.from(await proof.arrayBuffer()))).text).toContain(compact('Gracias por tu pedido, Lucía.'))

    const status = async () => ((await (await fetch(`${baseUrl}/cards/${cardId}`, { headers })).json()) as { status: string }).status
    await expect.poll(status, { timeout: 60_000, interval: 250 }).toBe('printed')
    expect((await readdir(join(floorDir, 'spool'))).sort()).toEqual([`${cardId}.card.pdf`, `${cardId}.envelope.pdf`])
    const card = await pdfText(await readFile(join(floorDir, 'spool', `${cardId}.card.pdf`)))
    expect(card.text).toBe(compact('Gracias por tu pedido, Lucía. Papelería Luna'))
  }, 120_000)

  it('stops every service on SIGTERM with exit code 0', async ({ production: { started } }) => {
    for (const { service } of started.values()) service.child.kill('SIGTERM')
    const codes = await Promise.all(processNames.map(async (name) => [name, await started.get(name)!.service.exited] as const))
    expect(Object.fromEntries(codes)).toEqual(Object.fromEntries(processNames.map((name) => [name, 0])))
  }, 60_000)

  it('npm run start:prod stops all four on SIGTERM, as a supervisor sends it to npm alone: nothing restarted, nothing left, exit code 0', async ({
    production: { config },
  }) => {
    const port = await freePort()
    const npm = spawn('npm', ['run', 'start:prod'], {
      cwd: repositoryRoot,
      // info: each worker's line once it consumes, which the test waits for.
      env: serviceEnv(config, { HOST: '127.0.0.1', NODE_ENV: 'production', NODE_OPTIONS: '', LOG_LEVEL: 'info', PORT: String(port) }),
      // A group of its own: the signal below reaches npm only, not through a terminal's group.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    npm.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
    npm.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
    const exited = once(npm, 'exit') as Promise<[number | null, string | null]>
    try {
      await waitUntilAnswering(`http://127.0.0.1:${port}/readyz`, 60_000)
      const services = async () => (await processTree(npm.pid!)).filter((proc) => /services\/[a-z-]+\/dist\/main\.js$/.test(proc.args))
      await expect.poll(async () => (await services()).length, { timeout: 30_000, interval: 200 }).toBe(processNames.length)
      const pids = (await services()).map((proc) => proc.pid)
      // A running stack: every worker past its start (a process still loading its modules has no
      // handler for the signal yet, and ends by it rather than with code 0).
      const consuming = () => CONSUMING.filter((message) => output.includes(`"msg":"${message}"`))
      await expect.poll(consuming, { timeout: 60_000, interval: 200 }).toEqual(CONSUMING)

      npm.kill('SIGTERM')
      const [code, signal] = await exited
      expect({ code, signal }, output).toEqual({ code: 0, signal: null })
      for (const pid of pids) expect(await processAlive(pid), `process ${pid} outlived npm`).toBe(false)
      expect(output).not.toMatch(/starting it again/)
      expect(output.match(/exited with code 0/g), output).toHaveLength(processNames.length)
    } finally {
      if (npm.exitCode === null && npm.signalCode === null) {
        for (const proc of await processTree(npm.pid!)) process.kill(proc.pid, 'SIGKILL')
        process.kill(-npm.pid!, 'SIGKILL')
      }
    }
  }, 120_000)
})
