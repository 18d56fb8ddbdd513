import { describe, expect, it } from 'vitest'
import { resolve } from 'node:path'
import { ConfigError, cliEnvironment, loadConfig, requestBudget } from '../src/index.js'

describe('loadConfig', () => {
  it('serves a local run with the documented defaults', () => {
    expect(loadConfig({})).toEqual({
      nodeEnv: 'development',
      databaseUrl: 'postgres://postgres@127.0.0.1:5432/letters',
      databaseStatementTimeoutMs: 10_000,
      databasePoolMax: 10,
      databaseStartupWaitMs: 120_000,
      redisUrl: 'redis://127.0.0.1:6379',
      host: '127.0.0.1',
      port: 3000,
      adminToken: undefined,
      floorToken: undefined,
      metricsToken: undefined,
      rateLimit: { max: 150, windowMs: 5000 },
      logLevel: 'info',
      queuePrefix: 'letters',
      seedDemo: true,
      letterCosts: { byCountry: { ES: 3 }, otherwise: 5 },
      artifactsDir: resolve('var/artifacts'),
      spoolDir: resolve('var/spool'),
      printCommand: undefined,
      printTimeoutMs: 120_000,
      printer: 'spool',
      plotter: { penUp: 'M5', penDown: 'M3', drawFeed: 2000, travelFeed: 6000, penWidth: 0.3 },
      batch: { maxLetters: 100, maxWaitMs: 300_000 },
      floorCountry: 'ES',
      reconcileAfterMs: 600_000,
      reconcileIntervalMs: 30_000,
      http: { requestTimeoutMs: 30_000, headersTimeoutMs: 10_000, keepAliveTimeoutMs: 75_000, maxConnections: 10_000 },
      proofs: { rateLimit: { max: 10, windowMs: 60_000 }, renderThreads: undefined, renderQueueMax: 16, renderWarmUp: true, renderPriority: 'below-normal' },
      eventLoopMaxDelayMs: 1000,
      authFailures: { max: 10, windowMs: 60_000 },
      trustProxy: [],
      metricsPort: undefined,
      intakeConcurrentBatches: 2,
      webhooks: {
        allowPrivateUrls: false,
        timeoutMs: 10_000,
        retryScheduleMs: [5000, 30_000, 120_000, 600_000, 3_600_000, 21_600_000, 86_400_000],
        concurrency: 100,
        maxInFlightPerEndpoint: 10,
        maxInFlightPerAccount: 20,
        queuedLeaseMs: 60_000,
        allowHttp: true,
      },
      clockIntervalMs: 1000,
      testMailedAfterMs: 60_000,
      personalDataRetentionMs: 90 * 86_400_000,
      publicBaseUrl: 'http://127.0.0.1:3000',
      dashboard: { sessionIdleMs: 12 * 3_600_000, secureCookies: false },
      smtp: undefined,
    })
  })

  it('reads the dashboard settings: the public origin, the idle time of a session, the mail server, and secure cookies in production', () => {
    const config = loadConfig({
      NODE_ENV: 'production',
      PUBLIC_BASE_URL: 'https://cartas.example.com',
      DASHBOARD_SESSION_IDLE_MS: '60000',
      SMTP_URL: 'smtps://user:secret@smtp.example.com',
    })
    expect(config.publicBaseUrl).toBe('https://cartas.example.com')
    expect(config.dashboard).toEqual({ sessionIdleMs: 60_000, secureCookies: true })
    expect(config.smtp).toEqual({ url: 'smtps://user:secret@smtp.example.com', from: 'Cartas <no-reply@cartas.example.com>' })
    expect(loadConfig({ PORT: '4010' }).publicBaseUrl).toBe('http://127.0.0.1:4010')
    expect(loadConfig({ HOST: '0.0.0.0' }).publicBaseUrl).toBe('http://localhost:3000')
    expect(loadConfig({ HOST: '::1' }).publicBaseUrl).toBe('http://[::1]:3000')
  })

  it('reads how long personal data is kept, and refuses a retention that is not a positive number of milliseconds', () => {
    expect(loadConfig({ PERSONAL_DATA_RETENTION_MS: '2000' }).personalDataRetentionMs).toBe(2000)
    expect(() => loadConfig({ PERSONAL_DATA_RETENTION_MS: '0' })).toThrow('PERSONAL_DATA_RETENTION_MS=0: must be a positive integer of milliseconds')
    expect(() => loadConfig({ PERSONAL_DATA_RETENTION_MS: '90d' })).toThrow('PERSONAL_DATA_RETENTION_MS=90d: must be a positive integer of milliseconds')
  })

  it('reads the letter clock settings, and refuses a clock that never ticks', () => {
    expect(loadConfig({ CLOCK_INTERVAL_MS: '250', TEST_MAILED_AFTER_MS: '0' })).toMatchObject({ clockIntervalMs: 250, testMailedAfterMs: 0 })
    expect(() => loadConfig({ CLOCK_INTERVAL_MS: '0' })).toThrow('CLOCK_INTERVAL_MS=0: must be a positive integer of milliseconds')
    expect(() => loadConfig({ TEST_MAILED_AFTER_MS: '-1' })).toThrow('TEST_MAILED_AFTER_MS=-1: must be a non-negative integer of milliseconds')
  })

  it('reads the webhook settings, and refuses a schedule that is not a list of delays', () => {
    const config = loadConfig({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_TIMEOUT_MS: '2500', WEBHOOK_RETRY_SCHEDULE: '100,200', WEBHOOK_CONCURRENCY: '20' })
    expect(config.webhooks).toEqual({
      allowPrivateUrls: true,
      timeoutMs: 2500,
      retryScheduleMs: [100, 200],
      concurrency: 20,
      maxInFlightPerEndpoint: 10,
      maxInFlightPerAccount: 20,
      queuedLeaseMs: 60_000,
      allowHttp: true,
    })
    expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: '5s,30s' })).toThrow('WEBHOOK_RETRY_SCHEDULE=5s,30s: must list delays')
  })

  it('caps the deliveries in flight per endpoint, 10 unless told otherwise, and refuses a cap that is not a positive integer', () => {
    expect(loadConfig({ WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: '3' }).webhooks.maxInFlightPerEndpoint).toBe(3)
    for (const bad of ['0', '-1', '2.5', 'ten', '10000']) {
      expect(() => loadConfig({ WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: bad })).toThrow(
        `WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT=${bad}: must be an integer from 1 to 9999`,
      )
    }
  })

  it('keeps an admitted delivery’s slot a minute unless told otherwise, and refuses a lease under a second or not a number', () => {
    expect(loadConfig({}).webhooks.queuedLeaseMs).toBe(60_000)
    expect(loadConfig({ WEBHOOK_QUEUED_LEASE_MS: '10000' }).webhooks.queuedLeaseMs).toBe(10_000)
    for (const bad of ['0', '999', '-1000', '2.5', '1m', '1000000000']) {
      expect(() => loadConfig({ WEBHOOK_QUEUED_LEASE_MS: bad })).toThrow(
        `WEBHOOK_QUEUED_LEASE_MS=${bad}: must be an integer of milliseconds from 1000 to 999999999`,
      )
    }
  })

  it('caps the deliveries in flight per account, 20 unless told otherwise, and refuses a cap that is not a positive integer', () => {
    expect(loadConfig({}).webhooks.maxInFlightPerAccount).toBe(20)
    expect(loadConfig({ WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT: '5' }).webhooks.maxInFlightPerAccount).toBe(5)
    for (const bad of ['0', '-1', '2.5', 'twenty', '10000']) {
      expect(() => loadConfig({ WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT: bad })).toThrow(
        `WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT=${bad}: must be an integer from 1 to 9999`,
      )
    }
  })

  it('allows http:// webhook URLs outside production, and in production only with WEBHOOK_ALLOW_HTTP=true', () => {
    expect(loadConfig({}).webhooks.allowHttp).toBe(true)
    expect(loadConfig({ NODE_ENV: 'production' }).webhooks.allowHttp).toBe(false)
    expect(loadConfig({ NODE_ENV: 'production', WEBHOOK_ALLOW_HTTP: 'true' }).webhooks.allowHttp).toBe(true)
    expect(loadConfig({ WEBHOOK_ALLOW_HTTP: 'false' }).webhooks.allowHttp).toBe(false)
    expect(() => loadConfig({ WEBHOOK_ALLOW_HTTP: 'yes' })).toThrow('WEBHOOK_ALLOW_HTTP=yes: must be "true" or "false"')
  })

  it('reads the floor: where files go and how they are printed', () => {
    const config = loadConfig({ ARTIFACTS_DIR: '/srv/letters/artifacts', SPOOL_DIR: 'spool', PRINT_COMMAND: 'lp -d floor-1 {file}', PRINT_TIMEOUT_MS: '5000' })
    expect(config.artifactsDir).toBe('/srv/letters/artifacts')
    expect(config.spoolDir).toBe(resolve('spool'))
    expect(config.printCommand).toBe('lp -d floor-1 {file}')
    expect(config.printTimeoutMs).toBe(5000)
  })

  it("reads batch printing: the mode, when a batch closes and the floor's country", () => {
    expect(loadConfig({ PRINTER: 'batch', BATCH_MAX_LETTERS: '250', BATCH_MAX_WAIT_MS: '60000', FLOOR_COUNTRY: 'PT' })).toMatchObject({
      printer: 'batch',
      batch: { maxLetters: 250, maxWaitMs: 60_000 },
      floorCountry: 'PT',
    })
  })

  it("prints to the spool by default, and reads the pen plotter's commands and feeds", () => {
    const defaults = loadConfig({})
    expect(defaults.printer).toBe('spool')
    expect(defaults.plotter).toEqual({ penUp: 'M5', penDown: 'M3', drawFeed: 2000, travelFeed: 6000, penWidth: 0.3 })
    expect(loadConfig({ PRINTER: 'batch' }).printer).toBe('batch')
    const config = loadConfig({
      PRINTER: 'plotter',
      PLOTTER_PEN_UP: 'M3 S30',
      PLOTTER_PEN_DOWN: 'M3 S90',
      PLOTTER_DRAW_FEED: '1500',
      PLOTTER_TRAVEL_FEED: '8000',
      PLOTTER_PEN_WIDTH_MM: '0.25',
    })
    expect(config.printer).toBe('plotter')
    expect(config.plotter).toEqual({ penUp: 'M3 S30', penDown: 'M3 S90', drawFeed: 1500, travelFeed: 8000, penWidth: 0.25 })
    expect(loadConfig({ PLOTTER_PEN_WIDTH_MM: '0.3' }).plotter.penWidth).toBe(0.3)
  })

  it('turns the demo seed off in production unless asked for', () => {
    expect(loadConfig({ NODE_ENV: 'production' }).seedDemo).toBe(false)
    expect(loadConfig({ NODE_ENV: 'production', SEED_DEMO: 'true' }).seedDemo).toBe(true)
    expect(loadConfig({ SEED_DEMO: 'false' }).seedDemo).toBe(false)
    // Reachable from elsewhere, the demo account (whose key goes to the log) waits to be asked for.
    for (const host of ['0.0.0.0', '::', '10.0.0.5']) {
      expect(loadConfig({ HOST: host }).seedDemo, host).toBe(false)
      expect(loadConfig({ HOST: host, SEED_DEMO: 'true' }).seedDemo, host).toBe(true)
    }
    for (const host of ['127.0.0.1', '127.0.1.1', '::1', 'localhost']) expect(loadConfig({ HOST: host }).seedDemo, host).toBe(true)
  })

  it('reads numbers and the admin token', () => {
    const config = loadConfig({ PORT: '8080', RATE_LIMIT_MAX: '10', RATE_LIMIT_WINDOW_MS: '1000', ADMIN_TOKEN: 'a-very-long-admin-token' })
    expect(config.port).toBe(8080)
    expect(config.rateLimit).toEqual({ max: 10, windowMs: 1000 })
    expect(config.adminToken).toBe('a-very-long-admin-token')
  })

  it('reads the floor token apart from the admin token, and refuses the admin token as the floor token without printing it', () => {
    expect(loadConfig({ ADMIN_TOKEN: 'a-very-long-admin-token', FLOOR_TOKEN: 'a-very-long-floor-token' })).toMatchObject({
      adminToken: 'a-very-long-admin-token',
      floorToken: 'a-very-long-floor-token',
    })
    const same = () => loadConfig({ ADMIN_TOKEN: 'a-very-long-admin-token', FLOOR_TOKEN: 'a-very-long-admin-token' })
    expect(same).toThrow('FLOOR_TOKEN: must differ from ADMIN_TOKEN (the floor token opens only /floor)')
    expect(same).not.toThrow('a-very-long-admin-token')
  })

  it('reads the pool size per process, and refuses a ?max= in DATABASE_URL that the driver would silently ignore', () => {
    expect(loadConfig({ DATABASE_POOL_MAX: '4', DATABASE_STARTUP_WAIT_MS: '0' })).toMatchObject({ databasePoolMax: 4, databaseStartupWaitMs: 0 })
    expect(() => loadConfig({ DATABASE_URL: 'postgres://u@db:5432/letters?max=50' })).toThrow(
      'DATABASE_URL: its ?max= is not read; set the pool size with DATABASE_POOL_MAX',
    )
    expect(loadConfig({ DATABASE_URL: 'postgres://u@db:5432/letters?sslmode=require' }).databaseUrl).toBe('postgres://u@db:5432/letters?sslmode=require')
  })

  it('reads the metrics token apart from the admin and floor tokens, and refuses either of them as the metrics token', () => {
    expect(loadConfig({ ADMIN_TOKEN: 'a-very-long-admin-token', METRICS_TOKEN: 'a-very-long-metrics-token' }).metricsToken).toBe('a-very-long-metrics-token')
    expect(() => loadConfig({ ADMIN_TOKEN: 'a-very-long-admin-token', METRICS_TOKEN: 'a-very-long-admin-token' })).toThrow(
      'METRICS_TOKEN: must differ from ADMIN_TOKEN and FLOOR_TOKEN (the metrics token opens only /metrics)',
    )
    expect(() => loadConfig({ FLOOR_TOKEN: 'a-very-long-floor-token', METRICS_TOKEN: 'a-very-long-floor-token' })).toThrow('METRICS_TOKEN: must differ')
  })

  it('reads the hardening settings: reconciler, HTTP limits, proofs, auth throttle, metrics port', () => {
    const config = loadConfig({
      RECONCILE_AFTER_MS: '2000',
      RECONCILE_INTERVAL_MS: '500',
      HTTP_REQUEST_TIMEOUT_MS: '1000',
      HTTP_MAX_CONNECTIONS: '50',
      PROOF_RATE_LIMIT_MAX: '3',
      RENDER_THREADS: '2',
      RENDER_QUEUE_MAX: '0',
      RENDER_WARM_UP: 'false',
      RENDER_PRIORITY: 'normal',
      AUTH_FAILURES_MAX: '5',
      METRICS_PORT: '9101',
    })
    expect(config.reconcileAfterMs).toBe(2000)
    expect(config.reconcileIntervalMs).toBe(500)
    expect(config.http).toEqual({ requestTimeoutMs: 1000, headersTimeoutMs: 10_000, keepAliveTimeoutMs: 75_000, maxConnections: 50 })
    expect(config.proofs).toEqual({
      rateLimit: { max: 3, windowMs: 60_000 },
      renderThreads: 2,
      renderQueueMax: 0,
      renderWarmUp: false,
      renderPriority: 'normal',
    })
    expect(config.authFailures).toEqual({ max: 5, windowMs: 60_000 })
    expect(config.metricsPort).toBe(9101)
  })

  it('takes a queue prefix that starts with a Redis Cluster hash tag, so that every key lands in one slot', () => {
    for (const prefix of ['letters', 'letters_eu-2', '{letters}', '{letters}-eu', '{letters-test-1}']) {
      expect(loadConfig({ QUEUE_PREFIX: prefix }).queuePrefix).toBe(prefix)
    }
  })

  it('reads TRUST_PROXY as the proxies whose X-Forwarded-For is believed, none by default', () => {
    expect(loadConfig({}).trustProxy).toEqual([])
    expect(loadConfig({ TRUST_PROXY: '10.244.0.0/16, 127.0.0.1,fd00::/8,::1' }).trustProxy).toEqual(['10.244.0.0/16', '127.0.0.1', 'fd00::/8', '::1'])
    expect(loadConfig({ TRUST_PROXY: '172.16.0.0/12,::ffff:10.0.0.1,fe80::1/128' }).trustProxy).toEqual(['172.16.0.0/12', '::ffff:10.0.0.1', 'fe80::1/128'])
  })

  it.each([
    ['10.244.0.0/33', '10.244.0.0/33'],
    ['ingress-nginx', 'ingress-nginx'],
    ['10.0.0.300', '10.0.0.300'],
    ['10.244.0.0/', '10.244.0.0/'],
    ['10.244.0.0/016', '10.244.0.0/016'],
    ['fd00::/129', 'fd00::/129'],
    ['127.0.0.1,,10.0.0.1', ''],
    ['127.0.0.1 10.0.0.1', '127.0.0.1 10.0.0.1'],
    ['*', '*'],
    ['0.0.0.0/0', '0.0.0.0/0'],
    ['::/0', '::/0'],
    // Every IPv4 client, written as IPv6.
    ['10.0.0.1,::ffff:0.0.0.0/96', '::ffff:0.0.0.0/96'],
    // What proxy-addr would read as 8.0.0.1 and as 0.0.0.10.
    ['010.0.0.1', '010.0.0.1'],
    ['10', '10'],
    ['10.0.0.0/255.255.0.0', '10.0.0.0/255.255.0.0'],
    ['loopback', 'loopback'],
    ['10.0.0.0/8/8', '10.0.0.0/8/8'],
  ])('refuses TRUST_PROXY=%s, naming the entry that is not an address or a CIDR range', (value, entry) => {
    expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(
      `TRUST_PROXY=${value}: must list the proxies' addresses or CIDR ranges, separated by commas (e.g. 10.244.0.0/16,127.0.0.1); "${entry}" is not one`,
    )
  })

  it('reads a cost table', () => {
    expect(loadConfig({ LETTER_COSTS: 'ES=3,PT=4,*=6' }).letterCosts).toEqual({ byCountry: { ES: 3, PT: 4 }, otherwise: 6 })
  })

  it.each([
    ['PORT', 'abc', 'PORT=abc: must be a port number from 1 to 65535'],
    ['PORT', '70000', 'PORT=70000: must be a port number from 1 to 65535'],
    ['PORT', '80.5', 'PORT=80.5: must be a port number from 1 to 65535'],
    ['DATABASE_URL', 'mysql://x', 'DATABASE_URL=mysql://x: must be a postgres:// or postgresql:// URL'],
    ['DATABASE_URL', 'postgres://u@[db:5432/letters', 'DATABASE_URL=postgres://u@[db:5432/letters: must be a postgres:// or postgresql:// URL'],
    ['REDIS_URL', 'localhost:6379', 'REDIS_URL=localhost:6379: must be a redis:// or rediss:// URL'],
    ['REDIS_URL', 'redis://cache:port', 'REDIS_URL=redis://cache:port: must be a redis:// or rediss:// URL'],
    ['RATE_LIMIT_MAX', '0', 'RATE_LIMIT_MAX=0: must be a positive integer'],
    ['RATE_LIMIT_WINDOW_MS', '-5', 'RATE_LIMIT_WINDOW_MS=-5: must be a positive integer of milliseconds'],
    ['LOG_LEVEL', 'loud', 'LOG_LEVEL=loud: must be fatal, error, warn, info, debug, trace or silent'],
    ['LOG_LEVEL', 'INFO', 'LOG_LEVEL=INFO: must be fatal, error, warn, info, debug, trace or silent'],
    [
      'QUEUE_PREFIX',
      'a:b',
      'QUEUE_PREFIX=a:b: must contain only letters, digits, "_" and "-", optionally after a Redis Cluster hash tag in braces (e.g. {letters})',
    ],
    ['QUEUE_PREFIX', '{letters', 'QUEUE_PREFIX={letters: must contain only letters'],
    ['QUEUE_PREFIX', '{}', 'QUEUE_PREFIX={}: must contain only letters'],
    ['QUEUE_PREFIX', 'eu-{letters}', 'QUEUE_PREFIX=eu-{letters}: must contain only letters'],
    ['QUEUE_PREFIX', '{a}{b}', 'QUEUE_PREFIX={a}{b}: must contain only letters'],
    ['QUEUE_PREFIX', '{a:b}', 'QUEUE_PREFIX={a:b}: must contain only letters'],
    ['SEED_DEMO', 'yes', 'SEED_DEMO=yes: must be "true" or "false"'],
    ['LETTER_COSTS', 'ES=3', 'LETTER_COSTS=ES=3: must list COUNTRY=credits pairs separated by commas, with *=credits for every other country (e.g. ES=3,*=5)'],
    ['LETTER_COSTS', 'ES=0,*=5', 'LETTER_COSTS=ES=0,*=5: must list'],
    ['PRINT_COMMAND', 'lp -d floor-1', 'PRINT_COMMAND=lp -d floor-1: must be a command containing {file}, where the path of the print file goes'],
    ['PRINT_TIMEOUT_MS', '1.5', 'PRINT_TIMEOUT_MS=1.5: must be a positive integer of milliseconds'],
    ['PRINTER', 'laser', 'PRINTER=laser: must be spool, plotter or batch'],
    ['PLOTTER_PEN_UP', 'M5\nG0 X0', 'must be one line of G-code words (e.g. M5 or M3 S30)'],
    ['PLOTTER_PEN_DOWN', 'pen down', 'PLOTTER_PEN_DOWN=pen down: must be one line of G-code words (e.g. M3 or M3 S90)'],
    ['PLOTTER_DRAW_FEED', '0', 'PLOTTER_DRAW_FEED=0: must be a feed rate in mm/min from 1 to 999999'],
    ['PLOTTER_TRAVEL_FEED', '60.5', 'PLOTTER_TRAVEL_FEED=60.5: must be a feed rate in mm/min from 1 to 999999'],
    ['PLOTTER_PEN_WIDTH_MM', '0.5', "PLOTTER_PEN_WIDTH_MM=0.5: must be the width of the pen's line in millimetres, from 0.1 to 0.3 (e.g. 0.25)"],
    ['PLOTTER_PEN_WIDTH_MM', '0.31', 'PLOTTER_PEN_WIDTH_MM=0.31: must be the width'],
    ['PLOTTER_PEN_WIDTH_MM', '0.4', 'PLOTTER_PEN_WIDTH_MM=0.4: must be the width'],
    ['PLOTTER_PEN_WIDTH_MM', '0.05', 'PLOTTER_PEN_WIDTH_MM=0.05: must be the width'],
    ['BATCH_MAX_LETTERS', '0', 'BATCH_MAX_LETTERS=0: must be an integer from 1 to 9999'],
    ['BATCH_MAX_WAIT_MS', '5m', 'BATCH_MAX_WAIT_MS=5m: must be a positive integer of milliseconds'],
    ['FLOOR_COUNTRY', 'es', 'FLOOR_COUNTRY=es: must be an ISO 3166-1 alpha-2 country code in capitals (e.g. ES)'],
    ['ADMIN_TOKEN', 'short', 'ADMIN_TOKEN=(not shown): must be at least 16 characters long'],
    ['FLOOR_TOKEN', 'short', 'FLOOR_TOKEN=(not shown): must be at least 16 characters long'],
    ['RECONCILE_AFTER_MS', '0', 'RECONCILE_AFTER_MS=0: must be a positive integer of milliseconds'],
    ['HTTP_MAX_CONNECTIONS', 'many', 'HTTP_MAX_CONNECTIONS=many: must be a positive integer'],
    ['HTTP_MAX_CONNECTIONS', ' 50', 'HTTP_MAX_CONNECTIONS= 50: must be a positive integer'],
    ['RATE_LIMIT_MAX', '99999999999999999999', 'RATE_LIMIT_MAX=99999999999999999999: must be a positive integer'],
    ['HTTP_REQUEST_TIMEOUT_MS', '-1', 'HTTP_REQUEST_TIMEOUT_MS=-1: must be a positive integer of milliseconds'],
    ['RENDER_THREADS', '0', 'RENDER_THREADS=0: must be an integer from 1 to 999'],
    ['RENDER_THREADS', '1000', 'RENDER_THREADS=1000: must be an integer from 1 to 999'],
    ['RENDER_WARM_UP', 'no', 'RENDER_WARM_UP=no: must be "true" or "false"'],
    ['RENDER_PRIORITY', 'low', 'RENDER_PRIORITY=low: must be below-normal or normal'],
    ['AUTH_FAILURES_MAX', '1e3', 'AUTH_FAILURES_MAX=1e3: must be a positive integer'],
    ['INTAKE_CONCURRENT_BATCHES', '0', 'INTAKE_CONCURRENT_BATCHES=0: must be an integer from 1 to 99'],
    ['METRICS_PORT', '99999', 'METRICS_PORT=99999: must be a port number from 1 to 65535'],
    ['DATABASE_POOL_MAX', '0', "DATABASE_POOL_MAX=0: must be an integer from 1 to 9999 (connections in each process's pool)"],
    ['DATABASE_POOL_MAX', '10000', 'DATABASE_POOL_MAX=10000: must be an integer from 1 to 9999'],
    ['DATABASE_STARTUP_WAIT_MS', '2m', 'DATABASE_STARTUP_WAIT_MS=2m: must be a non-negative integer of milliseconds'],
    ['METRICS_TOKEN', 'short', 'METRICS_TOKEN=(not shown): must be at least 16 characters long'],
    ['DATABASE_STATEMENT_TIMEOUT_MS', '10s', 'DATABASE_STATEMENT_TIMEOUT_MS=10s: must be a positive integer of milliseconds'],
    ['PUBLIC_BASE_URL', 'https://cartas.example.com/panel', 'PUBLIC_BASE_URL=https://cartas.example.com/panel: must be the scheme and host'],
    ['PUBLIC_BASE_URL', 'ftp://cartas.example.com', 'PUBLIC_BASE_URL=ftp://cartas.example.com: must be the scheme and host'],
    ['DASHBOARD_SESSION_IDLE_MS', '12h', 'DASHBOARD_SESSION_IDLE_MS=12h: must be an integer of milliseconds'],
    ['SMTP_URL', 'http://user:secret@smtp.example.com', 'SMTP_URL=(not shown): must be an smtp:// or smtps:// URL'],
    ['SMTP_FROM', 'nobody', 'SMTP_FROM=nobody: must be one line with an email address'],
  ])('rejects %s=%s naming the variable and the rule', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(message)
  })

  it('refuses a statement timeout longer than half the time a request has to be decided, naming both settings', () => {
    expect(() => loadConfig({ DATABASE_STATEMENT_TIMEOUT_MS: '40000' })).toThrow(
      'DATABASE_STATEMENT_TIMEOUT_MS=40000: must not exceed 12500 ms, half the 25000 ms a request has to be decided in with HTTP_REQUEST_TIMEOUT_MS=30000',
    )
    expect(() => loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '3000', DATABASE_STATEMENT_TIMEOUT_MS: '10000' })).toThrow(
      'DATABASE_STATEMENT_TIMEOUT_MS=10000: must not exceed 1125 ms',
    )
    expect(loadConfig({ DATABASE_STATEMENT_TIMEOUT_MS: '12500' }).databaseStatementTimeoutMs).toBe(12_500)
  })

  it('keeps the default statement timeout within a short request timeout', () => {
    expect(loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '3000' }).databaseStatementTimeoutMs).toBe(1125)
    expect(requestBudget(3000)).toEqual({ decideWithinMs: 2250, answerWithinMs: 2700 })
    expect(requestBudget(30_000)).toEqual({ decideWithinMs: 25_000, answerWithinMs: 29_000 })
  })
})

describe('cliEnvironment', () => {
  const token = 'an-admin-token-of-the-gateway'

  it('reads the operator CLI’s three variables as they are set', () => {
    expect(
      cliEnvironment({ LETTERS_URL: 'https://cartas.example.com', ADMIN_TOKEN: token, DATABASE_URL: 'postgres://u@db:5432/letters', PORT: 'not read' }),
    ).toEqual({ lettersUrl: 'https://cartas.example.com', adminToken: token, databaseUrl: 'postgres://u@db:5432/letters' })
  })

  it('leaves the unset and the empty undefined, defaults included, so a command runs with only the ones it needs', () => {
    expect(cliEnvironment({})).toEqual({ lettersUrl: undefined, adminToken: undefined, databaseUrl: undefined })
    expect(cliEnvironment({ LETTERS_URL: '', ADMIN_TOKEN: '', DATABASE_URL: 'postgres://u@db/letters' })).toEqual({
      lettersUrl: undefined,
      adminToken: undefined,
      databaseUrl: 'postgres://u@db/letters',
    })
    expect(cliEnvironment({ LETTERS_URL: 'http://10.0.0.5:3000', ADMIN_TOKEN: token })).toEqual({
      lettersUrl: 'http://10.0.0.5:3000',
      adminToken: token,
      databaseUrl: undefined,
    })
  })

  it.each([
    ['LETTERS_URL', 'gateway:3000', 'LETTERS_URL=gateway:3000: must be an http:// or https:// URL (e.g. http://127.0.0.1:3000)'],
    ['LETTERS_URL', 'ftp://127.0.0.1:3000', 'LETTERS_URL=ftp://127.0.0.1:3000: must be an http:// or https:// URL (e.g. http://127.0.0.1:3000)'],
    ['LETTERS_URL', 'http://[::1', 'LETTERS_URL=http://[::1: must be an http:// or https:// URL (e.g. http://127.0.0.1:3000)'],
    ['ADMIN_TOKEN', 'short', 'ADMIN_TOKEN=(not shown): must be at least 16 characters long'],
    ['DATABASE_URL', 'mysql://x', 'DATABASE_URL=mysql://x: must be a postgres:// or postgresql:// URL'],
  ])('refuses %s=%s as the services refuse it: a ConfigError naming the variable and the rule', (name, value, message) => {
    const read = () => cliEnvironment({ [name]: value })
    expect(read).toThrow(ConfigError)
    expect(read).toThrow(message)
  })

  it('is the only reader of LETTERS_URL: a service does not refuse to start over it', () => {
    expect(loadConfig({ LETTERS_URL: 'gateway:3000' })).not.toHaveProperty('lettersUrl')
  })
})
