import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { repositoryRoot } from '../support/processes.js'

const run = promisify(execFile)
const config = join(repositoryRoot, '.dependency-cruiser.mjs')
const depcruise = join(repositoryRoot, 'node_modules', '.bin', 'depcruise')

/** A file of the fixture tree and the modules it imports (paths relative to the tree's root). */
type Tree = Record<string, string[]>

const gateway = 'services/gateway/src'

/**
 * A tree laid out as ours is, importing only as the rules allow: the composition root imports the
 * shell and the list of features; a feature imports another's index.ts and what the gateway shares
 * (common/); the shell imports common/; a package imports another package.
 */
const allowed: Tree = {
  [`${gateway}/server.ts`]: [`${gateway}/app.ts`, `${gateway}/features/index.ts`],
  [`${gateway}/app.ts`]: [`${gateway}/plugins/app/auth.ts`, `${gateway}/common/feature.ts`],
  [`${gateway}/plugins/app/auth.ts`]: [`${gateway}/common/errors.ts`, 'packages/db/src/index.ts'],
  [`${gateway}/common/feature.ts`]: [],
  [`${gateway}/common/errors.ts`]: [],
  [`${gateway}/features/index.ts`]: [`${gateway}/features/letters/feature.ts`, `${gateway}/features/designs/feature.ts`],
  [`${gateway}/features/letters/feature.ts`]: [`${gateway}/features/letters/routes/create.ts`, `${gateway}/common/feature.ts`],
  [`${gateway}/features/letters/routes/create.ts`]: [`${gateway}/features/letters/create-letter.ts`],
  [`${gateway}/features/letters/create-letter.ts`]: [`${gateway}/features/designs/index.ts`, `${gateway}/common/errors.ts`, 'packages/db/src/index.ts'],
  [`${gateway}/features/designs/feature.ts`]: [`${gateway}/common/feature.ts`],
  [`${gateway}/features/designs/index.ts`]: [`${gateway}/features/designs/fonts.ts`],
  [`${gateway}/features/designs/fonts.ts`]: [],
  'packages/db/src/index.ts': ['packages/contracts/src/index.ts'],
  'packages/contracts/src/index.ts': [],
}

/**
 * The gateway's package as a workspace is: named in node_modules, its files reached through its
 * `exports`. `./server` is what it offers; `./fonts` opens a feature's internals by name.
 */
const gatewayPackage = { name: '@letters/gateway', type: 'module', exports: { './server': './src/server.ts', './fonts': './src/features/designs/fonts.ts' } }

/** The import of `to` as our sources write it: a package by its name, a file of ours relatively, naming the compiled file. */
function importOf(from: string, to: string): string {
  if (to.startsWith('@')) return to
  const up = dirname(from)
    .split('/')
    .map(() => '..')
  const path = join(...up, to).replace(/\.ts$/, '.js')
  return path.startsWith('.') ? path : `./${path}`
}

async function cruise(tree: Tree): Promise<string[]> {
  const root = await mkdtemp(join(tmpdir(), 'letters-architecture-'))
  try {
    await writeFile(join(root, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', strict: true } }))
    await mkdir(join(root, 'services/gateway'), { recursive: true })
    await writeFile(join(root, 'services/gateway/package.json'), JSON.stringify(gatewayPackage))
    await mkdir(join(root, 'node_modules/@letters'), { recursive: true })
    await symlink('../../services/gateway', join(root, 'node_modules/@letters/gateway'))
    for (const [file, imports] of Object.entries(tree)) {
      await mkdir(join(root, dirname(file)), { recursive: true })
      const lines = imports.map((to, index) => `import * as m${index} from '${importOf(file, to)}'\nexport const use${index} = m${index}`)
      await writeFile(join(root, file), `${lines.join('\n')}\nexport const here = '${file}'\n`)
    }
    // Exit status 0 or, with violations, their count: the report says which.
    const { stdout } = await run(depcruise, ['packages', 'services', '--config', config, '--output-type', 'json'], { cwd: root }).catch(
      (error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }),
    )
    const report = JSON.parse(stdout) as { summary: { violations: Array<{ rule: { name: string }; from: string; to: string }>; totalCruised: number } }
    expect(report.summary.totalCruised).toBe(Object.keys(tree).length)
    return [...new Set(report.summary.violations.map((violation) => violation.rule.name))]
  } finally {
    await rm(root, { recursive: true, force: true })
  }
}

/** `allowed` with one more import, and the two files when the tree had none there. */
const withImport = (from: string, to: string): Tree => ({ ...(to.startsWith('@') ? {} : { [to]: [] }), ...allowed, [from]: [...(allowed[from] ?? []), to] })

describe('the architecture rules of npm run lint', () => {
  it('pass a tree that imports only as they allow', async () => {
    expect(await cruise(allowed)).toEqual([])
  }, 60_000)

  it.each([
    ['no-cycle', 'a package importing one that imports it', withImport('packages/contracts/src/index.ts', 'packages/db/src/index.ts')],
    ['features-not-into-plugins', 'a feature importing a plugin', withImport(`${gateway}/features/letters/create-letter.ts`, `${gateway}/plugins/app/auth.ts`)],
    ['shell-knows-no-feature', 'a plugin importing a feature', withImport(`${gateway}/plugins/app/auth.ts`, `${gateway}/features/designs/index.ts`)],
    ['shell-knows-no-feature', 'common/ importing a feature', withImport(`${gateway}/common/feature.ts`, `${gateway}/features/letters/create-letter.ts`)],
    [
      'features-not-into-the-list',
      'a feature importing the list of features',
      withImport(`${gateway}/features/designs/previews.ts`, `${gateway}/features/index.ts`),
    ],
    ['common-below-the-shell', 'common/ importing a plugin', withImport(`${gateway}/common/feature.ts`, `${gateway}/plugins/app/auth.ts`)],
    ['packages-not-into-services', "a package importing a service's file", withImport('packages/db/src/index.ts', `${gateway}/common/errors.ts`)],
    ['packages-not-into-services', 'a package importing a service by its name', withImport('packages/cli/src/main.ts', '@letters/gateway/server')],
    [
      'no-reaching-into-another-feature',
      "a feature importing another's module",
      withImport(`${gateway}/features/letters/create-letter.ts`, `${gateway}/features/designs/fonts.ts`),
    ],
    [
      'no-reaching-into-another-feature',
      "a feature importing another's module, the other way",
      withImport(`${gateway}/features/designs/fonts.ts`, `${gateway}/features/letters/cards.ts`),
    ],
    [
      'no-reaching-into-another-feature',
      "a feature importing another's module through the package's exports",
      withImport(`${gateway}/features/letters/create-letter.ts`, '@letters/gateway/fonts'),
    ],
  ])(
    '%s fails the build on a deliberate violation: %s',
    async (rule, _violation, tree) => {
      expect(await cruise(tree)).toEqual([rule])
    },
    60_000,
  )
})
