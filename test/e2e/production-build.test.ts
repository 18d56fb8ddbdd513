import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { processNames, type Config, type ProcessName } from '@letters/config'
import { adminAccount, overHttp } from '../support/accounts.js'
import { isolatedDatabase, testConfig } from '../support/context.js'
import { compact, pdfText } from '../support/pdf.js'
import { freePort, serviceEnv, startHttpProcess, type ServiceProcess } from '../support/processes.js'
import { BUILT_CONDITION, productionCommands, runBuild, type ProductionCommand } from '../support/production-build.js'

/** Linux only: the processes' command lines and environments are read from /proc. */
const onLinux = process.platform === 'linux'

let database: Awaited<ReturnType<typeof isolatedDatabase>>
let floorDir: string
let config: Config
let commands: Record<ProcessName, ProductionCommand>
const started = new Map<ProcessName, { service: ServiceProcess; healthUrl: string }>()
let baseUrl: string

/** Starts `name` as `npm run start:prod` does, on a port of its own; resolves once its /healthz answers. */
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

/** A process's command line and environment, as the kernel holds them. */
async function procOf(pid: number) {
  const [cmdline, environ] = await Promise.all([readFile(`/proc/${pid}/cmdline`, 'utf8'), readFile(`/proc/${pid}/environ`, 'utf8')])
  return { argv: cmdline.split('\0').filter(Boolean), environ: environ.split('\0').filter(Boolean) }
}

beforeAll(async () => {
  if (!onLinux) return
  // The build this test runs is the one it checks: tsc -b compiles what changed since the last.
  await runBuild()
  commands = await productionCommands()
  database = await isolatedDatabase('prod')
  floorDir = await mkdtemp(join(tmpdir(), 'letters-prod-'))
  config = testConfig({
    DATABASE_URL: database.url,
    QUEUE_PREFIX: `${testConfig().queuePrefix}-prod`,
    ARTIFACTS_DIR: join(floorDir, 'artifacts'),
    SPOOL_DIR: join(floorDir, 'spool'),
  })
  baseUrl = `http://127.0.0.1:${await startBuilt('gateway')}`
  await Promise.all(processNames.filter((name) => name !== 'gateway').map(startBuilt))
}, 360_000)

afterAll(async () => {
  if (!onLinux) return
  for (const { service } of started.values()) await service.kill()
  await database?.drop()
  if (floorDir) await rm(floorDir, { recursive: true, force: true })
})

describe.skipIf(!onLinux)('the production build (npm run build, then npm run start:prod)', () => {
  it('runs every service as compiled JavaScript under plain node: no tsx in any command line or environment', async () => {
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
  })

  it('answers /healthz and /readyz on the gateway and /healthz on every worker’s metrics port', async () => {
    expect(await (await fetch(`${baseUrl}/healthz`)).json()).toEqual({ status: 'ok' })
    expect(await (await fetch(`${baseUrl}/readyz`)).json()).toEqual({ status: 'ready' })
    for (const name of processNames.filter((name) => name !== 'gateway')) {
      const response = await fetch(started.get(name)!.healthUrl)
      expect(response.status, name).toBe(200)
    }
  })

  it('takes a letter from the API to the printer: migrations, render threads, fonts and patched packages all found from dist', async () => {
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

  it('stops every service on SIGTERM with exit code 0', async () => {
    for (const { service } of started.values()) service.child.kill('SIGTERM')
    const codes = await Promise.all(processNames.map(async (name) => [name, await started.get(name)!.service.exited] as const))
    expect(Object.fromEntries(codes)).toEqual(Object.fromEntries(processNames.map((name) => [name, 0])))
  }, 60_000)
})
