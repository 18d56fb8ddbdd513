import { readdir, readFile } from 'node:fs/promises'

/**
 * A PRINT_COMMAND that logs every file it prints to `log`, one line (the file's path) per print:
 * `before` seconds of work before the printer takes the file (only for envelopes, if asked),
 * `after` seconds after it took it.
 */
export function loggingCommand(log: string, timing: { before?: number; after?: number; envelopesOnly?: boolean } = {}): string {
  const before = !timing.before ? '' : timing.envelopesOnly ? `case {file} in *envelope.pdf) sleep ${timing.before};; esac; ` : `sleep ${timing.before}; `
  return `${before}echo {file} >> '${log}'${timing.after ? `; sleep ${timing.after}` : ''}`
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
