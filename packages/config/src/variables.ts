import { isIP } from 'node:net'
import proxyAddr from '@fastify/proxy-addr'
import {
  Refusal,
  directory,
  flag,
  integer,
  list,
  matching,
  milliseconds,
  oneOf,
  parser,
  port,
  refine,
  text,
  timer,
  token,
  url,
  variable,
  variablesOf,
  type Section,
  type Variable,
} from './parsers.js'

/**
 * Every variable the processes read, once each: its name, how its text is read (and the rule a
 * refusal states), its default, and what docs/operations.md says of it (`npm run docs:config`
 * writes that table from here). Grouped as the configuration nests them: each key is the
 * configuration's, and the loader derives the few values that depend on others.
 */

const HOUR_MS = 3_600_000
const DAY_MS = 24 * HOUR_MS

export const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = (typeof logLevels)[number]

/** PRINTER: what the production worker makes of a letter. */
export const printerModes = ['spool', 'plotter', 'batch'] as const
export type PrinterMode = (typeof printerModes)[number]

/**
 * A minute: how long an admitted webhook delivery keeps its endpoint's slot before a worker starts
 * it (WEBHOOK_QUEUED_LEASE_MS). It is what a lost job costs its endpoint, one slot for at most this
 * long, and how long a job may wait in the queue before it is given again. The queue is short: the
 * caps per endpoint and per account admit only what the workers can start soon, and a job that does
 * wait past it costs an extra row lookup (it finds its lease gone and sends nothing), never a
 * second send.
 */
export const QUEUED_LEASE_MS = 60_000

/** Where the operator CLI finds the gateway when LETTERS_URL is unset: the gateway's own HOST and PORT by default. */
export const DEFAULT_LETTERS_URL = 'http://127.0.0.1:3000'

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

const proxy = () => parser('must be an address or a CIDR range', (raw) => (isAddressOrRange(raw) ? raw : new Refusal()))

/** Where people reach the service: scheme and host, nothing after. */
const origin = () =>
  refine(
    matching(/^https?:\/\/[^/?#@\s]+$/, 'must be the scheme and host people reach the service at, without a path (e.g. https://cartas.example.com)'),
    (value) => (URL.canParse(value) ? value : new Refusal()),
  )

/** COUNTRY=credits pairs, `*` for every other country. */
const letterCosts = () =>
  refine(
    matching(
      /^([A-Z]{2}|\*)=[1-9][0-9]{0,5}(,([A-Z]{2}|\*)=[1-9][0-9]{0,5})*$/,
      'must list COUNTRY=credits pairs separated by commas, with *=credits for every other country (e.g. ES=3,*=5)',
    ),
    (value) => {
      const { ['*']: otherwise, ...byCountry } = Object.fromEntries(
        value.split(',').map((pair) => [pair.slice(0, pair.indexOf('=')), Number(pair.slice(pair.indexOf('=') + 1))]),
      )
      return otherwise === undefined ? new Refusal() : { byCountry, otherwise }
    },
  )

/** One line of G-code words (M3, M3 S90, M280 P0 S60): never a newline that could smuggle moves in. */
const gcodeLine = (example: string) => matching(/^[A-Z][-+]?[0-9.]+( [A-Z][-+]?[0-9.]+)*$/, `must be one line of G-code words (e.g. ${example})`)

const feed = () => integer({ min: 1, max: 999_999, noun: 'a feed rate in mm/min' })

/** The envelope's code has 0.3 mm bars and spaces: a wider line would close its narrow spaces. */
const penWidth = () => refine(matching(/^0\.([12][0-9]?|30?)$/, "must be the width of the pen's line in millimetres, from 0.1 to 0.3 (e.g. 0.25)"), Number)

/** What an idle connection would suffer from a keep-alive past Node's longest timer. */
const keepAliveTooLong = (value: number) =>
  `past it Node cuts the connection's timer short, and an idle connection would close sooner than this keep-alive, which its answers advertise (Keep-Alive: timeout=${Math.floor(value / 1000)})`

export const variables = {
  nodeEnv: variable({
    env: 'NODE_ENV',
    parse: text('must be a string'),
    default: 'development',
    describe: '`production` turns off the demo seed (`SEED_DEMO`) and plain `http://` webhook URLs (`WEBHOOK_ALLOW_HTTP`) unless they are set',
  }),
  databaseUrl: variable({
    env: 'DATABASE_URL',
    parse: url(['postgres', 'postgresql']),
    default: 'postgres://postgres@127.0.0.1:5432/letters',
    describe:
      'Postgres. `npm run migrate` creates the database if it is missing; the processes only check its schema ([Upgrades](#upgrades)). A `?max=` in it is refused: the pool size is `DATABASE_POOL_MAX`',
  }),
  databasePoolMax: variable({
    env: 'DATABASE_POOL_MAX',
    parse: integer({ min: 1, max: 9999, hint: "connections in each process's pool" }),
    default: '10',
    describe: "Connections in each process's pool (1–9999). Every replica of every process holds up to this many: see [Connections](#connections)",
  }),
  databaseStartupWaitMs: variable({
    env: 'DATABASE_STARTUP_WAIT_MS',
    parse: milliseconds({ min: 0 }),
    default: '120000',
    describe:
      'At start, how long a process keeps trying to reach Postgres (refused, every connection slot taken, still starting) before it exits 1 with one line saying why',
  }),
  redisUrl: variable({
    env: 'REDIS_URL',
    parse: url(['redis', 'rediss']),
    default: 'redis://127.0.0.1:6379',
    describe: 'Redis (queues, rate limits, key revocations)',
  }),
  host: variable({ env: 'HOST', parse: text(), default: '127.0.0.1', describe: "Address the gateway, and each worker's metrics port, listen on" }),
  port: variable({ env: 'PORT', parse: port(), default: '3000', describe: 'Port the gateway listens on' }),
  adminToken: variable({
    env: 'ADMIN_TOKEN',
    parse: token(),
    secret: true,
    describe: 'Bearer token of the admin API (16+ characters); without it every `/admin` route answers 404',
  }),
  floorToken: variable({
    env: 'FLOOR_TOKEN',
    parse: token(),
    secret: true,
    describe:
      "Token of the floor's page and scanner, `/floor` (16+ characters, different from `ADMIN_TOKEN`); opens nothing else; without it every `/floor` route answers 404. See [floor](floor.md#the-floors-page)",
  }),
  metricsToken: variable({
    env: 'METRICS_TOKEN',
    parse: token(),
    secret: true,
    describe:
      "A read-only token for every `/metrics`, the gateway's and each worker's (16+ characters, different from the admin and floor tokens), for Prometheus; set, it replaces the admin token there. Unset: the gateway's takes the admin token, a worker's is open",
  }),
  rateLimit: {
    max: variable({ env: 'RATE_LIMIT_MAX', parse: integer({ min: 1 }), default: '150', describe: 'Requests allowed per window and API key' }),
    windowMs: variable({ env: 'RATE_LIMIT_WINDOW_MS', parse: milliseconds({ min: 1 }), default: '5000', describe: 'Rate-limit window' }),
  },
  authFailures: {
    max: variable({
      env: 'AUTH_FAILURES_MAX',
      parse: integer({ min: 1 }),
      default: '10',
      describe:
        'Failed authentications allowed per client IP and window, counted apart for API keys (malformed, unknown, revoked), the admin token (admin API, `/metrics`, ops password), the floor token and dashboard passwords (which are also counted per email, from any address); then 429, even for a right token or password. A valid API key always passes',
    }),
    windowMs: variable({
      env: 'AUTH_FAILURES_WINDOW_MS',
      parse: milliseconds({ min: 1 }),
      default: '60000',
      describe: "The window of `AUTH_FAILURES_MAX`, opened by an address's first failure",
    }),
  },
  publicBaseUrl: variable({
    env: 'PUBLIC_BASE_URL',
    parse: origin(),
    shown: '`http://HOST:PORT` (`localhost` when `HOST` is `0.0.0.0`)',
    describe:
      'Gateway and production worker: where people reach the service, scheme and host only (`https://cartas.example.com`). Invitation links start with it, a dashboard request that changes something must come from this origin (or the one it was sent to), and the production worker prints it in each QR code (`PUBLIC_BASE_URL/q/{code}`): set it on every process, before the first letter with a `trackingUrl` is printed',
  }),
  dashboard: {
    sessionIdleMs: variable({
      env: 'DASHBOARD_SESSION_IDLE_MS',
      parse: milliseconds({ min: 1000, max: 99_999_999_999 }),
      default: String(12 * HOUR_MS),
      note: '12 hours',
      describe: 'Gateway: a dashboard session unused this long has ended; the person signs in again',
    }),
  },
  smtp: {
    url: variable({
      env: 'SMTP_URL',
      parse: url(['smtp', 'smtps'], 'smtps://user:password@smtp.example.com'),
      secret: true,
      describe:
        'Gateway: the mail server invitations are sent through (`smtps://user:password@smtp.example.com`). Without it nothing is emailed: whoever invites gets the link to pass on. Its value is never printed',
    }),
    from: variable({
      env: 'SMTP_FROM',
      parse: matching(/^[^\r\n]+@[^\r\n]+$/, 'must be one line with an email address (e.g. Cartas <no-reply@example.com>)'),
      shown: '`Cartas <no-reply@host of PUBLIC_BASE_URL>`',
      describe: 'The sender of those emails',
    }),
  },
  personalDataRetentionMs: variable({
    env: 'PERSONAL_DATA_RETENTION_MS',
    parse: milliseconds({ min: 1, hint: '7776000000 is 90 days' }),
    default: String(90 * DAY_MS),
    note: '90 days',
    describe:
      'Gateway: a letter `printed`, `mailed`, `cancelled`, `address_rejected` or `failed` for this long loses its personal data and files ([API guide](api-guide.md#personal-data-retention-and-erasure)); the eraser runs a tenth of this apart (0.1 s–1 min)',
  }),
  trustProxy: variable({
    env: 'TRUST_PROXY',
    parse: list(proxy(), "must list the proxies' addresses or CIDR ranges, separated by commas (e.g. 10.244.0.0/16,127.0.0.1)"),
    describe:
      'Gateway: the proxies in front of it (an Ingress controller, a load balancer), as addresses or CIDR ranges separated by commas (`10.244.0.0/16,127.0.0.1`). Only a request from one of them has its client read from `X-Forwarded-For`; from anyone else the header is ignored. Without it the client is the TCP peer. `infra/k8s` sets the pod network ([Kubernetes](#kubernetes))',
  }),
  http: {
    requestTimeoutMs: variable({
      env: 'HTTP_REQUEST_TIMEOUT_MS',
      parse: timer(),
      default: '30000',
      describe:
        'Gateway: the longest a client may take to send a whole request (headers and body), then 408 and the connection closes; also how long a socket may stay silent while a request is under way (not while it is idle between requests: that is `HTTP_KEEP_ALIVE_TIMEOUT_MS`). Every request is answered before that: a read or a creation not decided by this time less a quarter of it (at most 5 s: 25 s by default) is answered 503 with `Retry-After`, and a creation answered so is never stored (see [Deadlines](api-guide.md#deadlines))',
    }),
    headersTimeoutMs: variable({
      env: 'HTTP_HEADERS_TIMEOUT_MS',
      parse: timer(),
      default: '10000',
      describe:
        "Gateway: the longest a client may take to send a request's headers, from opening the connection, or on a reused connection from the request's first byte (the time it sat idle before does not count); capped at `HTTP_REQUEST_TIMEOUT_MS`",
    }),
    keepAliveTimeoutMs: variable({
      env: 'HTTP_KEEP_ALIVE_TIMEOUT_MS',
      parse: timer(keepAliveTooLong),
      default: '75000',
      describe:
        "Gateway: how long an idle connection stays open for the next request; every answer advertises it (`Keep-Alive: timeout=75`), and Node closes the connection no sooner. It must be longer than whatever reuses the connections keeps them idle: the proxy in front (ingress-nginx's `upstream-keepalive-timeout` and AWS load balancers' idle timeout are 60 s; Google Cloud's load balancers keep them 600 s: set `620000` behind one), or the gateway closes a connection the proxy then sends a request on, which fails unanswered (a 502; a POST is not retried; a pooled client such as undici's `fetch` gets \"other side closed\"). The request and headers timeouts may be shorter: they start at a request's first byte. At most `2147483647` (Node's longest timer), like the two timeouts above: a process refuses to start with more",
    }),
    maxConnections: variable({
      env: 'HTTP_MAX_CONNECTIONS',
      parse: integer({ min: 1 }),
      default: '10000',
      describe:
        "Gateway: open client sockets at most; past it new ones are closed at once. Keep it below the process's open-file limit (`ulimit -n`) less what the Postgres and Redis connections need. An idle connection holds its place for `HTTP_KEEP_ALIVE_TIMEOUT_MS` (75 s): clients that connect directly, each for one request, hold places fifteen times longer than with Node's 5 s, which a proxy in front (a few pooled connections) does not",
    }),
  },
  databaseStatementTimeoutMs: variable({
    env: 'DATABASE_STATEMENT_TIMEOUT_MS',
    parse: milliseconds({ min: 1 }),
    shown: '`10000`, or less to fit',
    describe:
      'Longest one SQL statement may run, lock waits included (every process). It may not exceed half the time a request has to be decided (`HTTP_REQUEST_TIMEOUT_MS` less a quarter, at most 5 s; 12.5 s by default): a process refuses to start with it set higher, and the default shrinks to fit',
  }),
  logLevel: variable({
    env: 'LOG_LEVEL',
    parse: oneOf(logLevels),
    default: 'info',
    describe:
      "`fatal` `error` `warn` `info` `debug` `trace` `silent`. At `info` the gateway logs every request but the probes answered 2xx (`/healthz`, `/readyz`, `/metrics`), which are at `debug`; the workers' `/healthz` and `/metrics` log nothing",
  }),
  queuePrefix: variable({
    env: 'QUEUE_PREFIX',
    parse: matching(
      /^(\{[A-Za-z0-9_-]+\}[A-Za-z0-9_-]*|[A-Za-z0-9_-]+)$/,
      'must contain only letters, digits, "_" and "-", optionally after a Redis Cluster hash tag in braces (e.g. {letters})',
    ),
    default: 'letters',
    describe:
      "Prefix of every Redis key the service writes (BullMQ's queues, rate limits, authentication failures) and of its key-revocation channel: letters, digits, `_` and `-`, optionally after a Redis Cluster hash tag in braces (`{letters}`, `{letters}-eu`), which puts every key in one slot, as a cluster requires (see [Limits](#limits)); `infra/k8s` uses `{letters}`. The KEDA scalers read `<QUEUE_PREFIX>:<queue>:wait`: change them with it",
  }),
  seedDemo: variable({
    env: 'SEED_DEMO',
    parse: flag(),
    shown: '`true` when `HOST` is a loopback address (`127.0.0.1`, `::1`, `localhost`) and `NODE_ENV` is not `production`; `false` otherwise',
    describe: 'Create the demo account on an empty database (its API key is printed once, to the log: set it explicitly to have that on a reachable host)',
  }),
  letterCosts: variable({
    env: 'LETTER_COSTS',
    parse: letterCosts(),
    default: 'ES=3,*=5',
    describe: 'Credits per letter by destination country; `*` for every other',
  }),
  artifactsDir: variable({
    env: 'ARTIFACTS_DIR',
    parse: directory(),
    default: 'var/artifacts',
    describe:
      "The artifact store, shared by the production worker and the gateway: every rendered print file (`<letterId>/card.pdf`, `<letterId>/envelope.pdf`) and each letter's final proof (`<letterId>/proof-r<n>.<m>.pdf`)",
  }),
  proofs: {
    rateLimit: {
      max: variable({
        env: 'PROOF_RATE_LIMIT_MAX',
        parse: integer({ min: 1 }),
        default: '10',
        describe: 'Proofs (`GET /cards/{id}/proof`) allowed per window and API key, counted apart from `RATE_LIMIT_MAX`',
      }),
      windowMs: variable({ env: 'PROOF_RATE_LIMIT_WINDOW_MS', parse: milliseconds({ min: 1 }), default: '60000', describe: "The proof limit's window" }),
    },
    renderThreads: variable({
      env: 'RENDER_THREADS',
      parse: integer({ min: 1, max: 999 }),
      shown: 'cores − 1 (at least 1)',
      describe: 'Gateway: worker threads that draw proofs, off the event loop',
    }),
    renderQueueMax: variable({
      env: 'RENDER_QUEUE_MAX',
      parse: integer({ min: 0 }),
      default: '16',
      describe: 'Gateway: proofs that may wait for a render thread; past it a proof is answered 503 at once',
    }),
    renderPriority: variable({
      env: 'RENDER_PRIORITY',
      parse: oneOf(['below-normal', 'normal']),
      default: 'below-normal',
      describe:
        "Gateway: the render threads' CPU priority (Linux): `below-normal` lets the event loop answering requests go first when cores are short, and a proof waits; `normal` shares the cores evenly (the tests, on a machine busy with other files)",
    }),
    renderWarmUp: variable({
      env: 'RENDER_WARM_UP',
      parse: flag(),
      default: 'true',
      describe:
        "Gateway: each render thread draws sample proofs in every font before its first proof, so a client's first proofs are as fast as the later ones (a few seconds of CPU at start, at below-normal priority); `false` skips it",
    }),
  },
  eventLoopMaxDelayMs: variable({
    env: 'EVENT_LOOP_MAX_DELAY_MS',
    parse: milliseconds({ min: 1 }),
    default: '1000',
    describe: 'Gateway: past this event-loop delay (mean over each second) every request but `/healthz` is answered 503',
  }),
  spoolDir: variable({
    env: 'SPOOL_DIR',
    parse: directory(),
    default: 'var/spool',
    describe: "Production worker, default printer: the directory the floor's print server watches",
  }),
  printCommand: variable({
    env: 'PRINT_COMMAND',
    parse: matching(/\{file\}/, 'must be a command containing {file}, where the path of the print file goes'),
    describe:
      "Production worker: a command run once per print file instead of the spool copy, `{file}` replaced by the file's path (e.g. `lp -d floor-1 {file}`); a non-zero exit fails the attempt; the command, and whatever it starts in its process group, dies with the worker",
  }),
  printTimeoutMs: variable({
    env: 'PRINT_TIMEOUT_MS',
    parse: milliseconds({ min: 1 }),
    default: '120000',
    describe: 'How long one `PRINT_COMMAND` may run before the attempt fails (and how long another run of the same letter waits for it)',
  }),
  printer: variable({
    env: 'PRINTER',
    parse: oneOf(printerModes),
    default: 'spool',
    describe:
      'Production worker: what the floor prints with. `spool`: a card and an envelope PDF per letter, into `SPOOL_DIR` or through `PRINT_COMMAND`; `plotter`: SVG and G-code of single strokes per card and envelope, handed over the same way ([Pen plotter](floor.md#pen-plotter)); `batch`: letters gathered in presorted batches of three files ([Batch printing](floor.md#batch-printing)). The gateway reads it too, for the proof of a letter not produced yet',
  }),
  plotter: {
    penUp: variable({
      env: 'PLOTTER_PEN_UP',
      parse: gcodeLine('M5 or M3 S30'),
      default: 'M5',
      describe: '`PRINTER=plotter`: the G-code line that lifts the pen (one line of words, e.g. `M3 S30` for a servo lift)',
    }),
    penDown: variable({
      env: 'PLOTTER_PEN_DOWN',
      parse: gcodeLine('M3 or M3 S90'),
      default: 'M3',
      describe: '`PRINTER=plotter`: the G-code line that sets the pen down (e.g. `M3 S90`)',
    }),
    drawFeed: variable({
      env: 'PLOTTER_DRAW_FEED',
      parse: feed(),
      default: '2000',
      describe: '`PRINTER=plotter`: feed with the pen down, mm/min (33 mm/s: a gel or fineliner pen lays an even, unbroken line on card at that speed)',
    }),
    travelFeed: variable({
      env: 'PLOTTER_TRAVEL_FEED',
      parse: feed(),
      default: '6000',
      describe:
        '`PRINTER=plotter`: feed with the pen up, mm/min (100 mm/s: well within what a GRBL pen plotter or an AxiDraw-class machine moves without losing steps)',
    }),
    penWidth: variable({
      env: 'PLOTTER_PEN_WIDTH_MM',
      parse: penWidth(),
      default: '0.3',
      describe:
        "`PRINTER=plotter`: the width of the pen's line, mm, 0.1 to 0.3: how far apart the lines that fill the envelope's bars are, and how wide the SVG and the proof draw a stroke. The code's narrowest bars and spaces are 0.3 mm: a wider line would close the spaces, so 0.3 is the most accepted. Set the same on the gateway (its proofs draw the bars)",
    }),
  },
  batch: {
    maxLetters: variable({
      env: 'BATCH_MAX_LETTERS',
      parse: integer({ min: 1, max: 9999 }),
      default: '100',
      describe: '`PRINTER=batch`: a batch closes when it holds this many letters (1–9999)',
    }),
    maxWaitMs: variable({
      env: 'BATCH_MAX_WAIT_MS',
      parse: milliseconds({ min: 1 }),
      default: '300000',
      describe: '`PRINTER=batch`: or this long after its first letter, whichever comes first. Keep it well below `RECONCILE_AFTER_MS`',
    }),
  },
  floorCountry: variable({
    env: 'FLOOR_COUNTRY',
    parse: matching(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 country code in capitals (e.g. ES)'),
    default: 'ES',
    describe: "The floor's country (ISO 3166-1 alpha-2): envelopes to it carry no country line, envelopes abroad do (every `PRINTER` mode, and the proofs)",
  }),
  metricsPort: variable({
    env: 'METRICS_PORT',
    parse: port(),
    shown: '`9101` address worker, `9102` production worker, `9103` webhook worker',
    describe:
      'Workers: port of `/metrics` and `/healthz` (on `HOST`). Under `npm start` each worker gets a free port of its own instead, printed as it starts, so that two stacks on one machine do not collide',
  }),
  intakeConcurrentBatches: variable({
    env: 'INTAKE_CONCURRENT_BATCHES',
    parse: integer({ min: 1, max: 99 }),
    default: '2',
    describe:
      'Gateway: group-commit transactions under way at once; the letters of requests arriving meanwhile are charged and stored together in the next one',
  }),
  reconcileAfterMs: variable({
    env: 'RECONCILE_AFTER_MS',
    parse: milliseconds({ min: 1 }),
    default: '600000',
    describe:
      "Address worker's reconciler: a letter in `received`, `ready_for_print` or `printing` without progress for this long, whose job Redis no longer has, is queued again",
  }),
  reconcileIntervalMs: variable({
    env: 'RECONCILE_INTERVAL_MS',
    parse: milliseconds({ min: 1 }),
    default: '30000',
    describe: 'How often the reconciler looks for such letters',
  }),
  webhooks: {
    allowPrivateUrls: variable({
      env: 'WEBHOOK_ALLOW_PRIVATE_URLS',
      parse: flag(),
      default: 'false',
      describe:
        'Gateway and webhook worker: `true` lets endpoints on loopback, private, link-local, unique-local and metadata addresses be registered and called (local development, tests); never in production',
    }),
    timeoutMs: variable({
      env: 'WEBHOOK_TIMEOUT_MS',
      parse: milliseconds({ min: 1 }),
      default: '10000',
      describe: 'Webhook worker: the longest one delivery may take (connect, send, answer); then it counts as failed with `timeout`',
    }),
    retryScheduleMs: variable({
      env: 'WEBHOOK_RETRY_SCHEDULE',
      parse: list(milliseconds({ min: 0 }), 'must list delays in milliseconds separated by commas (e.g. 5000,30000,120000)'),
      default: '5000,30000,120000,600000,3600000,21600000,86400000',
      describe: 'Webhook worker: the delays (ms) before each retry of a failed delivery, ±20% jitter; after the last one the event is `failed`',
    }),
    concurrency: variable({
      env: 'WEBHOOK_CONCURRENCY',
      parse: integer({ min: 1, max: 9999 }),
      default: '100',
      describe: 'Webhook worker: deliveries in flight at once per process',
    }),
    maxInFlightPerEndpoint: variable({
      env: 'WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT',
      parse: integer({ min: 1, max: 9999 }),
      default: '10',
      describe:
        'Webhook worker: deliveries of one endpoint queued or being sent at once, across every webhook worker; the rest wait in Postgres. Keep `WEBHOOK_CONCURRENCY` × replicas well above this × the receivers that may be down at once',
    }),
    maxInFlightPerAccount: variable({
      env: 'WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT',
      parse: integer({ min: 1, max: 9999 }),
      default: '20',
      describe:
        "Webhook worker: deliveries of one account queued or being sent at once, over all its endpoints and both modes; an account whose every endpoint is dead or slow holds at most this many of the workers' slots. Keep it well below `WEBHOOK_CONCURRENCY` × replicas",
    }),
    queuedLeaseMs: variable({
      env: 'WEBHOOK_QUEUED_LEASE_MS',
      parse: milliseconds({ min: 1000, max: 999_999_999 }),
      default: String(QUEUED_LEASE_MS),
      describe:
        "Webhook worker: how long an admitted delivery keeps its endpoint's slot before a worker starts it. A job lost with Redis, or whose worker died before starting it, frees its slot after this, and its event is admitted again; the job, if it still runs, finds its lease gone and sends nothing. Shorter frees lost slots sooner; it must stay well above the time a job waits in the queue",
    }),
    allowHttp: variable({
      env: 'WEBHOOK_ALLOW_HTTP',
      parse: flag(),
      shown: '`true`; `false` when `NODE_ENV=production`',
      describe:
        'Gateway and webhook worker: whether an endpoint may have a plain `http://` URL; otherwise it is refused with 400, and checked again at every delivery: an `http://` endpoint registered while it was allowed gets nothing (each attempt recorded as failed, `refused_address`)',
    }),
  },
  clockIntervalMs: variable({
    env: 'CLOCK_INTERVAL_MS',
    parse: milliseconds({ min: 1 }),
    default: '1000',
    describe: "Gateway's letter clock: how often it releases scheduled letters whose `sendAt` has come and marks test letters `mailed`",
  }),
  testMailedAfterMs: variable({
    env: 'TEST_MAILED_AFTER_MS',
    parse: milliseconds({ min: 0 }),
    default: '60000',
    describe: 'A test letter is marked `mailed` this long after it was `printed`',
  }),
} satisfies Section

/**
 * The operator CLI's own variables (`npm run admin`), read by `cliEnvironment` and by no service,
 * so that a service never refuses to start over one. The CLI also reads ADMIN_TOKEN and
 * DATABASE_URL, by their declarations above.
 */
export const cliVariables = {
  lettersUrl: variable({
    env: 'LETTERS_URL',
    parse: url(['http', 'https'], DEFAULT_LETTERS_URL),
    default: DEFAULT_LETTERS_URL,
    describe:
      'Operator CLI (`npm run admin`) only: the gateway whose admin API it talks to, with `ADMIN_TOKEN` as its bearer token (`npm run migrate` uses `DATABASE_URL` instead). No service reads it',
  }),
} satisfies Section

/** Every variable declared, the services' then the CLI's: the rows of the documentation's table, in this order. */
export function* declaredVariables(): Generator<Variable<unknown>> {
  yield* variablesOf(variables)
  yield* variablesOf(cliVariables)
}
