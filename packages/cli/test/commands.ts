import { spawn } from 'node:child_process'
import { ADMIN_TOKEN } from '@letters/test/support/context'
import { repositoryRoot } from '@letters/test/support/processes'
import type { Io } from '../src/output.js'
import { run } from '../src/run.js'

export type Run = { code: number | null; stdout: string; stderr: string }

/** Environment on top of the test's (undefined removes a variable), as an operator's shell would have it. */
export type CliEnv = Record<string, string | undefined>

/**
 * A command line of the CLI run in this process: the same `run` its entry point calls, with
 * LETTERS_URL and ADMIN_TOKEN (and whatever `env` adds) as the environment it reads instead of
 * the process's, and what it prints collected line by line as the entry point writes it. Starting Node for each
 * of a hundred commands cost minutes and tested nothing more; `spawnCli` runs the
 * entry point itself where that is what is checked.
 */
export async function runCli(args: string[], lettersUrl: string, env: CliEnv = {}): Promise<Run> {
  const variables: CliEnv = { LETTERS_URL: lettersUrl, ADMIN_TOKEN, ...env }
  let stdout = ''
  let stderr = ''
  const io: Io = {
    out: (text) => (stdout += text.endsWith('\n') ? text : `${text}\n`),
    err: (text) => (stderr += text.endsWith('\n') ? text : `${text}\n`),
  }
  const code = await run(['node', 'main.ts', ...args], variables, io)
  return { code, stdout, stderr }
}

/** A command line run as an operator runs it (npm, or node and the compiled entry point), in a process of its own. */
export function spawnCli(command: string, args: string[], lettersUrl: string, env: CliEnv = {}): Promise<Run> {
  const variables: NodeJS.ProcessEnv = { ...process.env, LETTERS_URL: lettersUrl, ADMIN_TOKEN, ...env }
  for (const [name, value] of Object.entries(variables)) if (value === undefined) delete variables[name]
  const child = spawn(command, args, { cwd: repositoryRoot, env: variables, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}
