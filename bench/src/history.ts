/**
 * npm run bench -- --history N: the same operations on a database holding a small history (1,000
 * letters) and one holding N letters over 18 months, side by side, with their ratio. What a
 * history that grows must not slow: the API's reads, every loop's round, /metrics, the floor's
 * page, an endpoint's deletion; and what a letter costs in disk once the retention has run.
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import postgres from 'postgres'
import { pino } from 'pino'
import { loadConfig } from '@letters/config'
import { createDb, closeDb, dropDatabase, prepareDatabase, type Db } from '@letters/db'
import { buildGateway } from '@letters/gateway/server'
import { PersonalDataEraser } from '@letters/gateway/personal-data'
import { LetterClock, OutboxDispatcher, Reconciler, closeQueues, openQueues, producerConnection } from '@letters/pipeline'
import { DeliveryAdmission } from '@letters/webhook-worker/admission'
import { disableIfAllFailed } from '@letters/webhook-worker/deliver'
import { HistoryRetention } from '@letters/webhook-worker/history-retention'
import { deleteKeys } from '@letters/test/support/redis-keys'
import type { Cleanup } from './cleanup.js'
import { fillHistory } from './history-fill/index.js'
import { figure, grid, median } from './report.js'

const SMALL = 1000
const ADMIN_TOKEN = 'bench-history-admin-token-0123456789'
const FLOOR_TOKEN = 'bench-history-floor-token-0123456789'
const silent = pino({ level: 'silent' })

export interface HistoryBenchOptions {
  letters: number
  postgresUrl: string
  redisUrl: string
  progress: (text: string) => void
}

/** Milliseconds of each operation, by its label; `once` rows are measured a single time. */
type Timings = Map<string, { ms: number; note?: string }>

async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now()
  await work()
  return performance.now() - start
}

/** The median of `runs` runs after two unmeasured ones (plans cached, pages in memory). */
async function medianOf(runs: number, work: () => Promise<unknown>): Promise<number> {
  await work()
  await work()
  const times: number[] = []
  for (let i = 0; i < runs; i++) times.push(await timed(work))
  return median(times)
}

/** What the measurements need from a filled database: the big account, its busiest endpoint, a small campaign, a deep cursor. */
async function landmarks(sql: postgres.Sql) {
  const [big] = await sql<Array<{ id: string }>>`SELECT account_id AS id FROM letters GROUP BY account_id ORDER BY count(*) DESC LIMIT 1`
  const [letter] = await sql<
    Array<{ id: string }>
  >`SELECT id FROM letters WHERE account_id = ${big!.id} AND livemode ORDER BY created_at DESC LIMIT 1 OFFSET 10`
  const [campaign] = await sql<Array<{ id: string; n: number }>>`
    SELECT campaign_id AS id, count(*)::int AS n FROM letters WHERE account_id = ${big!.id} AND livemode AND campaign_id IS NOT NULL
    GROUP BY campaign_id ORDER BY count(*) LIMIT 1`
  // A page deep in the account's history: the cursor GET /cards hands out names its last row (position|id).
  const [deep] = await sql<Array<{ position: string; id: string }>>`
    SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS position, id FROM letters
    WHERE account_id = ${big!.id} AND livemode ORDER BY created_at LIMIT 1 OFFSET 100`
  const [endpoint] = await sql<Array<{ id: string; events: number }>>`
    SELECT e.id, count(ev.id)::int AS events FROM webhook_endpoints e LEFT JOIN webhook_events ev ON ev.endpoint_id = e.id
    WHERE e.account_id = ${big!.id} AND e.livemode GROUP BY e.id ORDER BY count(ev.id) DESC LIMIT 1`
  const cursor = deep ? Buffer.from(`${deep.position}|${deep.id}`).toString('base64url') : undefined
  return { accountId: big!.id, letterId: letter!.id, campaign: campaign!, cursor, endpoint: endpoint! }
}

/** Every table's size on disk (heap, indexes, TOAST), in bytes. */
async function databaseBytes(sql: postgres.Sql): Promise<number> {
  const [row] = await sql<Array<{ bytes: string }>>`
    SELECT sum(pg_total_relation_size(c.oid))::bigint AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public' AND c.relkind = 'r'`
  return Number(row!.bytes)
}

async function measureSize(size: number, options: HistoryBenchOptions, cleanup: Cleanup): Promise<{ timings: Timings; facts: Record<string, string> }> {
  const { progress } = options
  const runId = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`
  const url = new URL(options.postgresUrl)
  url.pathname = `/letters_history_${size}_${runId}`
  const databaseUrl = url.toString()
  cleanup.defer(`the database of ${size} letters`, () => dropDatabase(databaseUrl))
  await prepareDatabase(databaseUrl)
  const queuePrefix = `letters-history-${runId.replace('_', '-')}`
  cleanup.defer(`the Redis keys ${queuePrefix}*`, () => deleteKeys(options.redisUrl, `${queuePrefix}*`))
  const directory = await mkdtemp(join(tmpdir(), 'letters-history-'))
  cleanup.defer('the run’s directory', () => rm(directory, { recursive: true, force: true }))

  const sql = postgres(databaseUrl, { max: 2, onnotice: () => {} })
  cleanup.defer('the bench’s connection', () => sql.end({ timeout: 5 }))
  const started = performance.now()
  const shape = await fillHistory(sql, size, (text) => progress(`${size} letters: ${text}`))
  const fillSeconds = (performance.now() - started) / 1000
  progress(`${size} letters: filled in ${figure(fillSeconds)} s`)
  // A database that has run for months has been vacuumed as it went (autovacuum): its tables'
  // visibility maps are set, which the index-only reads count on. And its pages are on disk: the
  // fill's gigabytes of dirty buffers are written now, not by the checkpointer while we time.
  await sql`VACUUM ANALYZE`
  await sql`CHECKPOINT`
  const mark = await landmarks(sql)

  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    REDIS_URL: options.redisUrl,
    QUEUE_PREFIX: queuePrefix,
    ADMIN_TOKEN,
    FLOOR_TOKEN,
    ARTIFACTS_DIR: join(directory, 'artifacts'),
    SPOOL_DIR: join(directory, 'spool'),
    RATE_LIMIT_MAX: '1000000000',
    LOG_LEVEL: 'warn',
  })
  const db: Db = createDb(databaseUrl, { max: 4 })
  cleanup.defer('the bench’s pool', () => closeDb(db))
  const app = await buildGateway({ config, db, logger: false })
  cleanup.defer('the gateway', () => app.close())
  await app.ready()
  const producer = producerConnection(options.redisUrl, 'bench-history', silent)
  const queues = openQueues(producer, queuePrefix, silent)
  cleanup.defer('the queues', async () => {
    await closeQueues(queues)
    producer.disconnect()
  })

  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }
  const issued = await app.inject({ method: 'POST', url: `/admin/accounts/${mark.accountId}/api-keys`, headers: admin, payload: {} })
  if (issued.statusCode !== 201 && issued.statusCode !== 200) throw new Error(`could not issue a key: ${issued.statusCode} ${issued.body}`)
  const key = { 'x-api-key': issued.json<{ apiKey: string }>().apiKey }
  const get = (path: string, headers: Record<string, string>) => async () => {
    const response = await app.inject({ method: 'GET', url: path, headers })
    if (response.statusCode !== 200) throw new Error(`GET ${path}: ${response.statusCode} ${response.body.slice(0, 200)}`)
  }

  const timings: Timings = new Map()
  const read = async (label: string, work: () => Promise<unknown>) => {
    timings.set(label, { ms: await medianOf(25, work) })
    progress(`${size} letters: ${label}: ${figure(timings.get(label)!.ms)} ms`)
  }
  await read('GET /cards/{id}', get(`/cards/${mark.letterId}`, key))
  await read('GET /cards, first page', get('/cards?limit=20', key))
  if (mark.cursor) await read('GET /cards, a page 100 letters from the oldest', get(`/cards?limit=20&cursor=${mark.cursor}`, key))
  await read(`GET /cards?campaignId= (a campaign of ${mark.campaign.n} letters)`, get(`/cards?limit=20&campaignId=${mark.campaign.id}`, key))
  // What the dashboard asks of the busiest account (its list's filters, Inicio's counts, Saldo).
  const lastMonth = encodeURIComponent(new Date(Date.now() - 30 * 86_400_000).toISOString())
  await read('GET /cards?status=mailed', get('/cards?limit=20&status=mailed', key))
  await read('GET /cards?search= (a name no recipient has)', get('/cards?limit=20&search=Zzyzx', key))
  await read('GET /cards?search=Bilbao', get('/cards?limit=20&search=Bilbao', key))
  await read('GET /cards?from= (the last 30 days)', get(`/cards?limit=20&from=${lastMonth}`, key))
  await read('GET /cards/stats (the last 30 days)', get('/cards/stats', key))
  await read('GET /balance/movements', get('/balance/movements?limit=20', key))
  await read('GET /events', get('/events?limit=20', key))
  await read('GET /webhooks/{id}/deliveries (the busiest endpoint)', get(`/webhooks/${mark.endpoint.id}/deliveries?limit=20`, key))
  await read('GET /floor', get('/floor', { authorization: `Bearer ${FLOOR_TOKEN}` }))
  await read('GET /admin/stuck-letters', get('/admin/stuck-letters', admin))
  await read('GET /metrics (the pipeline gauges read)', get('/metrics', admin))

  const loop = async (label: string, work: () => Promise<unknown>) => {
    timings.set(label, { ms: await medianOf(7, work) })
    progress(`${size} letters: ${label}: ${figure(timings.get(label)!.ms)} ms`)
  }
  const dispatcher = new OutboxDispatcher(db, queues, silent)
  await loop('dispatcher round', () => dispatcher.dispatchOnce())
  const clock = new LetterClock(db, silent, { intervalMs: config.clockIntervalMs, testMailedAfterMs: config.testMailedAfterMs })
  await loop('letter clock round', () => clock.tick())
  const reconciler = new Reconciler(db, queues, silent, { afterMs: config.reconcileAfterMs, intervalMs: config.reconcileIntervalMs })
  await loop('reconciler round', () => reconciler.reconcileOnce())
  const admission = new DeliveryAdmission(db, silent, { maxInFlightPerEndpoint: 4, maxInFlightPerAccount: 16 })
  await loop('webhook admission round', () => admission.admitOnce())
  // Rolled back: the check as a failed delivery runs it, without disabling the endpoint.
  await loop('webhook "disable after 50 failures" check (the busiest endpoint)', () =>
    db
      .transaction(async (tx) => {
        await disableIfAllFailed(tx, mark.endpoint.id)
        tx.rollback()
      })
      .catch(() => undefined),
  )
  const eraser = new PersonalDataEraser({ db, artifacts: app.artifacts, log: silent }, { retentionMs: config.personalDataRetentionMs })
  await loop('personal data eraser round', () => eraser.tick())

  const bytesBefore = await databaseBytes(sql)
  // An endpoint's deletion, its history whole: the answer, then its deliveries removed by the
  // retention's rounds (which trim the rest of the history meanwhile, so this is an upper bound).
  const deletion = await timed(async () => {
    const response = await app.inject({ method: 'DELETE', url: `/webhooks/${mark.endpoint.id}`, headers: key })
    if (response.statusCode !== 204) throw new Error(`DELETE /webhooks: ${response.statusCode} ${response.body}`)
  })
  timings.set(`DELETE /webhooks/{id} (an endpoint with ${mark.endpoint.events} deliveries)`, { ms: deletion })
  const retention = new HistoryRetention(db, silent)
  let purgeRounds = 0
  const purge = await timed(async () => {
    for (;;) {
      purgeRounds++
      const deleted = await retention.trimOnce()
      if (deleted.deleted_endpoints! > 0 || Object.values(deleted).every((n) => n === 0)) return
    }
  })
  progress(`${size} letters: endpoint deleted in ${figure(deletion)} ms, its history removed in ${purgeRounds} rounds, ${figure(purge / 1000)} s`)

  // The history retention, until it has nothing left: the first rounds trim what the fill left
  // past each window; a round then costs what a quiet day's round costs.
  let trimRounds = 0
  let trimmed = 0
  const trimStart = performance.now()
  for (;;) {
    const deleted = Object.values(await retention.trimOnce()).reduce((sum, n) => sum + n, 0)
    trimRounds++
    trimmed += deleted
    if (deleted === 0) break
  }
  // What autovacuum does after a mass delete: until then the indexes still hold the dead rows' entries.
  await sql`VACUUM ANALYZE`
  timings.set('history retention, a round with nothing to trim', { ms: await medianOf(7, () => retention.trimOnce()) })
  const catchUpSeconds = (performance.now() - trimStart) / 1000
  progress(`${size} letters: the retention trimmed ${trimmed} rows in ${trimRounds} rounds, ${figure(catchUpSeconds)} s`)

  await sql`VACUUM FULL`
  await sql`ANALYZE`
  const bytesAfter = await databaseBytes(sql)
  const [{ letters } = { letters: 0 }] = await sql<Array<{ letters: number }>>`SELECT count(*)::int AS letters FROM letters`
  return {
    timings,
    facts: {
      letters: String(letters),
      accounts: String(shape.accounts),
      fillSeconds: figure(fillSeconds),
      bytesPerLetterBeforeRetention: figure(bytesBefore / letters),
      bytesPerLetterAfterRetention: figure(bytesAfter / letters),
      retentionRows: String(trimmed),
      endpointDeliveries: String(mark.endpoint.events),
      endpointPurgeSeconds: figure(purge / 1000),
    },
  }
}

/** Runs both sizes, one after the other, and returns the Markdown table of their ratios. */
export async function runHistoryBench(options: HistoryBenchOptions, cleanup: Cleanup): Promise<string> {
  const small = await measureSize(SMALL, options, cleanup)
  const large = await measureSize(options.letters, options, cleanup)
  const rows = [...large.timings.keys()].map((label) => {
    const largeMs = large.timings.get(label)!.ms
    // Labels that name a count (a campaign, an endpoint) differ between the sizes: matched by their start.
    const smallEntry = small.timings.get(label) ?? [...small.timings].find(([key]) => key.split(' (')[0] === label.split(' (')[0])?.[1]
    const ratio = smallEntry ? largeMs / smallEntry.ms : Number.NaN
    const bound = label.startsWith('DELETE /webhooks') ? `< 1,000 ms: ${largeMs < 1000 ? 'yes' : 'NO'}` : `≤ 2×: ${ratio <= 2 ? 'yes' : 'NO'}`
    return [label, smallEntry ? figure(smallEntry.ms) : '—', figure(largeMs), Number.isNaN(ratio) ? '—' : `${figure(ratio)}×`, bound]
  })
  const facts = Object.keys(large.facts).map((fact) => [fact, small.facts[fact]!, large.facts[fact]!])
  return [
    `## History: ${SMALL.toLocaleString('en')} letters against ${options.letters.toLocaleString('en')}`,
    '',
    grid(['operation', `ms at ${SMALL.toLocaleString('en')}`, `ms at ${options.letters.toLocaleString('en')}`, 'ratio', 'bound'], rows),
    '',
    grid(['', `${SMALL.toLocaleString('en')} letters`, `${options.letters.toLocaleString('en')} letters`], facts),
    '',
  ].join('\n')
}
