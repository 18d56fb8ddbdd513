import { isIP } from 'node:net'
import { resolve } from 'node:path'
import proxyAddr from '@fastify/proxy-addr'
import { Type, type Static } from 'typebox'
import { Compile } from 'typebox/compile'
import { Value } from 'typebox/value'

const LogLevel = Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)))

const Flag = Type.Union([Type.Literal('true'), Type.Literal('false')])

/** PRINTER: what the production worker makes of a letter (Config.printer says how). */
export const printerModes = ['spool', 'plotter', 'batch'] as const
export type PrinterMode = (typeof printerModes)[number]

/** Every variable the processes read, with the defaults that serve a local run. */
/**
 * A minute: how long an admitted webhook delivery keeps its endpoint's slot before a worker starts
 * it (WEBHOOK_QUEUED_LEASE_MS). It is what a lost job costs its endpoint, one slot for at most this
 * long, and how long a job may wait in the queue before it is given again. The queue is short: the
 * caps per endpoint and per account admit only what the workers can start soon, and a job that does
 * wait past it costs an extra row lookup (it finds its lease gone and sends nothing), never a
 * second send.
 */
export const QUEUED_LEASE_MS = 60_000

const EnvSchema = Type.Object({
  NODE_ENV: Type.String({ default: 'development' }),
  DATABASE_URL: Type.String({ pattern: '^postgres(ql)?://', default: 'postgres://postgres@127.0.0.1:5432/letters' }),
  DATABASE_STATEMENT_TIMEOUT_MS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]*$' })),
  DATABASE_POOL_MAX: Type.String({ pattern: '^[1-9][0-9]{0,3}$', default: '10' }),
  DATABASE_STARTUP_WAIT_MS: Type.String({ pattern: '^[0-9]+$', default: '120000' }),
  REDIS_URL: Type.String({ pattern: '^rediss?://', default: 'redis://127.0.0.1:6379' }),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  PORT: Type.String({ pattern: '^[0-9]{1,5}$', default: '3000' }),
  ADMIN_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  FLOOR_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  RATE_LIMIT_MAX: Type.String({ pattern: '^[1-9][0-9]*$', default: '150' }),
  RATE_LIMIT_WINDOW_MS: Type.String({ pattern: '^[1-9][0-9]*$', default: '5000' }),
  LOG_LEVEL: Type.String({ default: 'info' }),
  // A Redis Cluster hash tag may lead it ({letters}, {letters}-eu): every key then hashes to one
  // slot, as BullMQ's scripts and our own multi-key ones need.
  QUEUE_PREFIX: Type.String({ pattern: '^(\\{[A-Za-z0-9_-]+\\}[A-Za-z0-9_-]*|[A-Za-z0-9_-]+)$', default: 'letters' }),
  SEED_DEMO: Type.Optional(Flag),
  LETTER_COSTS: Type.String({ pattern: '^([A-Z]{2}|\\*)=[1-9][0-9]{0,5}(,([A-Z]{2}|\\*)=[1-9][0-9]{0,5})*$', default: 'ES=3,*=5' }),
  ARTIFACTS_DIR: Type.String({ minLength: 1, default: 'var/artifacts' }),
  SPOOL_DIR: Type.String({ minLength: 1, default: 'var/spool' }),
  PRINT_COMMAND: Type.Optional(Type.String({ pattern: '\\{file\\}' })),
  PRINT_TIMEOUT_MS: Type.String({ pattern: '^[1-9][0-9]*$', default: '120000' }),
  PRINTER: Type.Union(
    printerModes.map((mode) => Type.Literal(mode)),
    { default: 'spool' },
  ),
  // One line of G-code words (M3, M3 S90, M280 P0 S60): never a newline that could smuggle moves in.
  PLOTTER_PEN_UP: Type.String({ pattern: '^[A-Z][-+]?[0-9.]+( [A-Z][-+]?[0-9.]+)*$', default: 'M5' }),
  PLOTTER_PEN_DOWN: Type.String({ pattern: '^[A-Z][-+]?[0-9.]+( [A-Z][-+]?[0-9.]+)*$', default: 'M3' }),
  PLOTTER_DRAW_FEED: Type.String({ pattern: '^[1-9][0-9]{0,5}$', default: '2000' }),
  PLOTTER_TRAVEL_FEED: Type.String({ pattern: '^[1-9][0-9]{0,5}$', default: '6000' }),
  // The envelope's code has 0.3 mm bars and spaces: a wider line would close its narrow spaces.
  PLOTTER_PEN_WIDTH_MM: Type.String({ pattern: '^0\\.([12][0-9]?|30?)$', default: '0.3' }),
  BATCH_MAX_LETTERS: Type.String({ pattern: '^[1-9][0-9]{0,3}$', default: '100' }),
  BATCH_MAX_WAIT_MS: Type.String({ pattern: '^[1-9][0-9]*$', default: '300000' }),
  FLOOR_COUNTRY: Type.String({ pattern: '^[A-Z]{2}$', default: 'ES' }),
  RECONCILE_AFTER_MS: Type.String({ pattern: '^[1-9][0-9]*$', default: '600000' }),
  RECONCILE_INTERVAL_MS: Type.String({ pattern: '^[1-9][0-9]*$', default: '30000' }),
  HTTP_REQUEST_TIMEOUT_MS: Type.String({ pattern: '^[1-9][0-9]*$', default: '30000' }),
  HTTP_HEADERS_TIMEOUT_MS: Type.String({ pattern: '^[1-9][0-9]*$', default: '10000' }),
  // 75 s: longer than the proxies in front keep an idle connection to the gateway (ingress-nginx's
  // upstream keep-alive and AWS load balancers: 60 s), so that the gateway never closes one they
  // may still send a request on.
  HTTP_KEEP_ALIVE_TIMEOUT_MS: Type.String({ pattern: '^[1-9][0-9]*$', default: '75000' }),
  HTTP_MAX_CONNECTIONS: Type.String({ pattern: '^[1-9][0-9]*$', default: '10000' }),
  PROOF_RATE_LIMIT_MAX: Type.String({ pattern: '^[1-9][0-9]*$', default: '10' }),
  PROOF_RATE_LIMIT_WINDOW_MS: Type.String({ pattern: '^[1-9][0-9]*$', default: '60000' }),
  RENDER_THREADS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,2}$' })),
  RENDER_QUEUE_MAX: Type.String({ pattern: '^[0-9]+$', default: '16' }),
  RENDER_WARM_UP: Type.Optional(Flag),
  RENDER_PRIORITY: Type.Union([Type.Literal('below-normal'), Type.Literal('normal')], { default: 'below-normal' }),
  EVENT_LOOP_MAX_DELAY_MS: Type.String({ pattern: '^[1-9][0-9]*$', default: '1000' }),
  AUTH_FAILURES_MAX: Type.String({ pattern: '^[1-9][0-9]*$', default: '10' }),
  AUTH_FAILURES_WINDOW_MS: Type.String({ pattern: '^[1-9][0-9]*$', default: '60000' }),
  TRUST_PROXY: Type.Optional(Type.String()),
  METRICS_PORT: Type.Optional(Type.String({ pattern: '^[0-9]{1,5}$' })),
  INTAKE_CONCURRENT_BATCHES: Type.String({ pattern: '^[1-9][0-9]?$', default: '2' }),
  WEBHOOK_ALLOW_PRIVATE_URLS: Type.Optional(Flag),
  WEBHOOK_TIMEOUT_MS: Type.String({ pattern: '^[1-9][0-9]*$', default: '10000' }),
  WEBHOOK_RETRY_SCHEDULE: Type.String({ pattern: '^[0-9]{1,10}(,[0-9]{1,10})*$', default: '5000,30000,120000,600000,3600000,21600000,86400000' }),
  WEBHOOK_CONCURRENCY: Type.String({ pattern: '^[1-9][0-9]{0,3}$', default: '100' }),
  WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: Type.String({ pattern: '^[1-9][0-9]{0,3}$', default: '10' }),
  WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT: Type.String({ pattern: '^[1-9][0-9]{0,3}$', default: '20' }),
  WEBHOOK_QUEUED_LEASE_MS: Type.String({ pattern: '^[1-9][0-9]{3,8}$', default: String(QUEUED_LEASE_MS) }),
  WEBHOOK_ALLOW_HTTP: Type.Optional(Flag),
  CLOCK_INTERVAL_MS: Type.String({ pattern: '^[1-9][0-9]*$', default: '1000' }),
  TEST_MAILED_AFTER_MS: Type.String({ pattern: '^[0-9]+$', default: '60000' }),
  // 90 days.
  PERSONAL_DATA_RETENTION_MS: Type.String({ pattern: '^[1-9][0-9]{0,14}$', default: '7776000000' }),
  PUBLIC_BASE_URL: Type.Optional(Type.String({ pattern: '^https?://[^/?#@\\s]+$' })),
  // 12 hours.
  DASHBOARD_SESSION_IDLE_MS: Type.String({ pattern: '^[1-9][0-9]{3,10}$', default: '43200000' }),
  SMTP_URL: Type.Optional(Type.String({ pattern: '^smtps?://' })),
  SMTP_FROM: Type.Optional(Type.String({ pattern: '^[^\\r\\n]+@[^\\r\\n]+$' })),
})

const checkEnv = Compile(EnvSchema)
const checkLogLevel = Compile(LogLevel)

export type LogLevel = Static<typeof LogLevel>

export interface Config {
  nodeEnv: string
  databaseUrl: string
  /** Longest one SQL statement may run (lock waits included); always within the time a request has to be decided (requestBudget). */
  databaseStatementTimeoutMs: number
  /**
   * Connections in this process's pool. Every replica of every process holds up to this many:
   * their sum must stay under Postgres' max_connections, less a reserve (docs/operations.md).
   */
  databasePoolMax: number
  /** How long a process keeps trying to reach Postgres at start (refused, too many clients, starting up) before it gives up. */
  databaseStartupWaitMs: number
  redisUrl: string
  host: string
  port: number
  /** Absent: the admin API answers 404, as if it did not exist. */
  adminToken: string | undefined
  /** Opens the floor's page and scanner (/floor) and nothing else; absent: /floor answers 404. */
  floorToken: string | undefined
  /** Opens every /metrics (the gateway's and each worker's) and nothing else. Absent: the gateway's takes the admin token, a worker's is open. */
  metricsToken: string | undefined
  rateLimit: { max: number; windowMs: number }
  logLevel: LogLevel
  queuePrefix: string
  seedDemo: boolean
  /** Credits a letter costs, by destination country; `otherwise` for every country not listed. */
  letterCosts: { byCountry: Record<string, number>; otherwise: number }
  /** Where the production worker keeps every print file it renders (absolute path). */
  artifactsDir: string
  /** Where the default printer drops the files for the floor (absolute path). */
  spoolDir: string
  /** A command run once per print file, `{file}` replaced by its path; absent: copy into `spoolDir`. */
  printCommand: string | undefined
  /** How long one print command may run before it counts as failed. */
  printTimeoutMs: number
  /**
   * What the floor prints with: `spool` (a card and an envelope PDF per letter, to SPOOL_DIR or
   * PRINT_COMMAND), `plotter` (SVG and G-code of single strokes per card and envelope, handed the
   * same way), `batch` (letters gathered in presorted batches of three files: README, Batch printing).
   */
  printer: PrinterMode
  /** The pen plotter's commands, feeds (mm/min) and the width of its pen's line (mm), for PRINTER=plotter. */
  plotter: { penUp: string; penDown: string; drawFeed: number; travelFeed: number; penWidth: number }
  /** PRINTER=batch: a batch closes at `maxLetters` letters or `maxWaitMs` after its first letter, whichever comes first. */
  batch: { maxLetters: number; maxWaitMs: number }
  /** The floor's own country (ISO 3166-1 alpha-2): an envelope to it carries no country line. */
  floorCountry: string
  /** A letter in received, ready_for_print or printing without progress for this long, and without its job in Redis, is queued again. */
  reconcileAfterMs: number
  /** How often the reconciler looks for such letters. */
  reconcileIntervalMs: number
  /**
   * The gateway's HTTP server: timeouts and the most sockets it keeps open at once. An idle
   * keep-alive connection stays open `keepAliveTimeoutMs` (its answers advertise it); the request
   * and headers timeouts count from a request's first byte, so they may be shorter.
   */
  http: { requestTimeoutMs: number; headersTimeoutMs: number; keepAliveTimeoutMs: number; maxConnections: number }
  /** Proofs: their own rate limit per key, the render threads and how many renders may wait for one. */
  proofs: {
    rateLimit: { max: number; windowMs: number }
    renderThreads: number | undefined
    renderQueueMax: number
    renderWarmUp: boolean
    renderPriority: 'below-normal' | 'normal'
  }
  /** Past this event-loop delay the gateway answers 503 instead of queueing more work. */
  eventLoopMaxDelayMs: number
  /** Failed authentications allowed per client IP and window, for API keys, the admin token and the floor token each apart, then 429. */
  authFailures: { max: number; windowMs: number }
  /**
   * The proxies in front of the gateway (addresses or CIDR ranges): only from one of them is the
   * client read from X-Forwarded-For. Empty: the TCP peer is the client and the header is ignored.
   */
  trustProxy: string[]
  /** Port of a worker's /metrics and /healthz; absent: the worker's own default. */
  metricsPort: number | undefined
  /** Transactions of the gateway's group commit under way at once (the letters of the requests arriving meanwhile wait for the next). */
  intakeConcurrentBatches: number
  webhooks: {
    /** Lets endpoints on loopback, private, link-local and metadata addresses be registered and called (local development, tests). */
    allowPrivateUrls: boolean
    /** Longest a delivery may wait for the receiver's answer. */
    timeoutMs: number
    /** The delays before each retry of a failed delivery, in milliseconds; jitter is added. */
    retryScheduleMs: number[]
    /** Deliveries in flight at once per webhook worker. */
    concurrency: number
    /**
     * Deliveries of one endpoint in flight at once, across every webhook worker: a slow or dead
     * receiver holds at most this many of the workers' slots, and only its own events wait.
     */
    maxInFlightPerEndpoint: number
    /**
     * Deliveries of one account in flight at once, over all its endpoints and both modes: an
     * account whose every endpoint is dead holds this many slots, and the rest stay for others.
     */
    maxInFlightPerAccount: number
    /** How long an admitted delivery keeps its slot before a worker starts it (QUEUED_LEASE_MS by default). */
    queuedLeaseMs: number
    /** Whether an endpoint may be registered with a plain http:// URL (default: everywhere but production). */
    allowHttp: boolean
  }
  /** The letter clock (every gateway runs one): how often it releases scheduled letters and marks test letters mailed. */
  clockIntervalMs: number
  /** A test letter is marked `mailed` this long after it was `printed`. */
  testMailedAfterMs: number
  /**
   * How long a letter keeps its recipient, message and files once it is printed, mailed,
   * cancelled, rejected or failed; then the gateways' eraser erases them.
   */
  personalDataRetentionMs: number
  /**
   * Where people reach the service, scheme and host (`https://cartas.example.com`): the links it
   * sends (invitations) start with it, and a dashboard request must come from its origin.
   * Default: http://HOST:PORT (localhost when HOST is every address).
   */
  publicBaseUrl: string
  dashboard: {
    /** A session unused this long has ended. */
    sessionIdleMs: number
    /** The session's cookies are sent only over HTTPS: in production, or wherever PUBLIC_BASE_URL is https. */
    secureCookies: boolean
  }
  /** Where invitations are sent from; absent: they are not emailed, only answered as a link. */
  smtp: { url: string; from: string } | undefined
}

export class ConfigError extends Error {
  override name = 'ConfigError'
}

const rules: Record<keyof Static<typeof EnvSchema>, string> = {
  NODE_ENV: 'must be a string',
  DATABASE_URL: 'must be a postgres:// URL',
  DATABASE_STATEMENT_TIMEOUT_MS: 'must be a positive integer of milliseconds',
  DATABASE_POOL_MAX: "must be an integer from 1 to 9999 (connections in each process's pool)",
  DATABASE_STARTUP_WAIT_MS: 'must be a non-negative integer of milliseconds',
  REDIS_URL: 'must be a redis:// or rediss:// URL',
  HOST: 'must not be empty',
  PORT: 'must be a port number (1-65535)',
  ADMIN_TOKEN: 'must be at least 16 characters long',
  FLOOR_TOKEN: 'must be at least 16 characters long',
  METRICS_TOKEN: 'must be at least 16 characters long',
  RATE_LIMIT_MAX: 'must be a positive integer',
  RATE_LIMIT_WINDOW_MS: 'must be a positive integer of milliseconds',
  LOG_LEVEL: 'must be one of fatal, error, warn, info, debug, trace, silent',
  QUEUE_PREFIX: 'must contain only letters, digits, "_" and "-", optionally after a Redis Cluster hash tag in braces (e.g. {letters})',
  SEED_DEMO: 'must be "true" or "false"',
  ARTIFACTS_DIR: 'must be a directory path',
  SPOOL_DIR: 'must be a directory path',
  PRINT_COMMAND: 'must be a command containing {file}, where the path of the print file goes',
  PRINT_TIMEOUT_MS: 'must be a positive integer of milliseconds',
  PRINTER: 'must be spool, plotter or batch',
  PLOTTER_PEN_UP: 'must be one line of G-code words (e.g. M5 or M3 S30)',
  PLOTTER_PEN_DOWN: 'must be one line of G-code words (e.g. M3 or M3 S90)',
  PLOTTER_DRAW_FEED: 'must be a feed rate in mm/min, from 1 to 999999',
  PLOTTER_TRAVEL_FEED: 'must be a feed rate in mm/min, from 1 to 999999',
  PLOTTER_PEN_WIDTH_MM: "must be the width of the pen's line in millimetres, from 0.1 to 0.3 (e.g. 0.25)",
  BATCH_MAX_LETTERS: 'must be an integer from 1 to 9999',
  BATCH_MAX_WAIT_MS: 'must be a positive integer of milliseconds',
  FLOOR_COUNTRY: 'must be an ISO 3166-1 alpha-2 country code in capitals (e.g. ES)',
  RECONCILE_AFTER_MS: 'must be a positive integer of milliseconds',
  RECONCILE_INTERVAL_MS: 'must be a positive integer of milliseconds',
  HTTP_REQUEST_TIMEOUT_MS: 'must be a positive integer of milliseconds',
  HTTP_HEADERS_TIMEOUT_MS: 'must be a positive integer of milliseconds',
  HTTP_KEEP_ALIVE_TIMEOUT_MS: 'must be a positive integer of milliseconds',
  HTTP_MAX_CONNECTIONS: 'must be a positive integer',
  PROOF_RATE_LIMIT_MAX: 'must be a positive integer',
  PROOF_RATE_LIMIT_WINDOW_MS: 'must be a positive integer of milliseconds',
  RENDER_THREADS: 'must be a positive integer (at most 999)',
  RENDER_QUEUE_MAX: 'must be a non-negative integer',
  RENDER_WARM_UP: 'must be "true" or "false"',
  RENDER_PRIORITY: 'must be below-normal or normal',
  EVENT_LOOP_MAX_DELAY_MS: 'must be a positive integer of milliseconds',
  AUTH_FAILURES_MAX: 'must be a positive integer',
  AUTH_FAILURES_WINDOW_MS: 'must be a positive integer of milliseconds',
  TRUST_PROXY: "must list the proxies' addresses or CIDR ranges, separated by commas (e.g. 10.244.0.0/16,127.0.0.1)",
  METRICS_PORT: 'must be a port number (1-65535)',
  INTAKE_CONCURRENT_BATCHES: 'must be an integer from 1 to 99',
  WEBHOOK_ALLOW_PRIVATE_URLS: 'must be "true" or "false"',
  WEBHOOK_TIMEOUT_MS: 'must be a positive integer of milliseconds',
  WEBHOOK_RETRY_SCHEDULE: 'must list delays in milliseconds separated by commas (e.g. 5000,30000,120000)',
  WEBHOOK_CONCURRENCY: 'must be an integer from 1 to 9999',
  WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: 'must be an integer from 1 to 9999',
  WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT: 'must be an integer from 1 to 9999',
  WEBHOOK_QUEUED_LEASE_MS: 'must be an integer of milliseconds from 1000 to 999999999',
  WEBHOOK_ALLOW_HTTP: 'must be "true" or "false"',
  CLOCK_INTERVAL_MS: 'must be a positive integer of milliseconds',
  TEST_MAILED_AFTER_MS: 'must be a non-negative integer of milliseconds',
  PERSONAL_DATA_RETENTION_MS: 'must be a positive integer of milliseconds (7776000000 is 90 days)',
  PUBLIC_BASE_URL: 'must be the scheme and host people reach the service at, without a path (e.g. https://cartas.example.com)',
  DASHBOARD_SESSION_IDLE_MS: 'must be an integer of milliseconds from 1000 to 99999999999',
  SMTP_URL: 'must be an smtp:// or smtps:// URL (e.g. smtps://user:password@smtp.example.com)',
  SMTP_FROM: 'must be one line with an email address (e.g. Cartas <no-reply@example.com>)',
  LETTER_COSTS: 'must list COUNTRY=credits pairs separated by commas, with *=credits for every other country (e.g. ES=3,*=5)',
}

/** Variables whose value is a secret or holds one: a refusal names them without their value. */
const secrets = new Set<keyof typeof rules>(['ADMIN_TOKEN', 'FLOOR_TOKEN', 'METRICS_TOKEN', 'SMTP_URL'])

function fail(name: keyof typeof rules, value: unknown): never {
  throw new ConfigError(`${name}=${secrets.has(name) ? '(not shown)' : String(value)}: ${rules[name]}`)
}

/** Node's longest timer, 2^31 - 1 ms (24.8 days): setTimeout runs a longer one at once, a socket's timeout is cut to it. */
const LONGEST_TIMER_MS = 2 ** 31 - 1

/**
 * The gateway's HTTP timeouts, each one a timer Node must be able to keep. The keep-alive is the
 * one a client and a proxy rely on: an answer advertises it (`Keep-Alive: timeout=<s>`) and they
 * send the next request on the connection within it, so the socket must not close sooner. Node
 * keeps an idle connection at least that long whatever the other two are (while a connection is
 * idle its silence timeout is the keep-alive's, not HTTP_REQUEST_TIMEOUT_MS, and the request and
 * headers timeouts start again at a request's first byte), except past its longest timer, to
 * which it cuts the socket's: the connection would close before the keep-alive it advertises.
 */
function httpTimeouts(vars: Record<'HTTP_REQUEST_TIMEOUT_MS' | 'HTTP_HEADERS_TIMEOUT_MS' | 'HTTP_KEEP_ALIVE_TIMEOUT_MS', string>) {
  const keepAliveTimeoutMs = Number(vars.HTTP_KEEP_ALIVE_TIMEOUT_MS)
  if (keepAliveTimeoutMs > LONGEST_TIMER_MS) {
    throw new ConfigError(
      `HTTP_KEEP_ALIVE_TIMEOUT_MS=${vars.HTTP_KEEP_ALIVE_TIMEOUT_MS}: must be at most ${LONGEST_TIMER_MS} ms (24.8 days), the longest timer Node keeps; past it Node cuts the connection's timer short, and an idle connection would close sooner than this keep-alive, which its answers advertise (Keep-Alive: timeout=${Math.floor(keepAliveTimeoutMs / 1000)})`,
    )
  }
  for (const name of ['HTTP_REQUEST_TIMEOUT_MS', 'HTTP_HEADERS_TIMEOUT_MS'] as const) {
    if (Number(vars[name]) > LONGEST_TIMER_MS) {
      throw new ConfigError(
        `${name}=${vars[name]}: must be at most ${LONGEST_TIMER_MS} ms (24.8 days), the longest timer Node keeps; a longer one would fire at once or be cut short`,
      )
    }
  }
  return { requestTimeoutMs: Number(vars.HTTP_REQUEST_TIMEOUT_MS), headersTimeoutMs: Number(vars.HTTP_HEADERS_TIMEOUT_MS), keepAliveTimeoutMs }
}

/** The first and last address of IPv4 and of IPv6: a range that holds both holds everyone of that family. */
const ADDRESS_SPACES = [
  ['0.0.0.0', '255.255.255.255'],
  ['::', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
] as const

/**
 * An IPv4 or IPv6 address, or a CIDR range of either (`10.244.0.0/16`, `fd00::/8`), read by the
 * proxy-addr Fastify hands TRUST_PROXY to, so that an entry starts the gateway only if the
 * gateway can trust it, and means what it will mean there. Refused as well:
 * - a range that would believe anyone's header: a /0 (proxy-addr refuses it too), or one that
 *   holds a whole address space in another way (`::ffff:0.0.0.0/96`, every IPv4 client);
 * - what proxy-addr reads other than a person might: the address must be written as Node writes
 *   it (`010.0.0.1` would be octal, 8.0.0.1; `10` would be 0.0.0.10) and the prefix without a
 *   leading zero (`/016`).
 */
function isAddressOrRange(entry: string): boolean {
  const slash = entry.indexOf('/')
  const address = slash < 0 ? entry : entry.slice(0, slash)
  const prefix = slash < 0 ? undefined : entry.slice(slash + 1)
  if (isIP(address) === 0 || (prefix !== undefined && !/^[1-9][0-9]*$/.test(prefix))) return false
  let trusts: (address: string, hop: number) => boolean
  try {
    trusts = proxyAddr.compile(entry)
  } catch {
    return false
  }
  return !ADDRESS_SPACES.some(([first, last]) => trusts(first, 0) && trusts(last, 0))
}

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

/** TRUST_PROXY's entries; an entry that is neither an address nor a range stops the start, named. */
function trustedProxies(value: string | undefined): string[] {
  if (value === undefined) return []
  const entries = value.split(',').map((entry) => entry.trim())
  const bad = entries.find((entry) => !isAddressOrRange(entry))
  if (bad !== undefined) throw new ConfigError(`TRUST_PROXY=${value}: ${rules.TRUST_PROXY}; "${bad}" is not one`)
  return entries
}

/**
 * Parses the environment once, at start. A bad value throws a ConfigError whose message is
 * `NAME=value: why`; the entry points print it and exit.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const known = Object.fromEntries(
    Object.keys(EnvSchema.properties)
      .filter((name) => env[name] !== undefined && env[name] !== '')
      .map((name) => [name, env[name]]),
  )
  const parsed = Value.Default(EnvSchema, known) as Record<string, unknown>
  if (!checkEnv.Check(parsed)) {
    const [first] = checkEnv.Errors(parsed)
    const name = (first?.instancePath.slice(1) || 'ENV') as keyof typeof rules
    fail(name, parsed[name])
  }
  const vars = parsed
  const port = Number(vars.PORT)
  if (port < 1 || port > 65535) fail('PORT', vars.PORT)
  if (!checkLogLevel.Check(vars.LOG_LEVEL)) fail('LOG_LEVEL', vars.LOG_LEVEL)
  const metricsPort = vars.METRICS_PORT === undefined ? undefined : Number(vars.METRICS_PORT)
  if (metricsPort !== undefined && (metricsPort < 1 || metricsPort > 65535)) fail('METRICS_PORT', vars.METRICS_PORT)
  const costs = Object.fromEntries(
    vars.LETTER_COSTS.split(',')
      .map((pair) => pair.split('=') as [string, string])
      .map(([country, credits]) => [country, Number(credits)]),
  )
  const { ['*']: otherwise, ...byCountry } = costs
  if (otherwise === undefined) fail('LETTER_COSTS', vars.LETTER_COSTS)
  const http = httpTimeouts(vars)
  const budget = requestBudget(http.requestTimeoutMs)
  // Half the time a request has to be decided: a request's transaction (a lock waited for, then
  // a write) then ends before its answer is due, rather than after the client was answered.
  const statementBudgetMs = Math.floor(budget.decideWithinMs / 2)
  const statementTimeoutMs = vars.DATABASE_STATEMENT_TIMEOUT_MS === undefined ? Math.min(10_000, statementBudgetMs) : Number(vars.DATABASE_STATEMENT_TIMEOUT_MS)
  if (statementTimeoutMs > statementBudgetMs) {
    throw new ConfigError(
      `DATABASE_STATEMENT_TIMEOUT_MS=${statementTimeoutMs}: must not exceed ${statementBudgetMs} ms, half the ${budget.decideWithinMs} ms a request has to be decided in with HTTP_REQUEST_TIMEOUT_MS=${vars.HTTP_REQUEST_TIMEOUT_MS}, or a transaction could outlast its request's answer (lower it, or raise HTTP_REQUEST_TIMEOUT_MS)`,
    )
  }
  // The floor's and the metrics' tokens open one thing each: were one of them the admin token, its
  // holder could do everything. Their values are not printed.
  if (vars.FLOOR_TOKEN !== undefined && vars.FLOOR_TOKEN === vars.ADMIN_TOKEN) {
    throw new ConfigError('FLOOR_TOKEN: must differ from ADMIN_TOKEN (the floor token opens only /floor)')
  }
  if (vars.METRICS_TOKEN !== undefined && (vars.METRICS_TOKEN === vars.ADMIN_TOKEN || vars.METRICS_TOKEN === vars.FLOOR_TOKEN)) {
    throw new ConfigError('METRICS_TOKEN: must differ from ADMIN_TOKEN and FLOOR_TOKEN (the metrics token opens only /metrics)')
  }
  // postgres.js would not read a pool size from the URL: one written there would be silently ignored.
  if (new URL(vars.DATABASE_URL).searchParams.has('max')) {
    throw new ConfigError('DATABASE_URL: its ?max= is not read; set the pool size with DATABASE_POOL_MAX')
  }

  const publicBaseUrl = vars.PUBLIC_BASE_URL ?? `http://${linkHost(vars.HOST)}:${port}`
  if (vars.PUBLIC_BASE_URL !== undefined && !URL.canParse(vars.PUBLIC_BASE_URL)) fail('PUBLIC_BASE_URL', vars.PUBLIC_BASE_URL)
  if (vars.SMTP_URL !== undefined && !URL.canParse(vars.SMTP_URL)) fail('SMTP_URL', vars.SMTP_URL)

  return {
    nodeEnv: vars.NODE_ENV,
    databaseUrl: vars.DATABASE_URL,
    databaseStatementTimeoutMs: statementTimeoutMs,
    databasePoolMax: Number(vars.DATABASE_POOL_MAX),
    databaseStartupWaitMs: Number(vars.DATABASE_STARTUP_WAIT_MS),
    redisUrl: vars.REDIS_URL,
    host: vars.HOST,
    port,
    adminToken: vars.ADMIN_TOKEN,
    floorToken: vars.FLOOR_TOKEN,
    metricsToken: vars.METRICS_TOKEN,
    rateLimit: { max: Number(vars.RATE_LIMIT_MAX), windowMs: Number(vars.RATE_LIMIT_WINDOW_MS) },
    logLevel: vars.LOG_LEVEL,
    queuePrefix: vars.QUEUE_PREFIX,
    // The demo key is printed to the log: by default only where nobody else can reach the service.
    seedDemo: vars.SEED_DEMO === undefined ? vars.NODE_ENV !== 'production' && isLoopback(vars.HOST) : vars.SEED_DEMO === 'true',
    letterCosts: { byCountry, otherwise },
    artifactsDir: resolve(vars.ARTIFACTS_DIR),
    spoolDir: resolve(vars.SPOOL_DIR),
    printCommand: vars.PRINT_COMMAND,
    printTimeoutMs: Number(vars.PRINT_TIMEOUT_MS),
    printer: vars.PRINTER,
    plotter: {
      penUp: vars.PLOTTER_PEN_UP,
      penDown: vars.PLOTTER_PEN_DOWN,
      drawFeed: Number(vars.PLOTTER_DRAW_FEED),
      travelFeed: Number(vars.PLOTTER_TRAVEL_FEED),
      penWidth: Number(vars.PLOTTER_PEN_WIDTH_MM),
    },
    batch: { maxLetters: Number(vars.BATCH_MAX_LETTERS), maxWaitMs: Number(vars.BATCH_MAX_WAIT_MS) },
    floorCountry: vars.FLOOR_COUNTRY,
    reconcileAfterMs: Number(vars.RECONCILE_AFTER_MS),
    reconcileIntervalMs: Number(vars.RECONCILE_INTERVAL_MS),
    http: { ...http, maxConnections: Number(vars.HTTP_MAX_CONNECTIONS) },
    proofs: {
      rateLimit: { max: Number(vars.PROOF_RATE_LIMIT_MAX), windowMs: Number(vars.PROOF_RATE_LIMIT_WINDOW_MS) },
      renderThreads: vars.RENDER_THREADS === undefined ? undefined : Number(vars.RENDER_THREADS),
      renderQueueMax: Number(vars.RENDER_QUEUE_MAX),
      renderWarmUp: vars.RENDER_WARM_UP !== 'false',
      renderPriority: vars.RENDER_PRIORITY,
    },
    eventLoopMaxDelayMs: Number(vars.EVENT_LOOP_MAX_DELAY_MS),
    authFailures: { max: Number(vars.AUTH_FAILURES_MAX), windowMs: Number(vars.AUTH_FAILURES_WINDOW_MS) },
    trustProxy: trustedProxies(vars.TRUST_PROXY),
    metricsPort,
    intakeConcurrentBatches: Number(vars.INTAKE_CONCURRENT_BATCHES),
    webhooks: {
      allowPrivateUrls: vars.WEBHOOK_ALLOW_PRIVATE_URLS === 'true',
      timeoutMs: Number(vars.WEBHOOK_TIMEOUT_MS),
      retryScheduleMs: vars.WEBHOOK_RETRY_SCHEDULE.split(',').map(Number),
      concurrency: Number(vars.WEBHOOK_CONCURRENCY),
      maxInFlightPerEndpoint: Number(vars.WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT),
      maxInFlightPerAccount: Number(vars.WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT),
      queuedLeaseMs: Number(vars.WEBHOOK_QUEUED_LEASE_MS),
      // Event bodies carry recipients' names and addresses: in production they travel over TLS unless WEBHOOK_ALLOW_HTTP=true.
      allowHttp: vars.WEBHOOK_ALLOW_HTTP === undefined ? vars.NODE_ENV !== 'production' : vars.WEBHOOK_ALLOW_HTTP === 'true',
    },
    clockIntervalMs: Number(vars.CLOCK_INTERVAL_MS),
    testMailedAfterMs: Number(vars.TEST_MAILED_AFTER_MS),
    personalDataRetentionMs: Number(vars.PERSONAL_DATA_RETENTION_MS),
    publicBaseUrl,
    dashboard: { sessionIdleMs: Number(vars.DASHBOARD_SESSION_IDLE_MS), secureCookies: vars.NODE_ENV === 'production' || publicBaseUrl.startsWith('https:') },
    smtp: vars.SMTP_URL === undefined ? undefined : { url: vars.SMTP_URL, from: vars.SMTP_FROM ?? `Cartas <no-reply@${new URL(publicBaseUrl).hostname}>` },
  }
}

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
