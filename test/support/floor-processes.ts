import { readdir, readFile } from 'node:fs/promises'

/**
 * A PRINT_COMMAND that logs every file it prints to `log`, one line (the file's path) per print:
 * `before` seconds of work before the printer takes the file (only for envelopes, a letter's or a
 * batch's, if asked),
 * `after` seconds after it took it. With a `gate` (a path), a command that finds no file there
 * holds its file until one appears, and says so first with a line in `heldAt(gate)`: a test
 * closes the gate, waits until the worker's commands all hold a file, and kills the worker at a
 * moment it knows to be before the printer's answer, however slow the machine.
 */
export function loggingCommand(log: string, timing: { before?: number; after?: number; envelopesOnly?: boolean; gate?: string } = {}): string {
  const gate =
    timing.gate && `if [ ! -e '${timing.gate}' ]; then echo {file} >> '${heldAt(timing.gate)}'; while [ ! -e '${timing.gate}' ]; do sleep 0.05; done; fi`
  const work = [timing.before && `sleep ${timing.before}`, gate].filter(Boolean).join('; ')
  const before = !work ? '' : timing.envelopesOnly ? `case {file} in *envelope.pdf|*envelopes.pdf) ${work};; esac; ` : `${work}; `
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

/**
 * The first of `gates` (one per worker, each its print command's own gate) at which a command
 * holds a file now, or -1 while none does: the worker to kill, at a moment it cannot print. A
 * command that held a file once but is gone (ended by the print timeout) does not count.
 */
export async function firstHeldGate(gates: readonly string[]): Promise<number> {
  for (const [index, gate] of gates.entries()) if ((await heldAtGate(gate)) > 0 && (await processesMentioning(gate)).length > 0) return index
  return -1
}

/** The batch whose file a command first held at `gate` (its id, from the file's path under batches/). */
export async function batchHeldAt(gate: string): Promise<string | undefined> {
  const first = (await readFile(heldAt(gate), 'utf8').catch(() => '')).split('\n')[0] ?? ''
  return /\/batches\/([0-9a-f-]{36})\//.exec(first)?.[1]
}
