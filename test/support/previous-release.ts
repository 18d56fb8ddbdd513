import { execFile } from 'node:child_process'
import { lstat, mkdir, mkdtemp, readFile, readdir, rm, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { repositoryRoot } from './processes.js'

/**
 * The last commit of the release before this one: a rolling upgrade runs its processes beside
 * this code's, on this code's schema. Move it on when a release ships.
 */
export const PREVIOUS_RELEASE = 'f0865f021c46cd02ba8db8c79f2ffdb512c9617b'

const git = (args: string[]) => promisify(execFile)('git', args, { cwd: repositoryRoot })

interface LockFile {
  packages: Record<string, { version?: string }>
}

/** The packages both releases install at different versions: the other one would not run on this checkout's. */
function versionsApart(previous: LockFile, current: LockFile): string[] {
  return Object.entries(previous.packages)
    .filter(([path]) => path.startsWith('node_modules/') && !path.startsWith('node_modules/@letters/'))
    .filter(([path, entry]) => current.packages[path] && current.packages[path].version !== entry.version)
    .map(([path, entry]) => `${path.slice('node_modules/'.length)} ${entry.version} (here ${current.packages[path]!.version})`)
}

/** Workspace folder → package name, as npm links them under node_modules/@letters. */
async function workspacesOf(root: string): Promise<Array<{ folder: string; name: string }>> {
  const found = []
  for (const parent of ['packages', 'services']) {
    for (const entry of await readdir(join(root, parent))) {
      const manifest = await readFile(join(root, parent, entry, 'package.json'), 'utf8').catch(() => undefined)
      if (manifest) found.push({ folder: join(root, parent, entry), name: (JSON.parse(manifest) as { name: string }).name })
    }
  }
  for (const folder of ['test', 'bench']) {
    const manifest = await readFile(join(root, folder, 'package.json'), 'utf8').catch(() => undefined)
    if (manifest) found.push({ folder: join(root, folder), name: (JSON.parse(manifest) as { name: string }).name })
  }
  return found
}

export interface ReleaseCheckout {
  dir: string
  /** The commit checked out, in full. */
  commit: string
  remove: () => Promise<void>
}

export interface CheckoutOptions {
  /**
   * When the two lockfiles install a package at different versions: install the release's own
   * packages in its worktree (`npm ci`, from npm's cache where it can) instead of refusing.
   */
  installWhenApart?: boolean
}

/**
 * A release's source (`ref`: a commit, tag or branch) in a worktree of its own. It runs with this
 * checkout's installed packages where both lockfiles agree: every package but our workspaces is
 * linked to this checkout's node_modules, and our workspaces to the worktree's own folders. Where
 * they install a package at different versions, the release needs an install of its own: made
 * with `installWhenApart`, otherwise refused, saying which.
 */
export async function checkoutRelease(ref: string, options: CheckoutOptions = {}): Promise<ReleaseCheckout> {
  const resolve = (name: string) =>
    git(['rev-parse', '--verify', '--quiet', `${name}^{commit}`]).then(
      ({ stdout }) => stdout.trim(),
      () => undefined,
    )
  // A clone that lacks it (a shallow CI checkout, a ref only the origin has) fetches it, keeping
  // a full clone full.
  let commit = await resolve(ref)
  if (!commit) {
    const shallow = (await git(['rev-parse', '--is-shallow-repository'])).stdout.trim() === 'true'
    const fetched = await git(['fetch', '--no-tags', ...(shallow ? ['--depth=1'] : []), 'origin', ref]).then(
      () => true,
      () => false,
    )
    if (fetched) commit = await resolve('FETCH_HEAD')
  }
  if (!commit) throw new Error(`${ref} is not in this clone's history and its origin did not give it: fetch it first`)
  const dir = await mkdtemp(join(tmpdir(), 'letters-release-'))
  await git(['worktree', 'add', '--detach', '--force', dir, commit])
  const remove = async () => {
    await git(['worktree', 'remove', '--force', dir]).catch(() => undefined)
    await rm(dir, { recursive: true, force: true })
  }
  try {
    const [releaseLock, currentLock] = await Promise.all(
      [dir, repositoryRoot].map(async (root) => JSON.parse(await readFile(join(root, 'package-lock.json'), 'utf8')) as LockFile),
    )
    const apart = versionsApart(releaseLock!, currentLock!)
    // The same versions patched otherwise (patches/, applied by postinstall) are apart too.
    const patchedAlike = await git(['diff', '--quiet', commit, '--', 'patches']).then(
      () => true,
      () => false,
    )
    if (!patchedAlike) apart.push('patches/ differs')
    if (apart.length > 0 && options.installWhenApart) {
      await promisify(execFile)('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: dir, maxBuffer: 64 * 1024 * 1024 })
      return { dir, commit, remove }
    }
    if (apart.length > 0) throw new Error(`${ref} installs other versions than this checkout: ${apart.join(', ')}`)
    await linkInstalledPackages(dir)
    return { dir, commit, remove }
  } catch (error) {
    await remove()
    throw error
  }
}

/** This checkout's installed packages, linked into the worktree `dir`; our workspaces to its own folders. */
async function linkInstalledPackages(dir: string): Promise<void> {
  const installed = join(repositoryRoot, 'node_modules')
  const modules = join(dir, 'node_modules')
  await mkdir(join(modules, '@letters'), { recursive: true })
  for (const entry of await readdir(installed)) {
    if (entry === '@letters' || entry === '.package-lock.json') continue
    await symlink(join(installed, entry), join(modules, entry))
  }
  for (const { folder, name } of await workspacesOf(dir)) {
    await symlink(folder, join(modules, name))
    // A workspace's own node_modules (a version apart from the root's), where this checkout has one.
    const nested = join(repositoryRoot, folder.slice(dir.length + 1), 'node_modules')
    if (
      await lstat(nested).then(
        () => true,
        () => false,
      )
    )
      await symlink(nested, join(folder, 'node_modules'))
  }
}

/**
 * The previous release (a rolling upgrade), run with this checkout's packages where both install
 * and patch them alike, or else with an install of its own (`npm ci`, from npm's cache): the
 * release runs as it shipped, its own patches included.
 */
export const checkoutPreviousRelease = (): Promise<ReleaseCheckout> => checkoutRelease(PREVIOUS_RELEASE, { installWhenApart: true })
