import { spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { isAbsolute, join } from 'node:path'
import { writeWhole } from './artifact-store.js'

/** One file for the printer: its name on the floor, its bytes and where the artifact store keeps it. */
export interface PrintFile {
  name: string
  data: Buffer
  location: string
}

/** Hands print files to the floor, in the order given. Throws when the printer did not take them. */
export interface Printer {
  readonly name: string
  print(files: PrintFile[]): Promise<void>
}

/**
 * The default printer: drops each file into a spool directory that the floor's print server
 * watches. Each file appears whole (written aside, then renamed), and in order: card first,
 * then envelope. Printing a letter again replaces its files rather than adding copies.
 */
export class SpoolPrinter implements Printer {
  readonly name = 'spool'

  constructor(private readonly directory: string) {}

  async print(files: PrintFile[]): Promise<void> {
    for (const file of files) await writeWhole(join(this.directory, file.name), file.data)
  }
}

const shellQuoted = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`

/**
 * Runs an operator's command once per file (`lp -d floor-1 {file}`), `{file}` replaced by the
 * file's path, through /bin/sh. A non-zero exit or a run longer than the timeout fails the job,
 * which BullMQ then retries.
 */
export class CommandPrinter implements Printer {
  readonly name = 'command'

  constructor(
    private readonly template: string,
    private readonly timeoutMs: number,
  ) {}

  async print(files: PrintFile[]): Promise<void> {
    for (const file of files) {
      if (isAbsolute(file.location)) {
        await this.run(file.location)
        continue
      }
      // The store keeps the file elsewhere (an object store): the command gets a local copy.
      const directory = await mkdtemp(join(tmpdir(), 'letters-print-'))
      try {
        const path = join(directory, file.name)
        await writeFile(path, file.data)
        await this.run(path)
      } finally {
        await rm(directory, { recursive: true, force: true })
      }
    }
  }

  private run(path: string): Promise<void> {
    const command = this.template.replaceAll('{file}', shellQuoted(path))
    return new Promise((resolve, reject) => {
      // Its own process group, so a timeout stops the whole pipeline the command started.
      const child = spawn('/bin/sh', ['-c', command], { detached: true, stdio: ['ignore', 'ignore', 'pipe'] })
      let stderr = ''
      child.stderr.on('data', (chunk: Buffer) => {
        stderr = (stderr + chunk.toString()).slice(-500)
      })
      const timer = setTimeout(() => {
        if (child.pid) process.kill(-child.pid, 'SIGKILL')
      }, this.timeoutMs)
      child.on('error', (error) => {
        clearTimeout(timer)
        reject(error)
      })
      child.on('close', (code, signal) => {
        clearTimeout(timer)
        if (code === 0) resolve()
        else if (signal) reject(new Error(`print command stopped by ${signal} (timeout ${this.timeoutMs} ms): ${command}`))
        else reject(new Error(`print command exited with ${code}: ${command}${stderr ? ` — ${stderr.trim()}` : ''}`))
      })
    })
  }
}
