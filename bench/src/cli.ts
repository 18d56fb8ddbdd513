import { spawnSync } from 'node:child_process'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { median } from './report.js'

const root = fileURLToPath(new URL('../..', import.meta.url))

/** Times each command line of the CLI rows is started, in turns. */
export const CLI_RUNS = 20

/** The command lines the CLI rows time, from the repository's root; `node` is this Node. */
export const cliCommands = {
  /** Node's own start, the baseline. */
  node: [process.execPath, '-e', ''],
  /** The compiled CLI's help, as scripts/admin.mjs runs it once its build is current. */
  compiled: [process.execPath, '--conditions=letters-dist', 'packages/cli/dist/main.js', '--help'],
  /** A group's help: its commands load, and with them the contracts (typebox) they print. */
  group: [process.execPath, '--conditions=letters-dist', 'packages/cli/dist/main.js', 'letters', '--help'],
  /** What an operator types: npm, scripts/admin.mjs's check of the build, then the compiled CLI. */
  npm: ['npm', 'run', '-s', 'admin', '--', '--help'],
  /** The CLI from its sources through tsx, as `npm run admin` ran it before it ran compiled. */
  tsx: [process.execPath, 'node_modules/tsx/dist/cli.mjs', 'packages/cli/src/main.ts', '--help'],
} satisfies Record<string, string[]>
export type CliCommand = keyof typeof cliCommands

export interface WallTimes {
  medianMs: number
  p90Ms: number
  runs: number
}

/** Milliseconds from starting `argv` to its exit; a run that fails stops the bench. */
function wallMs(argv: string[]): number {
  const started = performance.now()
  const done = spawnSync(argv[0]!, argv.slice(1), { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] })
  const elapsed = performance.now() - started
  if (done.status !== 0) throw new Error(`${argv.join(' ')} exited with ${done.status ?? done.signal}: ${done.stderr.toString()}`)
  return elapsed
}

/** The 90th percentile, nearest rank. */
const p90 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.ceil(values.length * 0.9) - 1]!

/**
 * Wall times of the CLI's `--help` beside node's own start: each command line started `runs`
 * times, one after the other in turns, so that a burst of other work on a shared machine weighs
 * on all of them alike. One run of `npm run admin` first builds the CLI if it is missing or stale,
 * and warms the disk cache for all.
 */
export function measureCliStart(runs = CLI_RUNS): Record<CliCommand, WallTimes> {
  const names = Object.keys(cliCommands) as CliCommand[]
  // npm first: scripts/admin.mjs builds the CLI the compiled row starts.
  for (const name of ['npm', ...names.filter((name) => name !== 'npm')] as CliCommand[]) wallMs(cliCommands[name])
  const times = new Map<CliCommand, number[]>(names.map((name) => [name, []]))
  for (let run = 0; run < runs; run++) for (const name of names) times.get(name)!.push(wallMs(cliCommands[name]))
  return Object.fromEntries(names.map((name) => [name, { medianMs: median(times.get(name)!), p90Ms: p90(times.get(name)!), runs }])) as Record<
    CliCommand,
    WallTimes
  >
}
