import { readFile, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { repositoryRoot } from '../support/processes.js'
import { BUILT_CONDITION, rootScripts, sourceOfBuiltFile } from '../support/production-build.js'

type Exports = Record<string, string | Record<string, string>>
interface Manifest {
  name: string
  exports?: Exports
  dependencies?: Record<string, string>
}
interface BuildConfig {
  compilerOptions: Record<string, unknown>
  include: string[]
  references: Array<{ path: string }>
}

const readJson = async <T>(path: string) => JSON.parse(await readFile(join(repositoryRoot, path), 'utf8')) as T

/** The web app Vite builds, not tsc: it runs in a browser, and Node never loads it. */
const VITE_WORKSPACE = 'services/dashboard'

/** The workspaces npm run build compiles with tsc: every package and service but the dashboard (test/ and bench/ run from source). */
async function builtWorkspaces(): Promise<string[]> {
  const found = await Promise.all(
    ['packages', 'services'].map(async (folder) => (await readdir(join(repositoryRoot, folder))).map((name) => `${folder}/${name}`)),
  )
  return found
    .flat()
    .filter((workspace) => workspace !== VITE_WORKSPACE)
    .sort()
}

describe('npm run build', () => {
  it('is tsc -b over the root tsconfig.build.json, which references every package and service, then the dashboard’s Vite build', async () => {
    expect((await rootScripts()).build).toBe('tsc -b tsconfig.build.json && npm run -s build -w @letters/dashboard')
    expect(JSON.parse(await readFile(join(repositoryRoot, VITE_WORKSPACE, 'package.json'), 'utf8')).scripts.build).toBe('vite build')
    const root = await readJson<{ files: string[]; references: Array<{ path: string }> }>('tsconfig.build.json')
    expect(root.files).toEqual([])
    expect(root.references.map((reference) => reference.path).sort()).toEqual((await builtWorkspaces()).map((workspace) => `${workspace}/tsconfig.build.json`))
  })

  it('compiles each workspace’s src/ into its dist/, referencing exactly the workspace packages it depends on', async () => {
    const workspaces = await builtWorkspaces()
    const byName = Object.fromEntries(
      await Promise.all(workspaces.map(async (workspace) => [(await readJson<Manifest>(`${workspace}/package.json`)).name, workspace] as const)),
    )
    for (const workspace of workspaces) {
      const config = await readJson<BuildConfig>(`${workspace}/tsconfig.build.json`)
      expect(config.compilerOptions, workspace).toMatchObject({
        composite: true,
        noEmit: false,
        rootDir: 'src',
        outDir: 'dist',
        tsBuildInfoFile: 'dist/tsconfig.build.tsbuildinfo',
      })
      expect(config.include, workspace).toEqual(['src'])
      const manifest = await readJson<Manifest>(`${workspace}/package.json`)
      const dependsOn = Object.keys(manifest.dependencies ?? {}).filter((name) => name.startsWith('@letters/'))
      expect(config.references.map((reference) => reference.path).sort(), workspace).toEqual(
        dependsOn.map((name) => `../../${byName[name]}/tsconfig.build.json`).sort(),
      )
    }
  })

  it(`points every export of a TypeScript source at its compiled file under the ${BUILT_CONDITION} condition, the source staying the default`, async () => {
    for (const workspace of await builtWorkspaces()) {
      const manifest = await readJson<Manifest>(`${workspace}/package.json`)
      for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
        const source = typeof target === 'string' ? target : target.default
        // Development-only entries (the renderer's benchmark) live outside src/ and are not built.
        if (!source?.startsWith('./src/')) continue
        expect(target, `${workspace} ${subpath}`).toEqual({ [BUILT_CONDITION]: expect.stringMatching(/^\.\/dist\/.+\.js$/), default: source })
        const built = (target as Record<string, string>)[BUILT_CONDITION]!
        expect(await sourceOfBuiltFile(`${workspace}/${built.slice(2)}`), `${workspace} ${subpath}`).toBe(`${workspace}/${source.slice(2)}`)
      }
    }
  })
})
