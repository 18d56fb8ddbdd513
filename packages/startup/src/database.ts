import type { Config } from '@letters/config'
import { SQLSTATE, SchemaMismatch, isConnectionError, requireSchema, sqlState, type SchemaStatus } from '@letters/db'

export interface StartupLogger {
  info(details: object, message: string): void
  warn(details: object, message: string): void
  error(details: object, message: string): void
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Postgres's name not resolving yet (a container network or a Service still coming up): waited for like a refusal. */
const NAME_NOT_RESOLVED = new Set(['ENOTFOUND', 'EAI_AGAIN'])
const notReachable = (error: unknown) => isConnectionError(error) || NAME_NOT_RESOLVED.has(String((error as { code?: unknown } | undefined)?.code))

/**
 * What every process does with the database before it serves: it never migrates (migrations are
 * a step of their own, `npm run migrate`), it checks that the schema is one it can run on. While
 * Postgres cannot be reached (refused, every connection slot taken, starting up) it waits and
 * tries again with a growing pause, up to DATABASE_STARTUP_WAIT_MS; then, or on a schema it
 * cannot run on, it logs one line saying what to do and exits 1.
 */
export async function awaitSchema(config: Config, log: StartupLogger): Promise<SchemaStatus> {
  const giveUpAt = Date.now() + config.databaseStartupWaitMs
  for (let attempt = 1; ; attempt++) {
    try {
      const status = await requireSchema(config.databaseUrl)
      if (status.newer > 0)
        log.warn({ newer: status.newer, compatibleFrom: status.compatibleFrom }, 'the database schema is newer than this version and still compatible with it')
      return status
    } catch (error) {
      if (error instanceof SchemaMismatch) return exitWith(log, error.message)
      if (sqlState(error) === SQLSTATE.invalidCatalogName) {
        return exitWith(log, `The database in DATABASE_URL does not exist. Run the migrations first: npm run migrate (it creates the database).`)
      }
      if (!notReachable(error)) throw error
      const pauseMs = Math.min(250 * 2 ** attempt, 5000)
      if (Date.now() + pauseMs > giveUpAt) {
        return exitWith(log, `Postgres could not be reached for ${config.databaseStartupWaitMs} ms (${describe(error)}); giving up`)
      }
      log.warn({ attempt, pauseMs, reason: describe(error) }, 'Postgres cannot be reached yet; trying again')
      await sleep(pauseMs)
    }
  }
}

function describe(error: unknown): string {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown }
  return [typeof code === 'string' ? code : undefined, typeof message === 'string' ? message : undefined].filter(Boolean).join(': ')
}

function exitWith(log: StartupLogger, message: string): never {
  log.error({}, message)
  process.stderr.write(`${message}\n`)
  process.exit(1)
}
