import { execFile } from 'node:child_process'
import { mkdtemp, readdir, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect } from 'vitest'
import { it as base } from '@letters/test/support/fixtures'
import { repositoryRoot } from '@letters/test/support/processes'
import * as fromPackageName from '@letters/sdk'
import * as fromSources from '../src/index.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
/** npm pack (which builds the SDK first) and npm install, on a slow machine, with a cold npm cache. */
const INSTALL_TIMEOUT_MS = 240_000

/** The gateway listening on 127.0.0.1, as a user's process reaches it. */
const it = base.extend('baseUrl', { scope: 'file' }, ({ gateway }) => gateway.listen({ host: '127.0.0.1', port: 0 }))

interface Manifest {
  name: string
  private?: boolean
  types?: string
  engines?: { node?: string }
  exports: Record<string, Record<string, string> | string>
  dependencies?: Record<string, string>
}

/**
 * The environment of the npm and node processes a user would run: this run's npm settings (the
 * cache, the certificates) kept, but nothing that ties them to the repository (the npm script
 * that started the tests, its package, tsx's loader in NODE_OPTIONS).
 */
function userEnvironment(): NodeJS.ProcessEnv {
  const tied = /^(npm_package_|npm_lifecycle_|npm_config_local_prefix$|npm_config_workspaces?$|INIT_CWD$|NODE_OPTIONS$)/i
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !tied.test(name)))
}

const run = (command: string, args: string[], cwd: string, timeout = INSTALL_TIMEOUT_MS) =>
  promisify(execFile)(command, args, { cwd, env: userEnvironment(), timeout, maxBuffer: 16 * 1024 * 1024 })

/** Every file under `folder`, as paths relative to it. */
async function filesUnder(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true })
  return entries.filter((entry) => entry.isFile()).map((entry) => relative(folder, join(entry.parentPath, entry.name)))
}

/**
 * What a user writes: plain JavaScript, run by plain node, that reads the company's data, sends
 * a letter from its first design and sender, reads the letter back, and is refused with a wrong
 * key. It prints what the API answered, as JSON.
 */
const USER_SCRIPT = `import { createClient, LettersApiError } from '@letters/sdk'

const [baseUrl, apiKey] = process.argv.slice(2)
const client = createClient({ apiKey, baseUrl })
const company = await client.GET('/company-data')
const { cardDesigns, envelopeDesigns, senders } = company.data.data
const created = await client.POST('/single', {
  body: {
    cardDesignId: cardDesigns[0].id,
    envelopeDesignId: envelopeDesigns[0].id,
    senderId: senders[0].id,
    message: 'Querida Lucía, gracias por tu compra.',
    name: 'Lucía',
    surname: 'García',
    address: 'Calle Mayor 1',
    zip: '28013',
    city: 'Madrid',
    province: 'Madrid',
    country: 'ES',
  },
})
const card = await client.GET('/cards/{cardId}', { params: { path: { cardId: created.data.cardId } } })
const refused = await createClient({ apiKey: 'clave-falsa', baseUrl }).GET('/company-data').catch((error) => error)
process.stdout.write(JSON.stringify({
  resolved: import.meta.resolve('@letters/sdk'),
  company: { status: company.response.status, data: company.data.data },
  created: { status: created.response.status, data: created.data, idempotencyKey: created.idempotencyKey },
  card: { status: card.response.status, data: card.data },
  refused: { isLettersApiError: refused instanceof LettersApiError, status: refused.status, error: refused.error },
}))
`

/**
 * A user's TypeScript, checked as a browser app's would be: the DOM's globals, not Node's. The
 * route that does not exist must be refused, so the declarations are really read (an `any`
 * would accept it).
 */
const USER_TYPESCRIPT = `import { createClient, verifyWebhook, type LettersClient } from '@letters/sdk'

const client: LettersClient = createClient({ baseUrl: 'https://cartas.example', csrfToken: () => undefined })
const { data } = await client.GET('/company-data')
export const names: string[] = data!.data.cardDesigns.map((design) => design.name)
// @ts-expect-error: no such route
await client.GET('/no-such-route')
export const event = verifyWebhook<{ type: string }>('whsec_c2VjcmV0', new Headers(), new Uint8Array())
`

const USER_TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2024', 'DOM'],
    types: [],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
  },
  files: ['check.ts'],
}

describe('inside the repository', () => {
  it('@letters/sdk is its TypeScript sources, so that tests and tsx need no build', () => {
    expect(fromPackageName.createClient).toBe(fromSources.createClient)
  })
})

describe('the SDK packed by npm pack and installed from its tarball, outside the repository', () => {
  let packed: string
  let user: string
  let installed: string
  let tarball: string

  beforeAll(async () => {
    packed = await mkdtemp(join(tmpdir(), 'letters-sdk-pack-'))
    user = await realpath(await mkdtemp(join(tmpdir(), 'letters-sdk-user-')))
    installed = join(user, 'node_modules', '@letters', 'sdk')
    // prepack builds dist/ first, as it would before a publish.
    await run('npm', ['pack', '-w', '@letters/sdk', '--pack-destination', packed], repositoryRoot)
    const tarballs = (await readdir(packed)).filter((name) => name.endsWith('.tgz'))
    expect(tarballs).toEqual([expect.stringMatching(/^letters-sdk-\d+\.\d+\.\d+\.tgz$/)])
    tarball = join(packed, tarballs[0]!)
    await writeFile(join(user, 'package.json'), JSON.stringify({ name: 'letters-sdk-user', private: true, type: 'module' }))
    await run('npm', ['install', tarball, '--no-audit', '--no-fund', '--prefer-offline'], user)
  }, INSTALL_TIMEOUT_MS)

  afterAll(async () => {
    await rm(packed, { recursive: true, force: true })
    await rm(user, { recursive: true, force: true })
  })

  it('holds compiled JavaScript and its type declarations, and no TypeScript source', async () => {
    const files = await filesUnder(installed)
    expect(files).toContain('package.json')
    expect(files).toContain('README.md')
    expect(files).toContain('dist/index.js')
    expect(files).toContain('dist/index.d.ts')
    expect(files.filter((file) => file.endsWith('.d.ts')).length).toBeGreaterThanOrEqual(3)
    expect(files.filter((file) => file.startsWith('src/'))).toEqual([])
    expect(files.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))).toEqual([])
    expect(files.filter((file) => file.endsWith('.tsbuildinfo'))).toEqual([])
  })

  it('exports compiled JavaScript by default, with its declarations, to node >= 20.19, and is no private package', async () => {
    const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as Manifest
    expect(manifest.private).toBeUndefined()
    expect(manifest.engines?.node).toBe('>=20.19')
    const root = manifest.exports['.'] as Record<string, string>
    expect(root.default).toMatch(/^\.\/dist\/.+\.js$/)
    expect(root.types).toMatch(/^\.\/dist\/.+\.d\.ts$/)
    expect(manifest.types).toBe(root.types)
    for (const target of [root.default!, root.types!]) expect((await stat(join(installed, target))).isFile(), target).toBe(true)
    expect(Object.keys(manifest.dependencies ?? {}).sort()).toEqual(['openapi-fetch', 'standardwebhooks'])
  })

  it('imports no workspace package, and brings none into the install', async () => {
    for (const file of await filesUnder(installed)) {
      if (!/\.(js|d\.ts)$/.test(file)) continue
      expect(await readFile(join(installed, file), 'utf8'), file).not.toMatch(/(from\s+|import\()\s*['"]@letters\//)
    }
    expect(await readdir(join(user, 'node_modules', '@letters'))).toEqual(['sdk'])
    for (const dependency of ['openapi-fetch', 'standardwebhooks']) expect((await stat(join(user, 'node_modules', dependency))).isDirectory()).toBe(true)
  })

  it(
    'run by plain node against a running gateway, reads the company data, sends a letter and reads it back',
    { timeout: 60_000 },
    async ({ baseUrl, account, client }) => {
      await writeFile(join(user, 'send-card.mjs'), USER_SCRIPT)
      const { stdout } = await run(process.execPath, ['send-card.mjs', baseUrl, account.apiKey], user, 60_000)
      const answered = JSON.parse(stdout) as {
        resolved: string
        company: { status: number; data: { cardDesigns: Array<{ id: string }>; envelopeDesigns: Array<{ id: string }>; senders: Array<{ id: string }> } }
        created: { status: number; data: { success: boolean; cardId: string }; idempotencyKey: string }
        card: { status: number; data: { id: string; status: string; recipient: { name: string; city: string } } }
        refused: { isLettersApiError: boolean; status: number; error: string }
      }
      expect(answered.resolved).toBe(pathToFileURL(join(installed, 'dist', 'index.js')).href)
      expect(answered.company.status).toBe(200)
      expect(answered.company.data.cardDesigns.map((design) => design.id)).toContain(account.cardDesignId)
      expect(answered.company.data.senders.map((sender) => sender.id)).toContain(account.senderId)
      expect(answered.created.status).toBe(200)
      expect(answered.created.data).toEqual({ success: true, cardId: expect.stringMatching(UUID) })
      expect(answered.created.idempotencyKey).toMatch(UUID)
      const cardId = answered.created.data.cardId
      expect(answered.card.status).toBe(200)
      expect(answered.card.data).toMatchObject({ id: cardId, status: expect.any(String), recipient: { name: 'Lucía', city: 'Madrid' } })
      expect(answered.refused).toEqual({ isLettersApiError: true, status: 401, error: 'Unauthorized' })
      // The letter is the account's, as the API itself reads it.
      const stored = await client.get(`/cards/${cardId}`)
      expect(stored.statusCode, stored.body).toBe(200)
      expect(stored.json()).toMatchObject({ id: cardId, recipient: { name: 'Lucía', surname: 'García' } })
    },
  )

  it("type-checks a browser app's code against its declarations, a wrong route refused", { timeout: 120_000 }, async () => {
    await writeFile(join(user, 'check.ts'), USER_TYPESCRIPT)
    await writeFile(join(user, 'tsconfig.json'), JSON.stringify(USER_TSCONFIG))
    const tsc = join(repositoryRoot, 'node_modules', 'typescript', 'bin', 'tsc')
    const errors = await run(process.execPath, [tsc, '-p', user], user, 120_000).then(
      ({ stdout }) => stdout,
      (error: { stdout?: string; stderr?: string; message: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}` || error.message,
    )
    expect(errors).toBe('')
  })
})
