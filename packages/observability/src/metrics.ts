import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'

/**
 * Every metric the service exports, in one place. Each process has the one registry of this
 * module: the gateway serves it at /metrics (admin token), each worker at its METRICS_PORT.
 * A process only moves the metrics of what it does; the others stay at zero there.
 */
export const registry = new Registry()
collectDefaultMetrics({ register: registry })

export const httpRequestDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'Time to answer an HTTP request, by method, route pattern and status code',
  labelNames: ['method', 'route', 'status_code'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
})

export const lettersCreated = new Counter({
  name: 'letters_created_total',
  help: 'Letters accepted, by type (single, campaign), destination country and mode (live: charged; test: made with a test key, never charged nor printed)',
  labelNames: ['type', 'country', 'mode'] as const,
  registers: [registry],
})

export const letterStatusChanges = new Counter({
  name: 'letters_status_changes_total',
  help: "Status changes made by this process, by the status reached and the letter's mode (live or test)",
  labelNames: ['to', 'mode'] as const,
  registers: [registry],
})

export const creditsCharged = new Counter({
  name: 'letters_credits_charged_total',
  help: 'Credits charged for letters',
  registers: [registry],
})

export const intakeBatchOrders = new Histogram({
  name: 'letters_intake_batch_orders',
  help: 'Orders (creation requests) charged and stored together in one intake transaction',
  buckets: [1, 2, 4, 8, 16, 32, 64, 128],
  registers: [registry],
})

export const creditsRefunded = new Counter({
  name: 'letters_credits_refunded_total',
  help: 'Credits refunded for letters (address rejected, cancelled)',
  registers: [registry],
})

export const floorScans = new Counter({
  name: 'floor_scans_total',
  help: 'Codes scanned on the floor (POST /floor/scan, POST /floor/returned), by outcome: mailed, returned, unknown (no live letter has it), not_printed, already_mailed, not_mailed, already_returned',
  labelNames: ['outcome'] as const,
  registers: [registry],
})

export const lettersReturned = new Counter({
  name: 'letters_returned_total',
  help: 'Mailed letters the post brought back (marked on the floor, by ops or the CLI), by reason',
  labelNames: ['reason'] as const,
  registers: [registry],
})

export const qrScans = new Counter({
  name: 'letters_qr_scans_total',
  help: "Requests for letters' QR links (GET /q/{code}), by what each was taken for: counted (a scan), prefetch, preview (a link preview or crawler), limited (past 10 counted scans of its code in a minute). Unknown codes are not counted",
  labelNames: ['kind'] as const,
  registers: [registry],
})

/**
 * The state of the whole pipeline, read from Postgres and Redis at scrape time. Only the gateway
 * serves these (after refreshing them): a worker that exported them would report zeros.
 */
export const pipelineRegistry = new Registry()

export const queueJobs = new Gauge({
  name: 'letters_queue_jobs',
  help: 'Jobs in each BullMQ queue by state, read at scrape time',
  labelNames: ['queue', 'state'] as const,
  registers: [pipelineRegistry],
})

export const outboxPending = new Gauge({
  name: 'letters_outbox_pending',
  help: 'Outbox rows not yet handed to Redis, read at scrape time',
  registers: [pipelineRegistry],
})

export const outboxOldestSeconds = new Gauge({
  name: 'letters_outbox_oldest_seconds',
  help: 'Age of the oldest outbox row not yet handed to Redis (0 when none), read at scrape time',
  registers: [pipelineRegistry],
})

export const clockMoves = new Counter({
  name: 'letters_clock_moves_total',
  help: 'Letters moved by the letter clock: released (a scheduled letter at its sendAt) or test_mailed (a test letter marked mailed)',
  labelNames: ['kind'] as const,
  registers: [registry],
})

export const clockOverdue = new Gauge({
  name: 'letters_clock_overdue',
  help: 'Letters the letter clock should have moved a while ago (5 of its rounds, at least 30 s) and has not, by kind (released: scheduled letters past their sendAt; test_mailed: test letters to mark mailed) and mode: no clock is running, read at scrape time',
  labelNames: ['kind', 'mode'] as const,
  registers: [pipelineRegistry],
})

export const lettersStuck = new Gauge({
  name: 'letters_stuck',
  help: 'Letters in received, ready_for_print or printing without progress for longer than RECONCILE_AFTER_MS, by status and mode (live, or test: made with a test key), read at scrape time',
  labelNames: ['status', 'mode'] as const,
  registers: [pipelineRegistry],
})

export const postgresConnections = new Gauge({
  name: 'letters_postgres_connections',
  help: "Client connections open on the Postgres server (every database and process, ours and others'), by state (active, idle, idle in transaction, other), read at scrape time",
  labelNames: ['state'] as const,
  registers: [pipelineRegistry],
})

export const postgresMaxConnections = new Gauge({
  name: 'letters_postgres_max_connections',
  help: "The Postgres server's max_connections: past it a new connection is refused (53300), read at scrape time",
  registers: [pipelineRegistry],
})

export const renderSeconds = new Histogram({
  name: 'letters_render_seconds',
  help: 'Time to render a print file or a proof, by what was rendered (card, envelope, proof)',
  labelNames: ['kind'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [registry],
})

export const lettersReconciled = new Counter({
  name: 'letters_reconciled_total',
  help: 'Letters whose lost job the reconciler queued again, by the status they were in',
  labelNames: ['status'] as const,
  registers: [registry],
})

export const historyTrimmed = new Counter({
  name: 'letters_history_trimmed_total',
  help: 'Rows the history retention deleted, by what they were (events, qr_scans, webhook_events, deleted_endpoint_events, deleted_endpoints, outbox)',
  labelNames: ['table'] as const,
  registers: [registry],
})

export const lettersSettledFromJournal = new Counter({
  name: 'letters_settled_from_print_journal_total',
  help: 'Letters marked printed from the print journal instead of being printed again (a database restored from before their print), by the status they were found in',
  labelNames: ['status'] as const,
  registers: [registry],
})

export const printJournalWriteFailures = new Counter({
  name: 'letters_print_journal_write_failures_total',
  help: 'Files the printer took whose print journal record could not be written (a restore from before them would print them again)',
  registers: [registry],
})

export const webhookAttempts = new Counter({
  name: 'webhook_attempts_total',
  help: 'Webhook delivery attempts, by their outcome (delivered, retrying, failed)',
  labelNames: ['outcome'] as const,
  registers: [registry],
})

export const webhookEndpointsDisabled = new Counter({
  name: 'webhook_endpoints_disabled_total',
  help: 'Webhook endpoints disabled because their last 50 events all failed',
  registers: [registry],
})

export const backgroundLoopFailures = new Counter({
  name: 'letters_background_loop_failures_total',
  help: 'Failed rounds of a background loop (dispatcher, reconciler, letter clock, batch closer), by loop; each is logged and tried again',
  labelNames: ['loop'] as const,
  registers: [registry],
})
