/**
 * What the tests of the request deadlines under faults share (services/gateway/src/plugins/app/request-deadline.ts,
 * the intake's OrderDeadline): a gateway listening on 127.0.0.1 whose requests have
 * HTTP_REQUEST_TIMEOUT_MS 4000 (decideBy 3000 ms, answerBy 3600 ms after the deadline is armed),
 * requests sent through real fetch and tagged by their recipients' surname, and the audit of
 * what each request was told against what the database holds for it. Every request must get an
 * answer; a 503 must have written and charged nothing; a 200 exactly its letters; a keyed 500
 * "outcome unknown" must be resolved by its retry; the ledger must match the balance.
 *
 * A test waits on what it needs (a backend's state in pg_stat_activity, a log line of a child
 * process, the intake gone idle), each wait with a generous ceiling, so that a busy machine makes
 * it slower, not red. The times a scenario sets (a row released just before decideBy) count from
 * when the gateway received the first request, by the gateway's own clock, as its deadlines do.
 * Set RT_DEBUG=1 to print when each order reached the intake and when it was settled.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { expect, onTestFinished } from 'vitest'
import postgres from 'postgres'
import { requestBudget } from '@letters/config'
import { adminAccount } from '@letters/test/support/accounts'
import { ADMIN_TOKEN } from '@letters/test/support/context'
import { spanishRecipient, singleLetter } from '@letters/test/support/factories'
import { test } from '@letters/test/support/fixtures'
import { adminCampaign } from '@letters/test/support/gateway'
import { expectLedgerMatchesLetters } from '@letters/test/support/ledger'
import type { ServiceProcess } from '@letters/test/support/processes'
import type { App } from '../../src/app.js'
import { until } from '@letters/test/support/wait'

export const T = 4000
const budget = requestBudget(T)
export const DECIDE = budget.decideWithinMs // 3000
export const ANSWER = budget.answerWithinMs // 3600
export const ENV = { HTTP_REQUEST_TIMEOUT_MS: String(T), RATE_LIMIT_MAX: '1000000', AUTH_FAILURES_MAX: '1000000' }
/** Connections of the test's own (lock holders, the terminators): never terminated, and left out of what the gateway has under way. */
export const OWN = 'rt-deadlines'

/** The gateway under attack, listening on 127.0.0.1 at `base`, and the test's own connections to its database. */
export interface Target {
  app: App
  base: string
  own: postgres.Sql
}

/**
 * The test API of one file of these tests, with `target`. Each file takes its own and sets its
 * `gatewayOptions` (its own database) on it, so that no file's options reach another's.
 */
export function deadlineTest() {
  return test.extend('target', { scope: 'file' }, async ({ gateway }, { onCleanup }): Promise<Target> => {
    await gateway.listen({ host: '127.0.0.1', port: 0 })
    const own = postgres(gateway.config.databaseUrl, { max: 12, onnotice: () => {}, connection: { application_name: OWN } })
    onCleanup(() => own.end({ timeout: 5 }))
    return { app: gateway, base: `http://127.0.0.1:${(gateway.server.address() as AddressInfo).port}`, own }
  })
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)))

export { until }

// ---------------------------------------------------------------------------------------------
// Requests, tagged: every letter of a request carries its tag as the recipient's surname.

export type Kind = 'single' | 'card' | 'bulk'
export interface Plan {
  kind: Kind
  tag: string
  key?: string
  /** Recipients of a bulk request. */
  size?: number
  /** Abort the attempt client-side after this many ms (a client timeout shorter than the server's). */
  abortAfterMs?: number
}
/** What the tests read of an answer's JSON body (empty when there was none, or it was not JSON). */
export interface AnswerBody {
  cardId?: string
  cardIds?: Array<string | null>
  message?: string
}
export interface Answer {
  status: number
  body: AnswerBody
  retryAfter: string | null
  /** As the client measured it: reported, never asserted (on a busy machine it counts the client's own waits). */
  ms: number
  error?: string
  /** The attempt's name in its `x-test-attempt` header, by which watchServer knows it. */
  attempt?: string
}
export interface Owner {
  id: string
  apiKey: string
  cardDesignId: string
  envelopeDesignId: string
  senderId: string
  campaignId: string
  credits: number
}

export async function newOwner(target: Target, credits: number): Promise<Owner> {
  const account = await adminAccount(target.app, credits)
  const campaignId = await adminCampaign(target.app, account)
  return { ...account, campaignId, credits }
}

export const letterCount = (plan: Plan) => (plan.kind === 'bulk' ? plan.size! : 1)

function bodyOf(owner: Owner, plan: Plan): unknown {
  const recipient = (n: number) => ({ ...spanishRecipient, name: `N${n}`, surname: plan.tag, variables: { cupon: 'A1' } })
  if (plan.kind === 'single') return singleLetter(owner, { surname: plan.tag, message: `Hola ${plan.tag}` })
  if (plan.kind === 'card') return { campaignId: owner.campaignId, ...recipient(0) }
  return { campaignId: owner.campaignId, recipients: Array.from({ length: plan.size! }, (_, n) => recipient(n)) }
}

const path = (kind: Kind) => (kind === 'single' ? '/single' : kind === 'card' ? '/card' : '/cards/bulk')

const ATTEMPT_HEADER = 'x-test-attempt'
let attempts = 0

async function send(url: string, apiKey: string, route: string, body: unknown, tag: string, key?: string, abortAfterMs?: number): Promise<Answer> {
  const attempt = `${tag}#${++attempts}`
  const started = Date.now()
  try {
    const response = await fetch(`${url}${route}`, {
      method: 'POST',
      headers: {
        'x-api-key': apiKey,
        'content-type': 'application/json',
        [ATTEMPT_HEADER]: attempt,
        ...(key ? { 'idempotency-key': key } : {}),
      },
      body: JSON.stringify(body),
      ...(abortAfterMs ? { signal: AbortSignal.timeout(abortAfterMs) } : {}),
    })
    const text = await response.text()
    let parsed: AnswerBody = {}
    try {
      parsed = JSON.parse(text) as AnswerBody
    } catch {
      /* not JSON */
    }
    return { status: response.status, body: parsed, retryAfter: response.headers.get('retry-after'), ms: Date.now() - started, attempt }
  } catch (error) {
    // No HTTP answer (a cut connection, or the client's own abort).
    return { status: 0, body: {}, retryAfter: null, ms: Date.now() - started, error: String((error as Error).cause ?? error), attempt }
  }
}

export const fire = (target: Target, owner: Owner, plan: Plan, url = target.base) =>
  send(url, owner.apiKey, path(plan.kind), bodyOf(owner, plan), plan.tag, plan.key, plan.abortAfterMs)

/** The ids a 200 answer names. */
export function idsOf(plan: Plan, answer: Answer): string[] {
  if (plan.kind === 'bulk') return (answer.body.cardIds ?? []).filter((id): id is string => id !== null)
  return answer.body.cardId === undefined ? [] : [answer.body.cardId]
}

export async function httpCall(method: string, url: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  const started = Date.now()
  try {
    const response = await fetch(url, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const text = await response.text()
    let parsed: AnswerBody = {}
    try {
      parsed = JSON.parse(text) as AnswerBody
    } catch {
      /* not JSON */
    }
    return { status: response.status, body: parsed, retryAfter: response.headers.get('retry-after'), ms: Date.now() - started }
  } catch (error) {
    return { status: 0, body: {}, retryAfter: null, ms: Date.now() - started, error: String((error as Error).cause ?? error) }
  }
}

export const topUp = (target: Target, accountId: string, reason: string) =>
  httpCall('POST', `${target.base}/admin/accounts/${accountId}/credits`, { authorization: `Bearer ${ADMIN_TOKEN}` }, { amount: 1, reason })

export const tally = (answers: Answer[]) => answers.reduce<Record<number, number>>((all, a) => ({ ...all, [a.status]: (all[a.status] ?? 0) + 1 }), {})

export function mixedPlans(label: string, options: { singles?: number; cards?: number; bulks?: number[] } = {}): Plan[] {
  const { singles = 30, cards = 14, bulks = [1000, 1000, 100, 10] } = options
  const plans: Plan[] = []
  for (let i = 0; i < singles; i++) plans.push({ kind: 'single', tag: `${label}s${i}`, ...(i % 2 === 0 ? { key: `${label}-s${i}` } : {}) })
  for (let i = 0; i < cards; i++) plans.push({ kind: 'card', tag: `${label}c${i}`, ...(i % 2 === 0 ? { key: `${label}-c${i}` } : {}) })
  bulks.forEach((size, i) => plans.push({ kind: 'bulk', tag: `${label}b${i}`, size, ...(i % 2 === 0 ? { key: `${label}-b${i}` } : {}) }))
  return plans
}

/** Makes `count` letters of the owner (tags `${prefix}${i}`) and returns their ids. */
export async function someLetters(target: Target, owner: Owner, prefix: string, count: number): Promise<string[]> {
  const made = await Promise.all(Array.from({ length: count }, (_, i) => fire(target, owner, { kind: 'single', tag: `${prefix}${i}` })))
  for (const answer of made) expect(answer.status, JSON.stringify(answer.body)).toBe(200)
  return made.map((answer) => answer.body.cardId!)
}

// ---------------------------------------------------------------------------------------------
// What the database holds, and whether it agrees with what each request was told.

/** The account's letters grouped by tag (the recipient's surname). */
export async function lettersByTag(target: Target, accountId: string): Promise<Map<string, string[]>> {
  const rows = await target.own<
    Array<{ tag: string; id: string }>
  >`SELECT recipient->>'surname' AS tag, id::text AS id FROM letters WHERE account_id = ${accountId}::uuid`
  const byTag = new Map<string, string[]>()
  for (const row of rows) byTag.set(row.tag, [...(byTag.get(row.tag) ?? []), row.id])
  return byTag
}

export async function money(target: Target, accountId: string) {
  const [account] = await target.own<Array<{ balance: number }>>`SELECT balance FROM accounts WHERE id = ${accountId}::uuid`
  const [charged] = await target.own<Array<{ n: number; sum: number }>>`
    SELECT count(*)::int AS n, coalesce(sum(-amount), 0)::int AS sum FROM ledger_entries WHERE account_id = ${accountId}::uuid AND kind = 'charge'`
  const [letterCost] = await target.own<Array<{ n: number; sum: number }>>`
    SELECT count(*)::int AS n, coalesce(sum(cost), 0)::int AS sum FROM letters WHERE account_id = ${accountId}::uuid AND livemode`
  return { balance: account!.balance, charges: charged!.n, charged: charged!.sum, letters: letterCost!.n, letterCost: letterCost!.sum }
}

export async function appliedTopUps(target: Target, accountId: string, reason: string): Promise<number> {
  const [row] = await target.own<Array<{ n: number }>>`
    SELECT count(*)::int AS n FROM ledger_entries WHERE account_id = ${accountId}::uuid AND kind = 'top_up' AND reason = ${reason}`
  return row!.n
}

export async function cancelledIds(target: Target, accountId: string): Promise<Set<string>> {
  const rows = await target.own<Array<{ id: string }>>`SELECT id::text AS id FROM letters WHERE account_id = ${accountId}::uuid AND status = 'cancelled'`
  return new Set(rows.map((row) => row.id))
}

export interface Audit {
  statuses: Record<string, number>
  /** Requests with no HTTP answer. */
  cut: string[]
  /** A 503 (or another refusal) whose letters exist: written after the client was told nothing was. */
  writtenAfterRefusal: string[]
  /** A 200 whose letters are not exactly the ones it named. */
  wrong200: string[]
  /** 500 "outcome unknown" answers: tag → letters found. */
  unknown: Array<{ tag: string; keyed: boolean; letters: number }>
  /** Statuses no creation should give under these attacks. */
  unexpected: string[]
  /** 503s without a Retry-After. */
  noRetryAfter: string[]
  /** As the clients measured it: reported only. */
  slowest: number
}

/** Compares what each request was told with what the database holds for it. */
export async function audit(target: Target, owner: Owner, plans: Plan[], answers: Answer[], allowCut = false): Promise<Audit> {
  const byTag = await lettersByTag(target, owner.id)
  const result: Audit = { statuses: {}, cut: [], writtenAfterRefusal: [], wrong200: [], unknown: [], unexpected: [], noRetryAfter: [], slowest: 0 }
  plans.forEach((plan, n) => {
    const answer = answers[n]!
    const found = byTag.get(plan.tag) ?? []
    result.statuses[answer.status] = (result.statuses[answer.status] ?? 0) + 1
    result.slowest = Math.max(result.slowest, answer.ms)
    if (answer.status === 0) {
      if (!allowCut) result.cut.push(`${plan.tag} (${plan.kind}) after ${answer.ms} ms: ${answer.error}`)
      return
    }
    if (answer.status === 200) {
      const named = idsOf(plan, answer).sort()
      if (JSON.stringify(named) !== JSON.stringify([...found].sort()) || named.length !== letterCount(plan))
        result.wrong200.push(`${plan.tag}: named ${named.length}, found ${found.length}`)
      return
    }
    if (answer.status === 500) {
      result.unknown.push({ tag: plan.tag, keyed: plan.key !== undefined, letters: found.length })
      return
    }
    if (answer.status === 503 && !answer.retryAfter) result.noRetryAfter.push(plan.tag)
    if (![503, 409].includes(answer.status)) result.unexpected.push(`${plan.tag}: ${answer.status} ${JSON.stringify(answer.body)}`)
    if (found.length > 0) result.writtenAfterRefusal.push(`${plan.tag} (${plan.kind}, ${answer.status} after ${answer.ms} ms): ${found.length} letters written`)
  })
  return result
}

/**
 * Keyed requests not answered 200 are sent again with their key until they are (as the SDK
 * would, a quarter second apart); returns their outcomes. A key that is not settled within
 * `withinMs` counts as never settled.
 */
export async function settleKeyed(target: Target, owner: Owner, plans: Plan[], answers: Answer[], withinMs = 30_000) {
  const tally = { retried: 0, conflicts: 0, neverSettled: [] as string[], statuses: {} as Record<number, number> }
  const giveUpAt = Date.now() + withinMs
  await Promise.all(
    plans.map(async (plan, n) => {
      if (!plan.key || answers[n]!.status === 200) return
      tally.retried++
      while (Date.now() < giveUpAt) {
        const again = await fire(target, owner, { ...plan, abortAfterMs: undefined })
        tally.statuses[again.status] = (tally.statuses[again.status] ?? 0) + 1
        if (again.status === 200) {
          answers[n] = again
          return
        }
        if (again.status === 409) tally.conflicts++
        await sleep(250)
      }
      tally.neverSettled.push(plan.tag)
    }),
  )
  return tally
}

export function report(name: string, data: unknown) {
  console.log(`### ${name}: ${JSON.stringify(data)}`)
}

export async function expectMoneyConsistent(target: Target, owner: Owner) {
  await expectLedgerMatchesLetters(target.app.db, owner.id)
  const state = await money(target, owner.id)
  expect(state.balance, JSON.stringify(state)).toBe(owner.credits - state.letterCost)
  expect(state.charged).toBe(state.letterCost)
  return state
}

export function expectClean(result: Audit) {
  expect(result.cut, 'requests cut without an answer').toEqual([])
  expect(result.writtenAfterRefusal, 'refused requests whose letters were written').toEqual([])
  expect(result.wrong200, '200s whose letters differ').toEqual([])
  expect(result.unexpected, 'unexpected statuses').toEqual([])
  expect(result.noRetryAfter, '503s without Retry-After').toEqual([])
}

// ---------------------------------------------------------------------------------------------
// The attacks: a held account row, terminated backends, a saturated pool.

/**
 * Holds the account's row, as another transaction charging or adjusting it would, until
 * released (at the latest when the test ends, whatever happened).
 */
export async function holdAccountRow(target: Target, accountId: string, mode = 'FOR NO KEY UPDATE') {
  let release!: () => void
  let locked!: () => void
  const taken = new Promise<void>((resolve) => (locked = resolve))
  const released = new Promise<void>((resolve) => (release = resolve))
  const holder = target.own.begin(async (sql) => {
    await sql.unsafe(`SELECT 1 FROM accounts WHERE id = $1::uuid ${mode}`, [accountId])
    locked()
    await released
  })
  await taken
  let done = false
  const releaseRow = async () => {
    if (done) return
    done = true
    release()
    await holder
  }
  onTestFinished(releaseRow)
  return releaseRow
}

/** Terminates every backend of the test database but the test's own, every `everyMs`, until stopped. */
export function terminator(target: Target, everyMs: () => number) {
  let running = true
  let kills = 0
  const loop = (async () => {
    while (running) {
      const killed = await target.own<Array<{ pg_terminate_backend: boolean }>>`
        SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend' AND application_name <> ${OWN}`
      kills += killed.length
      // The attack's pace, not a wait for anything.
      await sleep(everyMs())
    }
  })()
  return {
    async stop() {
      running = false
      await loop
      return kills
    },
  }
}

/**
 * Terminates, as fast as it can look, the backends at the end of an intake transaction (its write
 * statement done, COMMIT next or under way) and the intake's check of what became of a failed
 * commit (committed(): the transaction's status asked of Postgres by its id).
 */
export function commitKiller(target: Target, options: { spareVerification?: boolean } = {}) {
  let running = true
  const seen = { commitWindow: 0, verification: 0 }
  const loop = (async () => {
    while (running) {
      const killed = await target.own<Array<{ what: string }>>`
        WITH b AS (
          SELECT pid, state, btrim(regexp_replace(query, '\\s+', ' ', 'g')) AS q FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend' AND application_name <> ${OWN}
        )
        SELECT CASE WHEN q LIKE 'SELECT txid_status(%' THEN 'verification' ELSE 'commitWindow' END AS what,
          pg_terminate_backend(pid) AS done
        FROM b
        WHERE (state = 'idle in transaction' AND q LIKE 'WITH new_letters AS (%')
          OR lower(q) = 'commit' OR (NOT ${options.spareVerification ?? false} AND q LIKE 'SELECT txid_status(%')`
      for (const row of killed) seen[row.what as keyof typeof seen]++
      // Looks again at once, letting the event loop turn.
      await sleep(0)
    }
  })()
  return {
    async stop() {
      running = false
      await loop
      return seen
    },
  }
}

/**
 * The gateway's pool taken by statements waiting for a held account row (admin top-ups, as ops
 * adjusting a balance would send): each holds its connection for up to the statement timeout,
 * and the ones queued behind them start only then.
 */
export function saturatePool(target: Target, accountId: string, reason: string, count = 30) {
  return Promise.all(Array.from({ length: count }, () => topUp(target, accountId, reason)))
}

/** Backends of the test database (the test's own left out) waiting for a lock; of `applicationName` only, when given. */
export async function lockWaiters(target: Target, applicationName?: string): Promise<number> {
  const [row] = await target.own<Array<{ n: number }>>`
    SELECT count(*)::int AS n FROM pg_stat_activity
    WHERE datname = current_database() AND backend_type = 'client backend' AND application_name <> ${OWN} AND wait_event_type = 'Lock'
      AND (${applicationName ?? null}::text IS NULL OR application_name = ${applicationName ?? null})`
  return row!.n
}

/** Backends of the test database of `applicationName` (a gateway process's, named in its DATABASE_URL). */
export async function backendsOf(target: Target, applicationName: string): Promise<number> {
  const [row] = await target.own<Array<{ n: number }>>`
    SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = ${applicationName}`
  return row!.n
}

/** Every connection of the in-process gateway's pool waits for a held row (the statements queued behind them wait for a connection). */
export const poolTaken = (target: Target) =>
  until("every connection of the gateway's pool to wait for the held row", async () => (await lockWaiters(target)) >= target.app.config.databasePoolMax)

/** Backends of the test database (the test's own left out) running a statement or inside a transaction. */
async function busyBackends(target: Target): Promise<number> {
  const [row] = await target.own<Array<{ n: number }>>`
    SELECT count(*)::int AS n FROM pg_stat_activity
    WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend' AND application_name <> ${OWN}
      AND (state IS DISTINCT FROM 'idle' OR xact_start IS NOT NULL)`
  return row!.n
}

/**
 * Waits until the gateway has finished what it had in hand: the intake has decided every order
 * it was given, and no backend of the gateway's database (the test's own left out) runs a
 * statement or sits in a transaction, twice in a row: a handler answered at its deadline may
 * still hand the intake an order (which it refuses, abandoned) or run a statement after the
 * first look.
 */
export async function settled(target: Target, timeoutMs = 60_000): Promise<void> {
  let quiet = 0
  await until(
    'the gateway to finish the work it had in hand',
    async () => {
      await target.app.intake.drained()
      quiet = (await busyBackends(target)) === 0 ? quiet + 1 : 0
      return quiet >= 2
    },
    { timeoutMs },
  )
}

// ---------------------------------------------------------------------------------------------
// The gateway's own view of time: its clock, its intake, its log.

export interface Arrival {
  attempt: string | undefined
  arrivedAt: number
  answeredAt?: number
}

/**
 * What the in-process gateway sees of the requests sent from now on, by its own clock: when each
 * arrived (its deadline is armed then) and when its answer was written. Stops with the test.
 */
export function watchServer(target: Target) {
  const arrivals: Arrival[] = []
  let first!: (at: number) => void
  const firstAt = new Promise<number>((resolve) => (first = resolve))
  const onRequest = (request: IncomingMessage, response: ServerResponse) => {
    const header = request.headers[ATTEMPT_HEADER]
    const arrival: Arrival = { attempt: typeof header === 'string' ? header : undefined, arrivedAt: Date.now() }
    arrivals.push(arrival)
    first(arrival.arrivedAt)
    response.once('finish', () => (arrival.answeredAt = Date.now()))
  }
  const server = target.app.server
  server.on('request', onRequest)
  const stop = () => void server.off('request', onRequest)
  onTestFinished(stop)
  return {
    arrivals,
    stop,
    /** Resolves `ms` after the first request arrived, by the gateway's clock: when a scenario releases a row or starts an attack. */
    after: (ms: number) => firstAt.then((at) => sleep(at + ms - Date.now())),
    byAttempt: (attempt: string | undefined) => arrivals.find((arrival) => arrival.attempt !== undefined && arrival.attempt === attempt),
    /** The longest the gateway took from a request's arrival to its answer written. */
    slowestMs: () => Math.max(0, ...arrivals.flatMap((a) => (a.answeredAt === undefined ? [] : [a.answeredAt - a.arrivedAt]))),
  }
}

/** One order as the intake saw it, by the gateway's clock. */
export interface Traced {
  tag: string
  submittedAt: number
  settledAt?: number
  outcome?: string
}

/** When each order reached the intake and when it was settled, by tag (the intake's submit wrapped, nothing of src changed). */
export function traceIntake(target: Target) {
  const intake = target.app.intake
  const original = intake.submit.bind(intake)
  const t0 = Date.now()
  const rows: string[] = []
  const orders: Traced[] = []
  intake.submit = (order) => {
    const tag = order.letters[0]!.recipient.surname
    const traced: Traced = { tag, submittedAt: Date.now() }
    orders.push(traced)
    const deadline = order.deadline
    return original(order).then(
      (outcome) => {
        traced.settledAt = Date.now()
        traced.outcome = outcome.outcome
        rows.push(
          `${tag} submitted ${traced.submittedAt - t0} settled ${traced.settledAt - t0} ${outcome.outcome} decideBy ${deadline ? deadline.decideBy - t0 : '-'}`,
        )
        return outcome
      },
      (error: unknown) => {
        traced.settledAt = Date.now()
        traced.outcome = (error as Error).name
        rows.push(
          `${tag} submitted ${traced.submittedAt - t0} failed ${traced.settledAt - t0} ${(error as Error).name} ${(error as { code?: string }).code ?? ''} decideBy ${deadline ? deadline.decideBy - t0 : '-'}`,
        )
        throw error
      },
    )
  }
  return { stop: () => (intake.submit = original), lines: () => rows, orders }
}

/**
 * Counts the transactions the gateway's handlers open through its pool (a top-up, a cancel: one
 * each), and how many of them have not committed or rolled back yet.
 */
export function countTransactions(target: Target) {
  const db = target.app.db
  const original = db.transaction.bind(db)
  const counts = { started: 0, inFlight: 0 }
  db.transaction = ((...args: Parameters<typeof original>) => {
    counts.started++
    counts.inFlight++
    return original(...args).finally(() => counts.inFlight--)
  }) as typeof db.transaction
  const stop = () => {
    db.transaction = original
  }
  onTestFinished(stop)
  return { counts, stop }
}

/**
 * The environment of a gateway process of these tests beyond serviceEnv's (which sets load
 * shedding as the in-process gateway has it): the file's settings, `env` on top, and every request
 * logged (LOG_LEVEL info), for the test to read when each arrived and was answered by the
 * process's clock.
 */
export const processEnv = (env: Record<string, string> = {}) => ({
  ...ENV,
  LOG_LEVEL: 'info',
  ...env,
})

/** A line a gateway process logged (LOG_LEVEL info): pino's fields and Fastify's request ones. */
export interface LogLine {
  time: number
  level: number
  msg: string
  reqId?: string
  req?: { method?: string; url?: string }
  res?: { statusCode?: number }
  responseTime?: number
}

/** What a process logged so far, a JSON line each (a line still being written is left out). */
export function logLines(child: ServiceProcess): LogLine[] {
  return child
    .output()
    .split('\n')
    .flatMap((line) => {
      if (!line.startsWith('{')) return []
      try {
        return [JSON.parse(line) as LogLine]
      } catch {
        return []
      }
    })
}

/** The creations (POSTs) a gateway process logged as arrived, each with the time by its clock. */
export const creationsArrived = (child: ServiceProcess) => logLines(child).filter((line) => line.msg === 'incoming request' && line.req?.method === 'POST')
