import { CommanderError } from 'commander'
import { cliEnvironment, ConfigError } from '@letters/config'
import { CliError } from './admin-api.js'
import type { Io } from './output.js'
import { buildProgram } from './program.js'

/**
 * Runs one command line with the environment `env` (the process's when undefined); resolves with the exit code: 0, 1 when the
 * command failed (the API's Spanish message, or the CLI's own, on stderr), 2 for a usage error
 * (Commander has said why). The CLI's variables are read from `env` by their declarations in
 * packages/config: a malformed one is exit 1 with `Invalid configuration: NAME=value: why`, as a
 * service says it when it refuses to start.
 */
export async function run(argv: string[], env: Record<string, string | undefined> | undefined, io: Io): Promise<number> {
  try {
    await (await buildProgram(cliEnvironment(env), io, argv.slice(2))).parseAsync(argv)
    return 0
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2
    if (error instanceof CliError) {
      io.err(error.message)
      return error.exitCode
    }
    if (error instanceof ConfigError) {
      io.err(`Invalid configuration: ${error.message}`)
      return 1
    }
    io.err(`Error inesperado: ${error instanceof Error ? error.message : String(error)}`)
    return 1
  }
}
