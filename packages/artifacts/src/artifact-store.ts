import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { dirname, join, resolve, sep } from 'node:path'

/**
 * Where the rendered print files are kept, so a letter's files can be looked at (or printed
 * again) after the fact. The built-in store is a local directory; an object store (S3, GCS)
 * implements the same calls.
 */
export interface ArtifactStore {
  readonly name: string
  /** Keeps `data` under `key` (e.g. `<letterId>/card.pdf`), replacing what was there; returns where it lives. */
  put(key: string, data: Buffer): Promise<string>
  /** The file kept under `key`, or undefined. */
  get(key: string): Promise<Buffer | undefined>
  /**
   * Removes every file kept under `folder/` (a letter's, @letters/letters' `letterFolder`; a batch's, `batchFolder`):
   * its personal data is erased. A folder already gone is no error, so a removal can be repeated.
   */
  removeFolder(folder: string): Promise<void>
  /** The names of the files kept directly under `folder/`, in no particular order; none when there is no such folder. */
  list(folder: string): Promise<string[]>
}

/** Writes a whole file under a temporary name and renames it, so a reader never sees half of one. */
export async function writeWhole(path: string, data: Buffer): Promise<void> {
  await mkdir(dirname(path), { recursive: true })
  const partial = join(dirname(path), `.${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}.part`)
  await writeFile(partial, data)
  await rename(partial, path)
}

export class LocalArtifactStore implements ArtifactStore {
  readonly name = 'local'
  private readonly root: string

  constructor(directory: string) {
    this.root = resolve(directory)
  }

  private pathOf(key: string): string {
    const path = resolve(this.root, key)
    // Keys are built from letter ids; this guards against one ever escaping the directory.
    if (!path.startsWith(this.root + sep)) throw new Error(`artifact key ${key} leaves ${this.root}`)
    return path
  }

  async put(key: string, data: Buffer): Promise<string> {
    const path = this.pathOf(key)
    await writeWhole(path, data)
    return path
  }

  async removeFolder(folder: string): Promise<void> {
    await rm(this.pathOf(folder), { recursive: true, force: true })
  }

  async list(folder: string): Promise<string[]> {
    try {
      const entries = await readdir(this.pathOf(folder), { withFileTypes: true })
      // A file being written is kept under a hidden name until it is whole (writeWhole).
      return entries.filter((entry) => entry.isFile() && !entry.name.startsWith('.')).map((entry) => entry.name)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
      throw error
    }
  }

  async get(key: string): Promise<Buffer | undefined> {
    try {
      return await readFile(this.pathOf(key))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw error
    }
  }
}
