import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { readdir, readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { expect } from 'vitest'
import type { Pipeline } from './pipeline.js'

const repositoryRoot = fileURLToPath(new URL('../..', import.meta.url))

/**
 * A production worker in a process of its own (production-worker-process.ts) on the pipeline's
 * database, Redis and queues, for a test to kill; resolves once it consumes the production queue.
 */
export async function startWorkerProcess(pipeline: Pipeline, env: Record<string, string>): Promise<ChildProcess> {
  const { config } = pipeline
  const started = spawn(process.execPath, ['--import', 'tsx', 'test/support/production-worker-process.ts'], {
    cwd: repositoryRoot,
    env: { ...process.env, DATABASE_URL: config.databaseUrl, REDIS_URL: config.redisUrl, QUEUE_PREFIX: config.queuePrefix, ARTIFACTS_DIR: config.artifactsDir, LOG_LEVEL: 'silent', SEED_DEMO: 'false', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const [line] = (await once(started.stdout!, 'data')) as [Buffer]
  expect(line.toString()).toBe('consuming\n')
  return started
}

/** Kills a worker process the hard way (no handler of its runs) and waits for it to be gone. */
export async function killHard(worker: ChildProcess): Promise<void> {
  worker.kill('SIGKILL')
  if (worker.exitCode === null && worker.signalCode === null) await once(worker, 'exit')
}

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
