import { execFile } from 'node:child_process'
import { once } from 'node:events'
import { access, readFile, readdir } from 'node:fs/promises'
import { createServer } from 'node:http'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { drainTimeMs, loadConfig, processNames, type ProcessName } from '@letters/config'
import { repositoryRoot } from '../support/processes.js'
import { BUILT_CONDITION, MIGRATE_COMMAND, productionCommands, sourceOfBuiltFile, type ProductionCommand } from '../support/production-build.js'

interface ComposeService {
  image?: string
  build?: { context: string; dockerfile: string }
  command?: string[]
  environment?: Record<string, string>
  healthcheck?: { test: string[]; interval: string; timeout: string; retries: number; start_period?: string }
  volumes?: string[]
  ports?: string[]
  depends_on?: Record<string, { condition: string }>
  stop_grace_period?: string
  init?: boolean
  read_only?: boolean
}
interface Compose {
  services: Record<string, ComposeService>
  volumes: Record<string, unknown>
}

/** One Dockerfile instruction, its continuation lines joined, comments dropped. */
interface Instruction {
  keyword: string
  args: string
}

const exists = (path: string) =>
  access(join(repositoryRoot, path)).then(
    () => true,
    () => false,
  )

/** A Dockerfile's instructions grouped by stage (FROM … AS name), in order. */
function dockerfileStages(text: string): Array<{ from: string; name: string | undefined; instructions: Instruction[] }> {
  const lines = text.split('\n').filter((line) => !/^\s*#/.test(line))
  const instructions: Instruction[] = []
  for (let index = 0; index < lines.length; index++) {
    let line = lines[index]!
    while (line.endsWith('\\') && index + 1 < lines.length) line = `${line.slice(0, -1)} ${lines[++index]!.trim()}`
    const match = /^([A-Z]+)\s+(.*)$/.exec(line.trim())
    if (match) instructions.push({ keyword: match[1]!, args: match[2]! })
  }
  const stages: ReturnType<typeof dockerfileStages> = []
  for (const instruction of instructions) {
    if (instruction.keyword === 'FROM') {
      const [from, , name] = instruction.args.split(/\s+/)
      stages.push({ from: from!, name, instructions: [] })
    } else stages.at(-1)?.instructions.push(instruction)
  }
  return stages
}

/**
 * Node's LTS lines and the end of their support (the Node.js release schedule). A line whose
 * end has passed makes the image check fail: time to move the image to the next LTS.
 */
const nodeLtsEnd: Record<number, string> = { 22: '2027-04-30', 24: '2028-04-30', 26: '2029-04-30' }

/** What compose puts in place of `${NAME:-default}` and `${NAME:?message}` when nothing is set. */
function substitute(value: string): string {
  const required: Record<string, string> = { ADMIN_TOKEN: 'an-admin-token-of-32-characters!' }
  return value.replace(/\$\{(\w+):([-?])([^}]*)\}/g, (_, name: string, kind: string, rest: string) => {
    if (kind === '-') return rest
    if (!required[name]) throw new Error(`compose requires ${name} (${rest}) and the test has no value for it`)
    return required[name]
  })
}

/** A compose duration (`15s`, `2m30s`) in milliseconds. */
function durationMs(duration: string): number {
  const parts = [...duration.matchAll(/(\d+)(h|m|s|ms)/g)]
  expect(parts.map(([part]) => part).join(''), `a duration: ${duration}`).toBe(duration)
  return parts.reduce((total, [, amount, unit]) => total + Number(amount) * { h: 3_600_000, m: 60_000, s: 1000, ms: 1 }[unit as 'h' | 'm' | 's' | 'ms'], 0)
}

let compose: Compose
let stages: ReturnType<typeof dockerfileStages>
let commands: Record<ProcessName, ProductionCommand>
/** The runtime image's own ENV, under what compose adds. */
let imageEnv: Record<string, string>

beforeAll(async () => {
  compose = parse(await readFile(join(repositoryRoot, 'docker-compose.yml'), 'utf8'), { merge: true }) as Compose
  stages = dockerfileStages(await readFile(join(repositoryRoot, 'infra/Dockerfile'), 'utf8'))
  commands = await productionCommands()
  imageEnv = Object.fromEntries(
    stages
      .at(-1)!
      .instructions.filter((instruction) => instruction.keyword === 'ENV')
      .map((instruction) => /^(\w+)=(.*)$/.exec(instruction.args)!.slice(1) as [string, string]),
  )
})

/** A process's environment in its container: the image's ENV, then compose's, substituted. */
const environmentOf = (service: ComposeService) => ({
  ...imageEnv,
  ...Object.fromEntries(Object.entries(service.environment ?? {}).map(([name, value]) => [name, substitute(String(value))])),
})

describe('docker-compose.yml', () => {
  it('runs Postgres, Redis, the migrations and one container per process of the service', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['migrate', 'postgres', 'redis', ...processNames].sort())
  })

  it('migrates as a step of its own, from the same image, with the CLI the build compiles, before any process starts', async () => {
    const migrate = compose.services.migrate!
    expect(migrate.image).toBe('letters:local')
    expect(migrate.command).toEqual(MIGRATE_COMMAND)
    expect(await sourceOfBuiltFile(MIGRATE_COMMAND[2]!)).toBe('packages/cli/src/main.ts')
    expect(migrate.depends_on).toEqual({ postgres: { condition: 'service_healthy' } })
    expect(new URL(loadConfig(environmentOf(migrate)).databaseUrl).host).toBe('postgres:5432')
    expect(migrate.environment!.DATABASE_URL).toBe(compose.services.gateway!.environment!.DATABASE_URL)
  })

  it.each(processNames)('runs %s from the one image, exactly as npm run start:prod does, a file the build produces', async (name) => {
    const service = compose.services[name]!
    expect(service.build).toEqual({ context: '.', dockerfile: 'infra/Dockerfile' })
    expect(service.image).toBe('letters:local')
    expect(service.command).toEqual(commands[name].argv)
    expect(service.command).toEqual(['node', `--conditions=${BUILT_CONDITION}`, `services/${name}/dist/main.js`])
    const source = await sourceOfBuiltFile(commands[name].entry)
    expect(source, `${commands[name].entry} is no output of any tsconfig.build.json`).toBe(`services/${name}/src/main.ts`)
    expect(await exists(source!), source).toBe(true)
    // Where a build was made here (npm run build, or the production-build test), its output is there.
    if (await exists(`services/${name}/dist`)) expect(await exists(commands[name].entry), commands[name].entry).toBe(true)
  })

  it.each(processNames)('gives %s an environment its configuration accepts, with the database and Redis of the compose network', (name) => {
    const env = environmentOf(compose.services[name]!)
    const config = loadConfig(env)
    expect(new URL(config.databaseUrl).host).toBe('postgres:5432')
    expect(new URL(config.redisUrl).host).toBe('redis:6379')
    expect(config.host).toBe('0.0.0.0')
    expect(config.nodeEnv).toBe('production')
    if (name === 'gateway') {
      expect(compose.services.gateway!.ports).toEqual([`${config.port}:${config.port}`])
      expect(compose.services.gateway!.environment!.ADMIN_TOKEN).toMatch(/^\$\{ADMIN_TOKEN:\?/)
      // The floor's token is optional: unset, /floor answers 404.
      expect(compose.services.gateway!.environment!.FLOOR_TOKEN).toBe('${FLOOR_TOKEN:-}')
      expect(config.floorToken).toBeUndefined()
    } else expect(config.metricsPort, `${name} sets METRICS_PORT`).toEqual(expect.any(Number))
  })

  it('gives each worker a metrics port of its own', () => {
    const ports = processNames.filter((name) => name !== 'gateway').map((name) => compose.services[name]!.environment!.METRICS_PORT)
    expect(new Set(ports).size).toBe(ports.length)
  })

  it.each(processNames)('checks the health of %s on its own port: the gateway’s /readyz, a worker’s /healthz on METRICS_PORT', (name) => {
    const service = compose.services[name]!
    const config = loadConfig(environmentOf(service))
    const [kind, ...command] = service.healthcheck!.test
    expect(kind).toBe('CMD')
    expect(command.slice(0, 2)).toEqual(['node', '-e'])
    const expected = name === 'gateway' ? `http://127.0.0.1:${config.port}/readyz` : `http://127.0.0.1:${config.metricsPort}/healthz`
    expect(command[2]).toContain(`fetch('${expected}')`)
    expect(durationMs(service.healthcheck!.interval)).toBeGreaterThan(0)
    expect(durationMs(service.healthcheck!.start_period!)).toBeGreaterThanOrEqual(20_000)
  })

  it('health commands exit 0 on a 200 and 1 on a 503 or on no answer', async () => {
    let status = 200
    const server = createServer((request, response) => response.writeHead(request.url === '/healthz' || request.url === '/readyz' ? status : 404).end()).listen(
      0,
      '127.0.0.1',
    )
    await once(server, 'listening')
    const { port } = server.address() as { port: number }
    const run = (script: string) =>
      promisify(execFile)(process.execPath, ['-e', script.replace(/127\.0\.0\.1:\d+/, `127.0.0.1:${port}`)]).then(
        () => 0,
        (error: { code?: number }) => error.code,
      )
    try {
      for (const name of processNames) {
        const script = compose.services[name]!.healthcheck!.test[3]!
        status = 200
        expect(await run(script), name).toBe(0)
        status = 503
        expect(await run(script), name).toBe(1)
      }
    } finally {
      server.close()
    }
    expect(await run(compose.services.gateway!.healthcheck!.test[3]!), 'nothing listening').toBe(1)
  })

  it.each(processNames)('lets %s finish its work on docker compose stop: stop_grace_period beyond its drain time', (name) => {
    const service = compose.services[name]!
    // Compose's default is 10 s: every process states its own.
    expect(service.stop_grace_period, name).toEqual(expect.any(String))
    expect(durationMs(service.stop_grace_period!)).toBeGreaterThan(drainTimeMs(name, loadConfig(environmentOf(service))))
  })

  it('waits for the migrations to have ended well, and for healthy Postgres and Redis, before starting a process', () => {
    for (const name of processNames) {
      expect(compose.services[name]!.depends_on, name).toEqual({
        migrate: { condition: 'service_completed_successfully' },
        postgres: { condition: 'service_healthy' },
        redis: { condition: 'service_healthy' },
      })
    }
    expect(compose.services.postgres!.healthcheck!.test).toContain('pg_isready')
    expect(compose.services.redis!.healthcheck!.test).toEqual(['CMD', 'redis-cli', 'ping'])
  })

  it('keeps the data in named volumes: Postgres, Redis, and the artifact store the gateway and the floor share', () => {
    const mounts = (name: string) =>
      Object.fromEntries((compose.services[name]!.volumes ?? []).map((volume) => volume.split(':').slice(0, 2).reverse() as [string, string]))
    expect(mounts('postgres')).toEqual({ '/var/lib/postgresql/data': 'postgres-data' })
    expect(mounts('redis')['/data']).toBe('redis-data')
    const gateway = loadConfig(environmentOf(compose.services.gateway!))
    const floor = loadConfig(environmentOf(compose.services['production-worker']!))
    expect(mounts('gateway')[gateway.artifactsDir]).toBe('artifacts')
    expect(mounts('production-worker')[floor.artifactsDir]).toBe('artifacts')
    expect(mounts('production-worker')[floor.spoolDir]).toBe('spool')
    const used = Object.keys(compose.services).flatMap((name) => Object.values(mounts(name)).filter((source) => !source.startsWith('./')))
    expect(Object.keys(compose.volumes).sort()).toEqual([...new Set(used)].sort())
  })

  it('runs the processes on a read-only root: every directory they write is a volume', () => {
    for (const name of processNames) {
      const service = compose.services[name]!
      expect(service.read_only, name).toBe(true)
      // tini is the image's PID 1: compose's own init would only stand in front of it.
      expect(service.init, name).toBeUndefined()
      const targets = (service.volumes ?? []).map((volume) => volume.split(':')[1])
      for (const variable of ['ARTIFACTS_DIR', 'SPOOL_DIR']) {
        const dir = service.environment?.[variable]
        if (dir) expect(targets, `${name} writes ${variable}=${dir}`).toContain(dir)
      }
    }
  })
})

describe('infra/Dockerfile', () => {
  const runtime = () => stages.at(-1)!
  const stage = (name: string) => stages.find((candidate) => candidate.name === name)!
  const argDefault = async (name: string) => new RegExp(`^ARG ${name}=(\\S+)$`, 'm').exec(await readFile(join(repositoryRoot, 'infra/Dockerfile'), 'utf8'))?.[1]

  it('builds on a Node LTS line that is still supported, slim', async () => {
    const image = await argDefault('NODE_IMAGE')
    expect(image).toMatch(/^node:\d+-[a-z]+-slim$/)
    for (const { from } of stages) expect([...stages.map((candidate) => candidate.name), '${NODE_IMAGE}'], `FROM ${from}`).toContain(from)
    const major = Number(/^node:(\d+)-/.exec(image!)![1])
    expect(Object.keys(nodeLtsEnd).map(Number), `node ${major} is an LTS line`).toContain(major)
    expect(new Date(`${nodeLtsEnd[major]}T23:59:59Z`).getTime(), `node ${major} is supported until ${nodeLtsEnd[major]}`).toBeGreaterThan(Date.now())
  })

  it('runs as the unprivileged node user, tini as PID 1, the gateway by default as start:prod runs it, with a HEALTHCHECK', () => {
    const instructions = runtime().instructions
    const last = (keyword: string) => instructions.filter((instruction) => instruction.keyword === keyword).at(-1)?.args
    expect(last('USER')).toBe('node')
    // USER comes before the command runs: nothing after it switches back.
    expect(instructions.findIndex((instruction) => instruction.keyword === 'USER')).toBeLessThan(
      instructions.findIndex((instruction) => instruction.keyword === 'CMD'),
    )
    expect(JSON.parse(last('ENTRYPOINT')!)).toEqual(['/usr/bin/tini', '--'])
    expect(instructions.some((instruction) => instruction.keyword === 'RUN' && /apt-get install .*\btini\b/.test(instruction.args))).toBe(true)
    expect(JSON.parse(last('CMD')!)).toEqual(commands.gateway.argv)
    expect(last('HEALTHCHECK')).toMatch(/CMD \["node", "-e", "fetch\(process\.env\.HEALTHCHECK_URL\)/)
    expect(imageEnv).toMatchObject({ NODE_ENV: 'production', HOST: '0.0.0.0', HEALTHCHECK_URL: 'http://127.0.0.1:3000/readyz' })
  })

  it('installs production dependencies only, of the four services and the CLI that migrates, with the patches applied; the build stage’s node_modules stays behind', async () => {
    const install = stage('production-dependencies').instructions.find(
      (instruction) => instruction.keyword === 'RUN' && instruction.args.startsWith('npm ci'),
    )!.args
    expect(install).toContain('--omit=dev')
    expect(install).toContain('--omit=optional')
    const workspaces = [...install.matchAll(/--workspace=(\S+)/g)].map(([, workspace]) => workspace)
    expect(workspaces.sort()).toEqual(['packages/cli', ...processNames.map((name) => `services/${name}`)].sort())
    expect(
      stage('production-dependencies').instructions.some((instruction) => instruction.keyword === 'RUN' && instruction.args.includes('patch-package')),
    ).toBe(true)
    // The patched packages are production dependencies, so the image has them to patch.
    const lock = JSON.parse(await readFile(join(repositoryRoot, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> }
    for (const patch of await readdir(join(repositoryRoot, 'patches'))) {
      const name = patch.replace(/\+[^+]*\.patch$/, '').replace('+', '/')
      expect(lock.packages[`node_modules/${name}`]?.dev, `${name} (patched) is a production dependency`).toBeUndefined()
    }
    const copies = runtime()
      .instructions.filter((instruction) => instruction.keyword === 'COPY')
      .map((instruction) => instruction.args)
    expect(copies).toEqual(['--from=production-dependencies /app/ ./'])
  })

  it('copies every workspace’s package.json before npm ci, and takes the dist of each workspace installed and the SQL migrations into the image', async () => {
    const root = JSON.parse(await readFile(join(repositoryRoot, 'package.json'), 'utf8')) as { workspaces: string[] }
    const workspaces = (
      await Promise.all(
        root.workspaces.map(async (pattern) =>
          pattern.endsWith('/*') ? (await readdir(join(repositoryRoot, pattern.slice(0, -2)))).map((entry) => `${pattern.slice(0, -2)}/${entry}`) : [pattern],
        ),
      )
    ).flat()
    const copied = stage('manifests')
      .instructions.filter((instruction) => instruction.keyword === 'COPY')
      .map((instruction) => instruction.args)
    for (const workspace of workspaces) expect(copied, workspace).toContain(`${workspace}/package.json ${workspace}/`)
    expect(
      stage('build')
        .instructions.filter((instruction) => instruction.keyword === 'RUN')
        .map((instruction) => instruction.args),
    ).toContain('npm run build')
    const staging = stage('production-dependencies')
      .instructions.filter((instruction) => instruction.keyword === 'RUN')
      .map((instruction) => instruction.args)
      .join('\n')
    // Each workspace npm linked into node_modules/@letters gets its dist/ from the build stage.
    expect(staging).toMatch(/--mount=type=bind,from=build,source=\/app,target=\/build /)
    expect(staging).toMatch(/for link in node_modules\/@letters\/\*; do .*cp -R "\/build\/\$workspace\/dist" "\$workspace\/"/)
    // packages/db reads its migrations beside its code (src/migrate.ts: ../migrations).
    expect(await readFile(join(repositoryRoot, 'packages/db/src/migrate.ts'), 'utf8')).toContain("new URL('../migrations', import.meta.url)")
    expect(staging).toContain('cp -R /build/packages/db/migrations packages/db/')
    // The gateway serves the dashboard's build from services/dashboard/dist (src/features/dashboard/routes/static.ts).
    expect(await readFile(join(repositoryRoot, 'services/gateway/src/features/dashboard/routes/static.ts'), 'utf8')).toContain(
      "new URL('../../../../../dashboard/dist/', import.meta.url)",
    )
    expect(staging).toContain('cp -R /build/services/dashboard/dist services/dashboard/')
    // The fonts the renderer loads come from font packages it depends on at run time.
    const render = JSON.parse(await readFile(join(repositoryRoot, 'packages/render/package.json'), 'utf8')) as { dependencies: Record<string, string> }
    expect(Object.keys(render.dependencies).filter((name) => name.startsWith('@fontsource/'))).toHaveLength(5)
  })

  it('leaves local installs and builds out of the build context', async () => {
    const ignored = (await readFile(join(repositoryRoot, '.dockerignore'), 'utf8')).split('\n')
    expect(ignored).toEqual(expect.arrayContaining(['.git', '**/node_modules', '**/dist']))
  })
})
