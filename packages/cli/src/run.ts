import { CommanderError } from 'commander'
import { CliError } from './admin-api.js'
import type { Io } from './output.js'
import { buildProgram, type Settings } from './program.js'

/**
 * Runs one command line; resolves with the exit code: 0, 1 when the command failed (the API's
 * Spanish message, or the CLI's own, on stderr), 2 for a usage error (Commander has said why).
 */
export async function run(argv: string[], settings: Settings, io: Io): Promise<number> {
  try {
    await (await buildProgram(settings, io, argv.slice(2))).parseAsync(argv)
    return 0
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2
    if (error instanceof CliError) {
      io.err(error.message)
      return error.exitCode
    }
    io.err(`Error inesperado: ${error instanceof Error ? error.message : String(error)}`)
    return 1
  }
}
