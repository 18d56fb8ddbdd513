import { spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { isAbsolute, join } from 'node:path'
import { writeWhole } from '@letters/artifacts'

/** One file for the printer: its name on the floor, its bytes and where the artifact store keeps it. */
export interface PrintFile {
  name: string
  data: Buffer
  location: string
}

/**
 * Hands print files to the floor, one at a time. `print` resolves once the printer has accepted
 * the file and throws when it did not: the caller records each accepted file before the next,
 * so a retry hands over only what is missing.
 */
export interface Printer {
  readonly name: string
  print(file: PrintFile): Promise<void>
}

/**
 * The default printer: drops each file into a spool directory that the floor's print server
 * watches. The file appears whole (written aside, then renamed); printing it again replaces
 * it rather than adding a copy.
 */
export class SpoolPrinter implements Printer {
  readonly name = 'spool'

  constructor(private readonly directory: string) {}

  async print(file: PrintFile): Promise<void> {
    await writeWhole(join(this.directory, file.name), file.data)
  }
}

const shellQuoted = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`

/**
 * The shell that runs the operator's command (its `$1`) and ties it to the worker: a watchdog
 * in the command's process group waits on a pipe whose other end only the worker holds, and
 * when that end closes before the command is done (the worker died, even by SIGKILL, when no
 * handler of ours runs) it kills the whole group, so no print completes after its worker is
 * gone and the retry elsewhere is the only one. The command reads /dev/null, not the pipe.
 */
const watchedCommand = `
exec 3<&0 </dev/null
{ read -r _ <&3; kill -KILL 0; } 2>/dev/null &
watchdog=$!
exec 3<&-
/bin/sh -c "$1" &
wait $!
status=$?
kill -KILL $watchdog 2>/dev/null
exit $status`

/**
 * Runs an operator's command once per file (`lp -d floor-1 {file}`), `{file}` replaced by the
 * file's path, through /bin/sh. A non-zero exit or a run longer than the timeout fails the job,
 * which BullMQ then retries.
 */
export class CommandPrinter implements Printer {
  readonly name = 'command'
  /** Process groups of the commands running now. */
  private readonly running = new Set<number>()

  constructor(
    private readonly template: string,
    private readonly timeoutMs: number,
  ) {}

  async print(file: PrintFile): Promise<void> {
    if (isAbsolute(file.location)) return this.run(file.location)
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

  /** Stops every command still running (the worker is shutting down): its job will run again. */
  stopAll(): void {
    for (const pid of this.running) killGroup(pid)
  }

  private run(path: string): Promise<void> {
    const command = this.template.replaceAll('{file}', shellQuoted(path))
    return new Promise((resolve, reject) => {
      // Its own process group, so a timeout stops the whole pipeline the command started; its
      // stdin is the watchdog's pipe, never written to, closed when the worker is done with it.
      const child = spawn('/bin/sh', ['-c', watchedCommand, 'print-command', command], { detached: true, stdio: ['pipe', 'ignore', 'pipe'] })
      const pid = child.pid
      if (pid) this.running.add(pid)
      let stderr = ''
      let settled = false
      const settle = (error?: Error) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        if (pid) this.running.delete(pid)
        child.stdin.destroy()
        if (error) reject(error)
        else resolve()
      }
      child.stderr.on('data', (chunk: Buffer) => {
        stderr = (stderr + chunk.toString()).slice(-500)
      })
      const timer = setTimeout(() => {
        if (pid) killGroup(pid)
        // Settled here: a process that left the group may hold stderr open long after.
        child.stderr.destroy()
        settle(new Error(`print command stopped after ${this.timeoutMs} ms (timeout): ${command}`))
      }, this.timeoutMs)
      child.on('error', (error) => settle(error))
      // `exit`, not `close`: a background process the command left behind may keep stderr open.
      child.on('exit', (code, signal) => {
        if (code === 0) return settle()
        if (signal) return settle(new Error(`print command stopped by ${signal}: ${command}`))
        const fail = () => settle(new Error(`print command exited with ${code}: ${command}${stderr ? ` — ${stderr.trim()}` : ''}`))
        // What the command said may still be in the pipe: wait for it, but not for a background process.
        const grace = setTimeout(fail, 200)
        child.once('close', () => {
          clearTimeout(grace)
          fail()
        })
      })
    })
  }
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL')
  } catch {
    // The group is gone already.
  }
}
