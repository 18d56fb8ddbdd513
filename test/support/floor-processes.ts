import { readdir, readFile } from 'node:fs/promises'

/**
 * A PRINT_COMMAND that logs every file it prints to `log`, one line (the file's path) per print:
 * `before` seconds of work before the printer takes the file (only for envelopes, if asked),
 * `after` seconds after it took it. With a `gate` (a path), a command that finds no file there
 * holds its file until one appears, and says so first with a line in `heldAt(gate)`: a test
 * closes the gate, waits until the worker's commands all hold a file, and kills the worker at a
 * moment it knows to be before the printer's answer, however slow the machine.
 */
export function loggingCommand(log: string, timing: { before?: number; after?: number; envelopesOnly?: boolean; gate?: string } = {}): string {
  const gate =
    timing.gate && `if [ ! -e '${timing.gate}' ]; then echo {file} >> '${heldAt(timing.gate)}'; while [ ! -e '${timing.gate}' ]; do sleep 0.05; done; fi`
  const work = [timing.before && `sleep ${timing.before}`, gate].filter(Boolean).join('; ')
  const before = !work ? '' : timing.envelopesOnly ? `case {file} in *envelope.pdf) ${work};; esac; ` : `${work}; `
  return `${before}echo {file} >> '${log}'${timing.after ? `; sleep ${timing.after}` : ''}`
}

/** Where the commands of a `loggingCommand` with `gate` note each file they hold at the closed gate. */
export const heldAt = (gate: string) => `${gate}.held`

/** How many files commands have held at the closed `gate` so far (one line each). */
export async function heldAtGate(gate: string): Promise<number> {
  return (await readFile(heldAt(gate), 'utf8').catch(() => '')).split('\n').filter(Boolean).length
}

/** How many times each file was printed, from a `loggingCommand`'s log. */
export async function printsIn(log: string): Promise<Map<string, number>> {
  const lines = (await readFile(log, 'utf8').catch(() => '')).split('\n').filter(Boolean)
  const counts = new Map<string, number>()
  for (const line of lines) counts.set(line, (counts.get(line) ?? 0) + 1)
  return counts
}

/** Processes whose command line mentions `text`: the print commands of one test, found by their log's path. */
export async function processesMentioning(text: string): Promise<string[]> {
  const found: string[] = []
  for (const pid of (await readdir('/proc')).filter((name) => /^\d+$/.test(name))) {
    const commandLine = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')
    if (commandLine.includes(text)) found.push(`${pid}: ${commandLine.replaceAll('\0', ' ')}`)
  }
  return found
}

/** A process's parent and command line, or undefined once it is gone. */
async function processInfo(pid: number): Promise<{ ppid: number; commandLine: string } | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
    // The name, in parentheses, may hold spaces: the fields after it are counted from its end.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
    return { ppid, commandLine: (await readFile(`/proc/${pid}/cmdline`, 'utf8')).replaceAll('\0', ' ') }
  } catch {
    return undefined
  }
}

/**
 * The worker whose printer has a file right now and has not printed it yet: its print command (a
 * `loggingCommand` with `before`, writing to `log`) is still in its `sleep`, so a kill now is a
 * kill while the printer has the file, never one in the instant after the printer answered.
 * Undefined when no worker of `pids` is at that point.
 */
export async function workerMidPrint(log: string, pids: readonly number[]): Promise<number | undefined> {
  const all = (await readdir('/proc')).filter((name) => /^\d+$/.test(name)).map(Number)
  const infos = new Map<number, { ppid: number; commandLine: string }>()
  for (const pid of all) {
    const info = await processInfo(pid)
    if (info) infos.set(pid, info)
  }
  for (const [pid, info] of infos) {
    // sleep ← the command's shell ← the watched shell the worker started.
    if (!/^sleep /.test(info.commandLine)) continue
    const command = infos.get(info.ppid)
    const watched = command && infos.get(command.ppid)
    if (!command?.commandLine.includes(log) || !watched?.commandLine.includes(log)) continue
    if (pids.includes(watched.ppid) && (await processInfo(pid))) return watched.ppid
  }
  return undefined
}
