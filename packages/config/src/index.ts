import { isIP } from 'node:net'
import { ConfigError, readSection, type Variable } from './parsers.js'
import { cliVariables, variables } from './variables.js'

export { ConfigError } from './parsers.js'
export { DEFAULT_LETTERS_URL, QUEUED_LEASE_MS, logLevels, printerModes, type LogLevel, type PrinterMode } from './variables.js'
export { configTable, withConfigTable } from './config-table.js'

/** A host only this machine reaches: a loopback address or `localhost`. */
function isLoopback(host: string): boolean {
  if (host === 'localhost' || host === '::1') return true
  return isIP(host) === 4 && host.startsWith('127.')
}

/** The host of a link to this machine: the address the gateway listens on, or `localhost` when it listens on every address. */
function linkHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return 'localhost'
  return isIP(host) === 6 ? `[${host}]` : host
}

/**
 * Parses the environment once, at start: every variable as declared (./variables.ts), then the
 * values derived from others and the rules between variables. A bad value throws a ConfigError
 * whose message is `NAME=value: why`; the entry points print it and exit.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env) {
  const read = readSection(variables, env)
  const budget = requestBudget(read.http.requestTimeoutMs)
  // Half the time a request has to be decided: a request's transaction (a lock waited for, then
  // a write) then ends before its answer is due, rather than after the client was answered.
  const statementBudgetMs = Math.floor(budget.decideWithinMs / 2)
  const statementTimeoutMs = read.databaseStatementTimeoutMs ?? Math.min(10_000, statementBudgetMs)
  if (statementTimeoutMs > statementBudgetMs) {
    throw new ConfigError(
      `DATABASE_STATEMENT_TIMEOUT_MS=${statementTimeoutMs}: must not exceed ${statementBudgetMs} ms, half the ${budget.decideWithinMs} ms a request has to be decided in with HTTP_REQUEST_TIMEOUT_MS=${read.http.requestTimeoutMs}, or a transaction could outlast its request's answer (lower it, or raise HTTP_REQUEST_TIMEOUT_MS)`,
    )
  }
  // The floor's and the metrics' tokens open one thing each: were one of them the admin token, its
  // holder could do everything. Their values are not printed.
  if (read.floorToken !== undefined && read.floorToken === read.adminToken) {
    throw new ConfigError('FLOOR_TOKEN: must differ from ADMIN_TOKEN (the floor token opens only /floor)')
  }
  if (read.metricsToken !== undefined && (read.metricsToken === read.adminToken || read.metricsToken === read.floorToken)) {
    throw new ConfigError('METRICS_TOKEN: must differ from ADMIN_TOKEN and FLOOR_TOKEN (the metrics token opens only /metrics)')
  }
  // postgres.js would not read a pool size from the URL: one written there would be silently ignored.
  if (new URL(read.databaseUrl).searchParams.has('max')) {
    throw new ConfigError('DATABASE_URL: its ?max= is not read; set the pool size with DATABASE_POOL_MAX')
  }
  const production = read.nodeEnv === 'production'
  const publicBaseUrl = read.publicBaseUrl ?? `http://${linkHost(read.host)}:${read.port}`
  return {
    ...read,
    databaseStatementTimeoutMs: statementTimeoutMs,
    // The demo key is printed to the log: by default only where nobody else can reach the service.
    seedDemo: read.seedDemo ?? (!production && isLoopback(read.host)),
    trustProxy: read.trustProxy ?? [],
    publicBaseUrl,
    webhooks: {
      ...read.webhooks,
      // Event bodies carry recipients' names and addresses: in production they travel over TLS unless WEBHOOK_ALLOW_HTTP=true.
      allowHttp: read.webhooks.allowHttp ?? !production,
    },
    // The session's cookies are sent only over HTTPS: in production, or wherever PUBLIC_BASE_URL is https.
    dashboard: { ...read.dashboard, secureCookies: production || publicBaseUrl.startsWith('https:') },
    // Absent: invitations are not emailed, only answered as a link.
    smtp: read.smtp.url === undefined ? undefined : { url: read.smtp.url, from: read.smtp.from ?? `Cartas <no-reply@${new URL(publicBaseUrl).hostname}>` },
  }
}

/** What the processes run with: the variables' values in their declarations' shape, and what the loader derives. */
export type Config = ReturnType<typeof loadConfig>

/**
 * How a request's time (HTTP_REQUEST_TIMEOUT_MS, after which its idle connection is cut) is
 * spent. By `decideWithinMs` a request must have been decided: a creation not yet being written
 * then is abandoned and answered 503, and nothing of it is written afterwards. By
 * `answerWithinMs` every request has its answer, whatever happened (the rest is the margin for
 * the answer to reach the client before the connection is cut).
 */
export function requestBudget(requestTimeoutMs: number): { decideWithinMs: number; answerWithinMs: number } {
  return {
    decideWithinMs: requestTimeoutMs - Math.min(5000, Math.floor(requestTimeoutMs / 4)),
    answerWithinMs: requestTimeoutMs - Math.min(1000, Math.floor(requestTimeoutMs / 10)),
  }
}

/**
 * What the operator CLI (packages/cli) reads from its environment, each by its declaration: a
 * malformed value throws the ConfigError a service would (`NAME=value: why`). An unset (or empty)
 * one is `undefined`, not its default: the CLI runs with only the variables its command needs
 * (`migrate` DATABASE_URL, the others LETTERS_URL and ADMIN_TOKEN), and the command that needs
 * one says it is missing or applies its default (DEFAULT_LETTERS_URL; loadConfig's DATABASE_URL).
 */
export function cliEnvironment(env: Record<string, string | undefined> = process.env): {
  lettersUrl: string | undefined
  adminToken: string | undefined
  databaseUrl: string | undefined
} {
  const ifSet = <T>(variable: Variable<T>): T | undefined => (env[variable.env] ? variable.readFrom(env) : undefined)
  return { lettersUrl: ifSet(cliVariables.lettersUrl), adminToken: ifSet(variables.adminToken), databaseUrl: ifSet(variables.databaseUrl) }
}

/** The operator CLI's settings, as `cliEnvironment` reads them. */
export type CliEnvironment = ReturnType<typeof cliEnvironment>

/** Entry points call this: a bad environment stops the process with `NAME=value: why`. */
export function loadConfigOrExit(env: Record<string, string | undefined> = process.env): Config {
  try {
    return loadConfig(env)
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    process.stderr.write(`Invalid configuration: ${error.message}\n`)
    process.exit(1)
  }
}

/** The service's processes, each an entry point of its own (services/<name>/src/main.ts). */
export const processNames = ['gateway', 'address-worker', 'production-worker', 'webhook-worker'] as const
export type ProcessName = (typeof processNames)[number]

/**
 * The longest a process takes to stop after SIGTERM: it finishes the work in hand, then exits
 * anyway. Whatever stops it (compose's stop_grace_period, Kubernetes'
 * terminationGracePeriodSeconds) must wait longer, or it kills the process mid-letter.
 */
export function drainTimeMs(name: ProcessName, config: Pick<Config, 'printTimeoutMs' | 'webhooks'>): number {
  switch (name) {
    // The letters in hand, their print commands included.
    case 'production-worker':
      return config.printTimeoutMs + 30_000
    // The deliveries in flight, each bounded by its timeout.
    case 'webhook-worker':
      return config.webhooks.timeoutMs + 5000
    // The requests (gateway) or jobs (address worker) in hand: a few database round trips each.
    case 'gateway':
    case 'address-worker':
      return 10_000
  }
}

export { moduleLaunch, untrustedChildEnvironment, type ModuleLaunch } from './module-launch.js'
