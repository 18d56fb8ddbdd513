// `npm run admin -- <command>` and `npm run migrate`: the operator CLI compiled (packages/cli/dist),
// under plain node with the `letters-dist` condition, as the services run in production. Through
// tsx it took five times as long to start, most of it compiling TypeScript that had not changed.
//
// The compiled CLI runs when its build is current: the build info of the CLI's project and of
// each project it references (tsconfig.build.json's references, the build's one graph) is newer
// than every file of their sources. Otherwise (a fresh clone has no dist/, or the code changed
// since the last build) those projects are built first with `tsc -b`, which says what it does on
// stderr: stdout stays the command's alone, for `--json`. Plain JavaScript, so that it needs
// nothing but node.
import { spawnSync } from 'node:child_process'
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const BUILT_CONDITION = 'letters-dist'
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const cliProject = join(root, 'packages/cli/tsconfig.build.json')

// Started as `node scripts/admin.mjs`: the workspace packages would resolve to their TypeScript.
if (!import.meta.resolve('@letters/contracts').includes('/dist/')) {
  const child = spawnSync(
    process.execPath,
    [`--conditions=${BUILT_CONDITION}`, ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    {
      stdio: 'inherit',
    },
  )
  process.exit(child.status ?? 1)
}

/** A project's tsconfig and those of the projects it references, each once. */
function projectsOf(tsconfig, found = new Map()) {
  if (found.has(tsconfig)) return found
  const config = JSON.parse(readFileSync(tsconfig, 'utf8'))
  found.set(tsconfig, config)
  for (const reference of config.references ?? []) projectsOf(resolve(dirname(tsconfig), reference.path), found)
  return found
}

/** The latest change under `path`: its files' and its folders' (a folder changes when a file is added or removed). */
function newestChange(path) {
  const stats = statSync(path, { throwIfNoEntry: false })
  if (!stats) return 0
  if (!stats.isDirectory()) return stats.mtimeMs
  let newest = stats.mtimeMs
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestChange(join(path, entry)))
  return newest
}

/** The projects whose build is missing or older than their sources, their tsconfig files (and the one they extend) included. */
function staleProjects() {
  const stale = []
  for (const [tsconfig, config] of projectsOf(cliProject)) {
    const dir = dirname(tsconfig)
    const sources = [tsconfig, ...(config.extends ? [resolve(dir, config.extends)] : []), ...(config.include ?? []).map((path) => resolve(dir, path))]
    const builtAt = statSync(resolve(dir, config.compilerOptions?.tsBuildInfoFile ?? 'tsconfig.tsbuildinfo'), { throwIfNoEntry: false })?.mtimeMs ?? 0
    if (sources.some((source) => newestChange(source) > builtAt)) stale.push(relative(root, dir))
  }
  return stale
}

const stale = staleProjects()
if (stale.length > 0) {
  process.stderr.write(`La CLI compilada falta o es anterior a su código (${stale.join(', ')}): compilándola con tsc -b ${relative(root, cliProject)}…\n`)
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
  // tsc writes its errors on stdout: they go to stderr with the rest of what is not the command's output.
  const build = spawnSync(process.execPath, [tsc, '-b', cliProject], { cwd: root, stdio: ['ignore', process.stderr, process.stderr] })
  if (build.status !== 0) {
    process.stderr.write(`No se pudo compilar la CLI (tsc terminó con ${build.status ?? build.signal}): corrige los errores de arriba.\n`)
    process.exit(1)
  }
}

await import('../packages/cli/dist/main.js')
