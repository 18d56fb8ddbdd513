import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'

/** How a module of ours is started in a worker thread or a child process: its file, the flags it loads with, its environment. */
export interface ModuleLaunch {
  url: URL
  execArgv: string[]
  env: NodeJS.ProcessEnv
}

/**
 * How to start `name` (a module beside `from`, the caller's `import.meta.url`) in a thread or a
 * child process, from whatever the caller runs from:
 * - compiled: the .js beside it, as it is;
 * - the TypeScript sources with RUN_FROM_BUILD=1 (the test run brought the build up to date and
 *   says so): the build's .js, instead of compiling the sources again in every thread or child
 *   (seconds of CPU each, which made a loaded machine's first proofs miss their deadline);
 * - the TypeScript sources otherwise (tests, `npm start`): the .ts, with tsx's loader added where
 *   the parent runs without it (vitest), and tsx's disk cache off. tsx writes each cache entry
 *   asynchronously, and a thread or child stopped mid-write leaves that file open for the rest of
 *   the process (a test worker starting a gateway per file ran out of descriptors), or a half
 *   written entry for the next process to load.
 * `execArgv` are the flags to start from (the parent's by default), `env` the environment.
 */
export function moduleLaunch(
  from: string,
  name: string,
  { execArgv = process.execArgv, env = process.env }: { execArgv?: readonly string[]; env?: NodeJS.ProcessEnv } = {},
): ModuleLaunch {
  const adding = (flags: readonly string[]) => (flags.every((flag) => execArgv.includes(flag)) ? [...execArgv] : [...execArgv, ...flags])
  const fromSource = from.endsWith('.ts')
  if (fromSource && process.env.RUN_FROM_BUILD === '1')
    return { url: new URL(`../dist/${name}.js`, from), execArgv: adding(['--conditions=letters-dist']), env }
  const url = new URL(`./${name}.${fromSource ? 'ts' : 'js'}`, from)
  if (!fromSource) return { url, execArgv: [...execArgv], env }
  const tsxLoader = pathToFileURL(createRequire(from).resolve('tsx')).href
  return { url, execArgv: adding(['--import', tsxLoader]), env: { ...env, TSX_DISABLE_CACHE: '1' } }
}

/**
 * The environment of a child that reads a client's file: where to find programs and temporary
 * files, and nothing else (never the database's address or a token).
 */
export function untrustedChildEnvironment(): NodeJS.ProcessEnv {
  const { PATH, TMPDIR, LANG } = process.env
  return Object.fromEntries(Object.entries({ PATH, TMPDIR, LANG }).filter(([, value]) => value !== undefined))
}
