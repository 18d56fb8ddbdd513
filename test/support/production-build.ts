import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { promisify } from 'node:util'
import { processNames, type ProcessName } from '@letters/config'
import { BUILT_CONDITION, repositoryRoot } from './processes.js'

export { BUILT_CONDITION } from './processes.js'

/** A command as `npm run start:prod` runs it: `node`, node's own arguments, then the entry. */
export interface ProductionCommand {
  argv: string[]
  nodeArgs: string[]
  /** From the repository root: `services/<name>/dist/main.js`. */
  entry: string
}

/** The root package.json's scripts. */
export async function rootScripts(): Promise<Record<string, string>> {
  return (JSON.parse(await readFile(join(repositoryRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts
}

/** The image's migration step, as compose and Kubernetes run it: the operator CLI's `migrate`, compiled. */
export const MIGRATE_COMMAND = ['node', `--conditions=${BUILT_CONDITION}`, 'packages/cli/dist/main.js', 'migrate']

/** The supervisor `npm start` and `npm run start:prod` run the four processes under. */
export const SERVICES_SCRIPT = 'scripts/run-services.mjs'

/**
 * What `npm run start:prod` starts, per process, as its supervisor prints it (`--print`).
 * Compose, Kubernetes and the production-build test run exactly these.
 */
export async function productionCommands(): Promise<Record<ProcessName, ProductionCommand>> {
  const script = (await rootScripts())['start:prod']
  if (script !== `exec node ${SERVICES_SCRIPT}`) throw new Error(`start:prod is '${script}', not the supervisor ${SERVICES_SCRIPT}`)
  const { stdout } = await promisify(execFile)(process.execPath, [SERVICES_SCRIPT, '--print'], { cwd: repositoryRoot })
  const commands = Object.values(JSON.parse(stdout) as Record<string, string[]>)
  const byProcess: Partial<Record<ProcessName, ProductionCommand>> = {}
  for (const argv of commands) {
    const entry = argv.at(-1)!
    const name = /^services\/([a-z-]+)\/dist\/main\.js$/.exec(entry)?.[1] as ProcessName | undefined
    if (!name || !processNames.includes(name)) throw new Error(`start:prod runs ${argv.join(' ')}, which is no service's built entry`)
    byProcess[name] = { argv, nodeArgs: argv.slice(1, -1), entry }
  }
  const missing = processNames.filter((name) => !byProcess[name])
  if (missing.length) throw new Error(`start:prod does not start ${missing.join(', ')}`)
  return byProcess as Record<ProcessName, ProductionCommand>
}

/**
 * The TypeScript file `npm run build` compiles into `builtFile` (a path from the repository
 * root), read from its workspace's tsconfig.build.json (rootDir → outDir); undefined when no
 * build config puts it there.
 */
export async function sourceOfBuiltFile(builtFile: string): Promise<string | undefined> {
  const match = /^((?:packages|services)\/[^/]+)\/(.+)\.js$/.exec(builtFile)
  if (!match) return undefined
  const [, workspace, rest] = match as unknown as [string, string, string]
  const config = JSON.parse(await readFile(join(repositoryRoot, workspace, 'tsconfig.build.json'), 'utf8').catch(() => 'null')) as {
    compilerOptions?: { rootDir?: string; outDir?: string }
  } | null
  const { rootDir, outDir } = config?.compilerOptions ?? {}
  if (!rootDir || !outDir || !rest.startsWith(`${outDir}/`)) return undefined
  return relative(repositoryRoot, join(repositoryRoot, workspace, rootDir, `${rest.slice(outDir.length + 1)}.ts`))
}

/** `npm run build`, as CI and the Dockerfile run it; rejects with tsc's output when it fails. */
export async function runBuild(timeoutMs = 240_000): Promise<void> {
  try {
    await promisify(execFile)('npm', ['run', 'build'], { cwd: repositoryRoot, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 })
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string }
    throw new Error(`npm run build failed:\n${stdout}\n${stderr}`, { cause: error })
  }
}
