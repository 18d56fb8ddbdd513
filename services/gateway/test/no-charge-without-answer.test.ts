// Red team of the request deadlines (services/gateway/src/plugins/app/request-deadline.ts, the
// intake's OrderDeadline): row locks, terminated backends, same-key retries, a killed gateway and
// a busy event loop, all through a real HTTP server and real fetch. Every request must get an
// answer; a 503 must have written and charged nothing; a 200 exactly its letters; a keyed 500
// "outcome unknown" must be resolved by its retry; the ledger must match the balance.
//
// HTTP_REQUEST_TIMEOUT_MS is 4000 here: decideBy 3000 ms, answerBy 3600 ms after the deadline is armed.
// Each test guards the rule its name states: the deadline's own answers reach a request with a
// body, non-creation writes are never told 503 while they may still commit, and one account's
// held row does not stall the others'.
// Set RT_DEBUG=1 to print when each order reached the intake and when it was settled.
import type { AddressInfo } from 'node:net'
import { describe, expect } from 'vitest'
import postgres from 'postgres'
import { requestBudget } from '@letters/config'
import { createClient, LettersApiError, LettersConnectionError } from '@letters/sdk'
import { adminAccount } from '@letters/test/support/accounts'
import { ADMIN_TOKEN } from '@letters/test/support/context'
import { spanishRecipient, singleLetter } from '@letters/test/support/factories'
import { test } from '@letters/test/support/fixtures'
import { adminCampaign } from '@letters/test/support/gateway'
import { freePort, startGatewayProcess, type ServiceProcess } from '@letters/test/support/processes'
import { expectLedgerMatchesLetters } from '@letters/test/support/ledger'
import type { App } from '../src/app.js'

const T = 4000
const budget = requestBudget(T)
const DECIDE = budget.decideWithinMs // 3000
const ANSWER = budget.answerWithinMs // 3600
const ENV = { HTTP_REQUEST_TIMEOUT_MS: String(T), RATE_LIMIT_MAX: '1000000', AUTH_FAILURES_MAX: '1000000' }
/** Connections of the test's own (lock holders, the terminator): never terminated. */
const OWN = 'rt-deadlines'

/** The gateway under attack, listening on 127.0.0.1 at `base`, and the test's own connections to its database. */
interface Target {
  app: App
  base: string
  own: postgres.Sql
}

const it = test
  .extend('target', { scope: 'file' }, async ({ gateway }, { onCleanup }): Promise<Target> => {
    await gateway.listen({ host: '127.0.0.1', port: 0 })
    const own = postgres(gateway.config.databaseUrl, { max: 12, onnotice: () => {}, connection: { application_name: OWN } })
    onCleanup(() => own.end({ timeout: 5 }))
    return { app: gateway, base: `http://127.0.0.1:${(gateway.server.address() as AddressInfo).port}`, own }
  })
  /** One run of heldBesideOthers, whose outcome two tests read. */
  .extend('besideOthers', { scope: 'file' }, ({ target }) => heldBesideOthers(target))

it.override({ gatewayOptions: { isolate: 'rtdeadl', checkContract: false, env: ENV } })

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

// ---------------------------------------------------------------------------------------------
// Requests, tagged: every letter of a request carries its tag as the recipient's surname.

type Kind = 'single' | 'card' | 'bulk'
interface Plan {
  kind: Kind
  tag: string
  key?: string
  /** Recipients of a bulk request. */
  size?: number
  /** Abort the attempt client-side after this many ms (a client timeout shorter than the server's). */
  abortAfterMs?: number
}
/** What the tests read of an answer's JSON body (empty when there was none, or it was not JSON). */
interface AnswerBody {
  cardId?: string
  cardIds?: Array<string | null>
  message?: string
}
interface Answer {
  status: number
  body: AnswerBody
  retryAfter: string | null
  ms: number
  error?: string
}
interface Owner {
  id: string
  apiKey: string
  cardDesignId: string
  envelopeDesignId: string
  senderId: string
  campaignId: string
  credits: number
}

async function newOwner(target: Target, credits: number): Promise<Owner> {
  const account = await adminAccount(target.app, credits)
  const campaignId = await adminCampaign(target.app, account)
  return { ...account, campaignId, credits }
}

const letterCount = (plan: Plan) => (plan.kind === 'bulk' ? plan.size! : 1)

function bodyOf(owner: Owner, plan: Plan): unknown {
  const recipient = (n: number) => ({ ...spanishRecipient, name: `N${n}`, surname: plan.tag, variables: { cupon: 'A1' } })
  if (plan.kind === 'single') return singleLetter(owner, { surname: plan.tag, message: `Hola ${plan.tag}` })
  if (plan.kind === 'card') return { campaignId: owner.campaignId, ...recipient(0) }
  return { campaignId: owner.campaignId, recipients: Array.from({ length: plan.size! }, (_, n) => recipient(n)) }
}

const path = (kind: Kind) => (kind === 'single' ? '/single' : kind === 'card' ? '/card' : '/cards/bulk')

async function send(url: string, apiKey: string, route: string, body: unknown, key?: string, abortAfterMs?: number): Promise<Answer> {
  const started = Date.now()
  try {
    const response = await fetch(`${url}${route}`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
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
    return { status: response.status, body: parsed, retryAfter: response.headers.get('retry-after'), ms: Date.now() - started }
  } catch (error) {
    // No HTTP answer (a cut connection, or the client's own abort).
    return { status: 0, body: {}, retryAfter: null, ms: Date.now() - started, error: String((error as Error).cause ?? error) }
  }
}

const fire = (target: Target, owner: Owner, plan: Plan, url = target.base) =>
  send(url, owner.apiKey, path(plan.kind), bodyOf(owner, plan), plan.key, plan.abortAfterMs)

/** The ids a 200 answer names. */
function idsOf(plan: Plan, answer: Answer): string[] {
  if (plan.kind === 'bulk') return (answer.body.cardIds ?? []).filter((id): id is string => id !== null)
  return answer.body.cardId === undefined ? [] : [answer.body.cardId]
}

/** The account's letters grouped by tag (the recipient's surname). */
async function lettersByTag(target: Target, accountId: string): Promise<Map<string, string[]>> {
  const rows = await target.own<
    Array<{ tag: string; id: string }>
  >`SELECT recipient->>'surname' AS tag, id::text AS id FROM letters WHERE account_id = ${accountId}::uuid`
  const byTag = new Map<string, string[]>()
  for (const row of rows) byTag.set(row.tag, [...(byTag.get(row.tag) ?? []), row.id])
  return byTag
}

async function money(target: Target, accountId: string) {
  const [account] = await target.own<Array<{ balance: number }>>`SELECT balance FROM accounts WHERE id = ${accountId}::uuid`
  const [charged] = await target.own<Array<{ n: number; sum: number }>>`
    SELECT count(*)::int AS n, coalesce(sum(-amount), 0)::int AS sum FROM ledger_entries WHERE account_id = ${accountId}::uuid AND kind = 'charge'`
  const [letterCost] = await target.own<Array<{ n: number; sum: number }>>`
    SELECT count(*)::int AS n, coalesce(sum(cost), 0)::int AS sum FROM letters WHERE account_id = ${accountId}::uuid AND livemode`
  return { balance: account!.balance, charges: charged!.n, charged: charged!.sum, letters: letterCost!.n, letterCost: letterCost!.sum }
}

interface Audit {
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
  slowest: number
}

/** Compares what each request was told with what the database holds for it. */
async function audit(target: Target, owner: Owner, plans: Plan[], answers: Answer[], allowCut = false): Promise<Audit> {
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

/** Keyed requests not answered 200 are sent again with their key until they are (as the SDK would); returns their outcomes. */
async function settleKeyed(target: Target, owner: Owner, plans: Plan[], answers: Answer[], attempts = 20) {
  const tally = { retried: 0, conflicts: 0, neverSettled: [] as string[], statuses: {} as Record<number, number> }
  await Promise.all(
    plans.map(async (plan, n) => {
      if (!plan.key || answers[n]!.status === 200) return
      tally.retried++
      for (let attempt = 0; attempt < attempts; attempt++) {
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

/** Holds the account's row, as another transaction charging or adjusting it would, until released. */
async function holdAccountRow(target: Target, accountId: string, mode = 'FOR NO KEY UPDATE') {
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
  return async () => {
    if (done) return
    done = true
    release()
    await holder
  }
}

/** Terminates every backend of the test database but the test's own, every `everyMs`, until stopped. */
function terminator(target: Target, everyMs: () => number) {
  let running = true
  let kills = 0
  const loop = (async () => {
    while (running) {
      const killed = await target.own<Array<{ pg_terminate_backend: boolean }>>`
        SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend' AND application_name <> ${OWN}`
      kills += killed.length
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

function mixedPlans(label: string, options: { singles?: number; cards?: number; bulks?: number[] } = {}): Plan[] {
  const { singles = 30, cards = 14, bulks = [1000, 1000, 100, 10] } = options
  const plans: Plan[] = []
  for (let i = 0; i < singles; i++) plans.push({ kind: 'single', tag: `${label}s${i}`, ...(i % 2 === 0 ? { key: `${label}-s${i}` } : {}) })
  for (let i = 0; i < cards; i++) plans.push({ kind: 'card', tag: `${label}c${i}`, ...(i % 2 === 0 ? { key: `${label}-c${i}` } : {}) })
  bulks.forEach((size, i) => plans.push({ kind: 'bulk', tag: `${label}b${i}`, size, ...(i % 2 === 0 ? { key: `${label}-b${i}` } : {}) }))
  return plans
}

/** Diagnostics: when each order reached the intake and when it settled, by tag (the intake's submit wrapped, nothing of src changed). */
function traceIntake(target: Target) {
  const intake = target.app.intake
  const original = intake.submit.bind(intake)
  const t0 = Date.now()
  const rows: string[] = []
  intake.submit = (order) => {
    const tag = order.letters[0]!.recipient.surname
    const at = Date.now() - t0
    const deadline = order.deadline
    return original(order).then(
      (outcome) => {
        rows.push(`${tag} submitted ${at} settled ${Date.now() - t0} ${outcome.outcome} decideBy ${deadline ? deadline.decideBy - t0 : '-'}`)
        return outcome
      },
      (error: unknown) => {
        rows.push(
          `${tag} submitted ${at} failed ${Date.now() - t0} ${(error as Error).name} ${(error as { code?: string }).code ?? ''} decideBy ${deadline ? deadline.decideBy - t0 : '-'}`,
        )
        throw error
      },
    )
  }
  return { stop: () => (intake.submit = original), lines: () => rows }
}

async function drainAndSettle(target: Target) {
  await target.app.intake.drained()
  await sleep(2000)
  await target.app.intake.drained()
}

function report(name: string, data: unknown) {
  console.log(`### ${name}: ${JSON.stringify(data)}`)
}

async function expectMoneyConsistent(target: Target, owner: Owner) {
  await expectLedgerMatchesLetters(target.app.db, owner.id)
  const state = await money(target, owner.id)
  expect(state.balance, JSON.stringify(state)).toBe(owner.credits - state.letterCost)
  expect(state.charged).toBe(state.letterCost)
  return state
}

function expectClean(result: Audit) {
  expect(result.cut, 'requests cut without an answer').toEqual([])
  expect(result.writtenAfterRefusal, 'refused requests whose letters were written').toEqual([])
  expect(result.wrong200, '200s whose letters differ').toEqual([])
  expect(result.unexpected, 'unexpected statuses').toEqual([])
  expect(result.noRetryAfter, '503s without Retry-After').toEqual([])
}

// ---------------------------------------------------------------------------------------------

describe('an account row held (FOR NO KEY UPDATE) around the deadline, under mixed concurrent creations', () => {
  for (const [name, holdMs] of [
    ['just below decideBy', DECIDE - 300],
    ['just above decideBy', DECIDE + 300],
    ['far above decideBy (3 T)', 3 * T],
  ] as const) {
    it(`held ${name} (${holdMs} ms; decideBy ${DECIDE}, answerBy ${ANSWER}): every request answered, 503s write nothing, 200s exactly their letters`, async ({
      target,
    }) => {
      const owner = await newOwner(target, 20_000)
      const plans = mixedPlans(`h${holdMs}`)
      const release = await holdAccountRow(target, owner.id)
      const releasing = sleep(holdMs).then(release)
      const answers = await Promise.all(plans.map((plan) => fire(target, owner, plan)))
      await releasing
      await drainAndSettle(target)
      const first = await audit(target, owner, plans, answers)
      const retries = await settleKeyed(target, owner, plans, answers)
      const after = await audit(target, owner, plans, answers)
      const state = await money(target, owner.id)
      const retryAfters = answers.reduce<Record<string, number>>(
        (all, a) => (a.status === 503 ? { ...all, [`${a.retryAfter}`]: (all[`${a.retryAfter}`] ?? 0) + 1 } : all),
        {},
      )
      report(`lock ${name}`, {
        retryAfters,
        requests: plans.length,
        first: first.statuses,
        slowest: first.slowest,
        unknown: first.unknown,
        retries,
        final: after.statuses,
        state,
      })
      expectClean(first)
      expectClean(after)
      expect(retries.neverSettled).toEqual([])
      // A 500 "outcome unknown" without a key leaves the client nothing to find out with; count them.
      expect(
        first.unknown.filter((u) => !u.keyed && u.letters > 0),
        'unkeyed 500s whose letters were stored',
      ).toEqual([])
      expect(first.slowest).toBeLessThan(T + 1500)
      await expectMoneyConsistent(target, owner)
    }, 60_000)
  }
})

describe("the gateway's Postgres backends terminated (pg_terminate_backend) around the deadline", () => {
  for (const [name, holdMs, every] of [
    ['during writes near decideBy (lock released 200 ms before it)', DECIDE - 200, () => 20 + Math.random() * 130],
    ['in a storm (every 0-10 ms) during writes at decideBy', DECIDE - 150, () => Math.random() * 10],
    ['during deadline refusals (lock held past answerBy)', ANSWER + 1000, () => 20 + Math.random() * 130],
  ] as const) {
    it(`${name}: no 503 with letters, every keyed 500 found by its retry, ledger matches`, async ({ target }) => {
      const owner = await newOwner(target, 20_000)
      const plans = mixedPlans(`t${holdMs}`, { singles: 30, cards: 10, bulks: [1000, 300, 100, 10] })
      const release = await holdAccountRow(target, owner.id)
      const releasing = sleep(holdMs).then(release)
      // Terminations from well before the release until past every answer time, every 20–150 ms.
      const started = sleep(Math.max(0, holdMs - 800)).then(() => terminator(target, every))
      const answers = await Promise.all(plans.map((plan) => fire(target, owner, plan)))
      await releasing
      await sleep(500)
      const kills = await (await started).stop()
      await drainAndSettle(target)
      const first = await audit(target, owner, plans, answers)
      const retries = await settleKeyed(target, owner, plans, answers)
      const after = await audit(target, owner, plans, answers)
      const state = await money(target, owner.id)
      report(`terminations ${name}`, {
        requests: plans.length,
        kills,
        first: first.statuses,
        slowest: first.slowest,
        unknown: first.unknown,
        retries,
        final: after.statuses,
        state,
      })
      expectClean(first)
      expectClean(after)
      expect(retries.neverSettled).toEqual([])
      await expectMoneyConsistent(target, owner)
    }, 60_000)
  }
})

/**
 * Terminates, as fast as it can look, the backends at the end of an intake transaction (the
 * letters' events written, COMMIT next or under way) and the intake's check of what became of a
 * failed commit (committed(): the account row locked FOR UPDATE, then the witness letter).
 */
function commitKiller(target: Target, options: { spareVerification?: boolean } = {}) {
  let running = true
  const seen = { commitWindow: 0, verification: 0 }
  const loop = (async () => {
    while (running) {
      const killed = await target.own<Array<{ what: string }>>`
        WITH b AS (
          SELECT pid, state, regexp_replace(btrim(query), '\\s+', ' ', 'g') AS q FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend' AND application_name <> ${OWN}
        )
        SELECT CASE WHEN q LIKE 'SELECT 1 FROM accounts WHERE id = $1::uuid FOR UPDATE%' THEN 'verification' ELSE 'commitWindow' END AS what,
          pg_terminate_backend(pid) AS done
        FROM b
        WHERE (state = 'idle in transaction' AND q LIKE 'WITH targets AS ( SELECT id, account_id FROM letters WHERE id IN%')
          OR lower(q) = 'commit' OR (NOT ${options.spareVerification ?? false} AND q LIKE 'SELECT 1 FROM accounts WHERE id = $1::uuid FOR UPDATE%')`
      for (const row of killed) seen[row.what as keyof typeof seen]++
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

describe("the intake's commit (and its verification) terminated while writes end near the deadline", () => {
  it('answers each request with what was stored: no 503 with letters, keyed 500s found by their retry, unkeyed 500s counted', async ({ target }) => {
    const owner = await newOwner(target, 50_000)
    const killed = { commitWindow: 0, verification: 0 }
    const statuses: Record<number, number> = {}
    const unknownUnkeyedWithLetters: string[] = []
    const unknownUnkeyedWithout: string[] = []
    for (let round = 0; round < 3; round++) {
      const plans = mixedPlans(`k${round}`, { singles: 40, cards: 10, bulks: [200, 50, 10, 10] })
      const release = await holdAccountRow(target, owner.id)
      const releasing = sleep(DECIDE - 250).then(release)
      const killer = commitKiller(target)
      const answers = await Promise.all(plans.map((plan) => fire(target, owner, plan)))
      await releasing
      const seen = await killer.stop()
      killed.commitWindow += seen.commitWindow
      killed.verification += seen.verification
      await drainAndSettle(target)
      const first = await audit(target, owner, plans, answers)
      for (const [status, n] of Object.entries(first.statuses)) statuses[Number(status)] = (statuses[Number(status)] ?? 0) + n
      for (const u of first.unknown.filter((u) => !u.keyed)) (u.letters > 0 ? unknownUnkeyedWithLetters : unknownUnkeyedWithout).push(u.tag)
      const retries = await settleKeyed(target, owner, plans, answers)
      const after = await audit(target, owner, plans, answers)
      report(`commit killer round ${round}`, { first: first.statuses, unknown: first.unknown, retries, final: after.statuses })
      expectClean(first)
      expectClean(after)
      expect(retries.neverSettled).toEqual([])
    }
    const state = await expectMoneyConsistent(target, owner)
    report('commit killer', { killed, statuses, unknownUnkeyedWithLetters, unknownUnkeyedWithout, state })
  }, 60_000)
})

describe('retries with the same Idempotency-Key while the original may still be in its transaction', () => {
  for (const holdMs of [DECIDE - 100, DECIDE + 700])
    it(`charges each key once, and no key stays 409 once its original is decided (lock released at ${holdMs} ms)`, async ({ target }) => {
      const owner = await newOwner(target, 20_000)
      const plans: Plan[] = [
        // Retried at once after each non-200 answer, ignoring Retry-After.
        ...Array.from({ length: 20 }, (_, i): Plan => ({ kind: 'single', tag: `rs${i}`, key: `r-s${i}` })),
        ...Array.from({ length: 6 }, (_, i): Plan => ({ kind: 'card', tag: `rc${i}`, key: `r-c${i}` })),
        ...[300, 50].map((size, i): Plan => ({ kind: 'bulk', tag: `rb${i}`, key: `r-b${i}`, size })),
        // Impatient: the client gives up on each attempt before the server's decideBy and retries at once.
        ...Array.from({ length: 14 }, (_, i): Plan => ({ kind: 'single', tag: `ri${i}`, key: `r-i${i}`, abortAfterMs: DECIDE - 400 + (i % 7) * 100 })),
        ...[200].map((size, i): Plan => ({ kind: 'bulk', tag: `rib${i}`, key: `r-ib${i}`, size, abortAfterMs: DECIDE - 200 })),
      ]
      const release = await holdAccountRow(target, owner.id)
      const t0 = Date.now()
      const releasing = sleep(holdMs).then(release)
      const tally = { statuses: {} as Record<number, number>, attempts: 0, lastConflictAfterMs: 0, neverSettled: [] as string[] }
      const finals = await Promise.all(
        plans.map(async (plan) => {
          while (Date.now() - t0 < 25_000) {
            tally.attempts++
            const answer = await fire(target, owner, plan)
            const key = answer.status === 0 ? 'aborted' : String(answer.status)
            tally.statuses[key as unknown as number] = (tally.statuses[key as unknown as number] ?? 0) + 1
            if (answer.status === 200) return answer
            if (answer.status === 409) tally.lastConflictAfterMs = Math.max(tally.lastConflictAfterMs, Date.now() - t0)
            // A cut connection not caused by the client's own abort is an answer missing.
            if (answer.status === 0 && !plan.abortAfterMs) return answer
            if (answer.status !== 0 && ![503, 409].includes(answer.status)) return answer
            await sleep(plan.abortAfterMs ? 0 : 5)
          }
          tally.neverSettled.push(plan.tag)
          return { status: -1, body: {}, retryAfter: null, ms: 0 }
        }),
      )
      await releasing
      await drainAndSettle(target)
      const byTag = await lettersByTag(target, owner.id)
      const wrong = plans.flatMap((plan, n) => {
        const answer = finals[n]!
        const found = byTag.get(plan.tag) ?? []
        if (answer.status !== 200) return [`${plan.tag}: ended ${answer.status}`]
        const named = idsOf(plan, answer).sort()
        return JSON.stringify(named) === JSON.stringify(found.sort()) && found.length === letterCount(plan)
          ? []
          : [`${plan.tag}: named ${named.length}, found ${found.length}`]
      })
      const state = await money(target, owner.id)
      report(`same-key retries, lock released at ${holdMs} ms`, { keys: plans.length, ...tally, state })
      expect(tally.neverSettled).toEqual([])
      expect(wrong).toEqual([])
      // A key still answered 409 seconds after the lock went would be stuck.
      expect(tally.lastConflictAfterMs).toBeLessThan(Math.max(holdMs, DECIDE) + 3000)
      await expectMoneyConsistent(target, owner)
    }, 60_000)
})

describe('a gateway process killed (SIGKILL) while its creations wait or are being written', () => {
  for (const [name, holdMs, killAtMs] of [
    ['mid-wait (the account row held, killed at 1.5 s)', 3 * T, 1500],
    ['while writes end near decideBy (lock released 300 ms before it, killed 100 ms later)', DECIDE - 300, DECIDE - 200],
  ] as const) {
    it(`${name}: each keyed request, retried on another gateway, is stored once; nothing is charged twice`, async ({ target }) => {
      const port = await freePort()
      const killedUrl = `${target.app.config.databaseUrl}?application_name=rt-killed-gateway`
      const child: ServiceProcess = await startGatewayProcess(target.app.config, port, { ...ENV, DATABASE_URL: killedUrl })
      const url = `http://127.0.0.1:${port}`
      const owner = await newOwner(target, 20_000)
      const plans = mixedPlans(`p${killAtMs}`, { singles: 24, cards: 8, bulks: [1000, 300, 100, 10] })
      const release = await holdAccountRow(target, owner.id)
      try {
        const releasing = sleep(holdMs).then(release)
        const killing = sleep(killAtMs).then(() => child.kill())
        const answers = await Promise.all(plans.map((plan) => fire(target, owner, plan, url)))
        await killing
        // Postgres finds the dead client within client_connection_check_interval (1 s), even mid lock wait.
        await sleep(1500)
        const lingering = await target.own<Array<{ state: string }>>`SELECT state FROM pg_stat_activity WHERE application_name = 'rt-killed-gateway'`
        await release()
        await releasing
        await sleep(1000)
        const first = await audit(target, owner, plans, answers, true)
        const unkeyedStored = plans.filter((plan, n) => !plan.key && answers[n]!.status === 0).map((plan) => plan.tag)
        const retries = await settleKeyed(target, owner, plans, answers)
        const after = await audit(target, owner, plans, answers, true)
        const byTag = await lettersByTag(target, owner.id)
        const state = await money(target, owner.id)
        report(`SIGKILL ${name}`, {
          requests: plans.length,
          first: first.statuses,
          lingeringBackendsAfter1500ms: lingering.map((row) => row.state),
          retries,
          final: after.statuses,
          unkeyedCutWithLetters: unkeyedStored.filter((tag) => (byTag.get(tag) ?? []).length > 0).length,
          unkeyedCutWithout: unkeyedStored.filter((tag) => (byTag.get(tag) ?? []).length === 0).length,
          state,
        })
        expect(first.writtenAfterRefusal).toEqual([])
        expect(after.wrong200).toEqual([])
        expect(retries.neverSettled).toEqual([])
        // Every keyed request ends 200 with exactly its letters.
        plans.forEach((plan, n) => {
          if (plan.key) expect(answers[n]!.status, plan.tag).toBe(200)
        })
        await expectMoneyConsistent(target, owner)
      } finally {
        await release()
        await child.kill()
      }
    }, 60_000)
  }
})

/** The longest the event loop stood still while `work` ran, sampled every 10 ms. */
async function withLoopLag<R>(work: () => Promise<R>): Promise<{ result: R; maxLagMs: number }> {
  let maxLagMs = 0
  let last = Date.now()
  const timer = setInterval(() => {
    const now = Date.now()
    maxLagMs = Math.max(maxLagMs, now - last - 10)
    last = now
  }, 10)
  try {
    return { result: await work(), maxLagMs }
  } finally {
    clearInterval(timer)
  }
}

describe('event-loop pressure: CPU-bound 1,000-recipient bulk requests delaying the deadline timers', () => {
  for (const [name, holdMs] of [
    ['the account row held past the deadline', 3 * T],
    ['no lock: the CPU alone', 0],
  ] as const) {
    it(`${name}: every request answered before its connection is cut, 503s with nothing written`, async ({ target }) => {
      const owner = await newOwner(target, 50_000)
      const plans = mixedPlans(`e${holdMs}`, { singles: 20, cards: 6, bulks: [1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000] })
      const release = holdMs > 0 ? await holdAccountRow(target, owner.id) : async () => {}
      const releasing = sleep(holdMs).then(release)
      const { result: answers, maxLagMs } = await withLoopLag(() => Promise.all(plans.map((plan) => fire(target, owner, plan))))
      await releasing
      await drainAndSettle(target)
      const first = await audit(target, owner, plans, answers)
      const retries = await settleKeyed(target, owner, plans, answers)
      const after = await audit(target, owner, plans, answers)
      const bulkMs = plans.flatMap((plan, n) => (plan.kind === 'bulk' ? [answers[n]!.ms] : []))
      const early = plans.flatMap((plan, n) =>
        answers[n]!.status === 503 && answers[n]!.ms < DECIDE - 100
          ? [`${plan.tag} ${answers[n]!.ms}ms retry-after ${answers[n]!.retryAfter}: ${answers[n]!.body.message}`]
          : [],
      )
      if (early.length > 0) console.log(early.join('\n'))
      report(`event loop, ${name}`, {
        requests: plans.length,
        first: first.statuses,
        maxLagMs,
        bulkMs,
        slowest: first.slowest,
        unknown: first.unknown,
        retries,
        final: after.statuses,
      })
      expectClean(first)
      expectClean(after)
      expect(retries.neverSettled).toEqual([])
      await expectMoneyConsistent(target, owner)
    }, 60_000)
  }
})

async function httpCall(method: string, url: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
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

const topUp = (target: Target, accountId: string, reason: string) =>
  httpCall('POST', `${target.base}/admin/accounts/${accountId}/credits`, { authorization: `Bearer ${ADMIN_TOKEN}` }, { amount: 1, reason })

const tally = (answers: Answer[]) => answers.reduce<Record<number, number>>((all, a) => ({ ...all, [a.status]: (all[a.status] ?? 0) + 1 }), {})

async function appliedTopUps(target: Target, accountId: string, reason: string): Promise<number> {
  const [row] = await target.own<Array<{ n: number }>>`
    SELECT count(*)::int AS n FROM ledger_entries WHERE account_id = ${accountId}::uuid AND kind = 'top_up' AND reason = ${reason}`
  return row!.n
}

async function cancelledIds(target: Target, accountId: string): Promise<Set<string>> {
  const rows = await target.own<Array<{ id: string }>>`SELECT id::text AS id FROM letters WHERE account_id = ${accountId}::uuid AND status = 'cancelled'`
  return new Set(rows.map((row) => row.id))
}

/** Makes `count` letters of the owner (tags `${prefix}${i}`) and returns their ids. */
async function someLetters(target: Target, owner: Owner, prefix: string, count: number): Promise<string[]> {
  const made = await Promise.all(Array.from({ length: count }, (_, i) => fire(target, owner, { kind: 'single', tag: `${prefix}${i}` })))
  for (const answer of made) expect(answer.status, JSON.stringify(answer.body)).toBe(200)
  return made.map((answer) => answer.body.cardId!)
}

/**
 * The pool of 10 connections taken by statements waiting for a held account row (admin top-ups,
 * as ops adjusting a balance would send): each holds its connection for up to the statement
 * timeout, and the ones queued behind them start only then.
 */
function saturatePool(target: Target, accountId: string, reason: string, count = 30) {
  return Promise.all(Array.from({ length: count }, () => topUp(target, accountId, reason)))
}

describe('the deadline timers and a gateway pool busy with lock waits', () => {
  // A creation held past decideBy by its account's row is answered by the deadline's timer
  // (Retry-After: 2), not later by the intake's refusal through the error handler (Retry-After: 5).
  it("answers a creation with a body at decideBy from the deadline's timer (Retry-After 2, not the intake's 5)", async ({ target }) => {
    const owner = await newOwner(target, 100)
    const [cardId] = await someLetters(target, owner, 'm', 1)
    const release = await holdAccountRow(target, owner.id)
    try {
      const [created, cancelled] = await Promise.all([
        fire(target, owner, { kind: 'single', tag: 'marker' }),
        httpCall('DELETE', `${target.base}/cards/${cardId}`, { 'x-api-key': owner.apiKey }),
      ])
      report('who answers at decideBy', {
        postWithBody: [created.status, created.ms, created.retryAfter, created.body.message],
        deleteWithoutBody: [cancelled.status, cancelled.ms, cancelled.retryAfter, cancelled.body.message],
      })
      // The bodiless DELETE is answered by a timer (503 at decideBy, or 500 at answerBy where only GETs and creations are 503'd).
      expect(cancelled.status).not.toBe(0)
      expect(created.status).toBe(503)
      expect(created.retryAfter, "the timer's Retry-After").toBe('2')
    } finally {
      await sleep(500)
      await release()
    }
  }, 30_000)

  // Creations waiting for a pooled connection are answered by the deadline, as bodiless DELETEs
  // beside them are, never cut at T.
  it('answers creations waiting for a pooled connection before T, as it answers bodiless DELETEs beside them', async ({ target }) => {
    const held = await newOwner(target, 1000)
    const other = await newOwner(target, 1000)
    const toCancel = await someLetters(target, other, 'd', 4)
    const release = await holdAccountRow(target, held.id)
    const releasing = sleep(3 * T).then(release)
    // The other account's key is looked up now (cached 1 s): its requests pass the API-key check
    // at once, arm their deadline, and wait for a connection in the handler.
    const warm = await httpCall('GET', `${target.base}/cards?limit=1`, { 'x-api-key': other.apiKey })
    expect(warm.status).toBe(200)
    const trace = traceIntake(target)
    const warmedAt = Date.now()
    const topUps = saturatePool(target, held.id, 'rt-d1')
    // Well within the key's 1 s cache: the creations reach their handler, then wait for the pool.
    await sleep(100)
    const plans = Array.from({ length: 8 }, (_, i): Plan => ({ kind: i < 6 ? 'single' : 'card', tag: `dd${i}`, ...(i % 2 === 0 ? { key: `dd-${i}` } : {}) }))
    const firedAt = Date.now()
    const [answers, deletes] = await Promise.all([
      Promise.all(plans.map((plan) => fire(target, other, plan))),
      Promise.all(toCancel.map((id) => httpCall('DELETE', `${target.base}/cards/${id}`, { 'x-api-key': other.apiKey }))),
    ])
    const topUpAnswers = await topUps
    await releasing
    await drainAndSettle(target)
    trace.stop()
    if (process.env.RT_DEBUG) console.log(`creations sent ${firedAt - warmedAt} ms after the key was looked up\n${trace.lines().join('\n')}`)
    const result = await audit(target, other, plans, answers)
    const cancelledNow = await cancelledIds(target, other.id)
    const byTag = await lettersByTag(target, other.id)
    report('deadline timers with bodies', {
      ordersThatReachedTheIntake: trace.lines().length,
      creations: answers.map((a) => [a.status, a.ms, a.retryAfter]),
      lettersOfCutCreations: plans.filter((plan, n) => answers[n]!.status === 0).reduce((sum, plan) => sum + (byTag.get(plan.tag) ?? []).length, 0),
      deletes: deletes.map((a) => [a.status, a.ms, a.retryAfter]),
      cancelsAppliedAfter503: toCancel.filter((id, n) => deletes[n]!.status === 503 && cancelledNow.has(id)).length,
      topUps: tally(topUpAnswers),
      topUpsApplied: await appliedTopUps(target, held.id, 'rt-d1'),
      topUps200: topUpAnswers.filter((a) => a.status === 200).length,
    })
    expect(result.writtenAfterRefusal).toEqual([])
    // The bodiless DELETEs were answered by a deadline timer before T.
    for (const answer of deletes) expect([500, 503]).toContain(answer.status)
    expect(result.cut, 'creations cut without an answer').toEqual([])
  }, 60_000)

  // Failed on the tree first attacked (the deadline armed in preValidation, after the onRequest
  // API-key lookup, which waits for a pooled connection like any query: all 10 cut at T). Holds
  // once the deadline is armed in onRequest: the body is not read yet, so the 503 goes out.
  it('creations of another, unlocked account whose API-key lookup waits for the busy pool are answered before T, not cut', async ({ target }) => {
    const held = await newOwner(target, 1000)
    const other = await newOwner(target, 1000)
    const release = await holdAccountRow(target, held.id)
    const releasing = sleep(3 * T).then(release)
    const topUps = saturatePool(target, held.id, 'rt-d2')
    await sleep(300)
    // The other account's key was never looked up: its lookup needs a connection.
    const plans = Array.from({ length: 10 }, (_, i): Plan => ({ kind: 'single', tag: `o${i}`, ...(i % 2 === 0 ? { key: `o-${i}` } : {}) }))
    const answers = await Promise.all(plans.map((plan) => fire(target, other, plan)))
    const topUpAnswers = await topUps
    await releasing
    await drainAndSettle(target)
    const result = await audit(target, other, plans, answers)
    const applied = await appliedTopUps(target, held.id, 'rt-d2')
    report('API-key lookup behind a busy pool', {
      otherAccount: result.statuses,
      cut: result.cut.slice(0, 2),
      otherMs: answers.map((a) => a.ms),
      topUps: tally(topUpAnswers),
      topUpsApplied: applied,
    })
    expect(result.writtenAfterRefusal).toEqual([])
    expect(result.cut, 'requests of an unlocked account cut without an answer').toEqual([])
  }, 60_000)

  // Each statement may run DATABASE_STATEMENT_TIMEOUT_MS from when it starts, not from when its
  // request arrived. Failed on the tree first attacked (every request 503'd at decideBy with
  // "Repítela", and the statement timeout = decideBy): 2 to 4 cancels of 6 were applied, refunds
  // included, after their 503. Holds once only reads and creations are 503'd at decideBy.
  it('client cancels and admin top-ups answered 503 at their deadline are not applied afterwards (a 200 is, a 500 may be)', async ({ target }) => {
    const owner = await newOwner(target, 1000)
    const cardIds = await someLetters(target, owner, 'x', 6)
    const before = await money(target, owner.id)
    const release = await holdAccountRow(target, owner.id)
    const releasing = sleep(DECIDE + 800).then(release)
    const [topUps, cancels] = await Promise.all([
      Promise.all(Array.from({ length: 14 }, (_, i) => topUp(target, owner.id, `rt-late-${i}`))),
      Promise.all(cardIds.map((id) => httpCall('DELETE', `${target.base}/cards/${id}`, { 'x-api-key': owner.apiKey }))),
    ])
    await releasing
    await sleep(2000)
    const reasons = new Set(
      (
        await target.own<
          Array<{ reason: string }>
        >`SELECT reason FROM ledger_entries WHERE account_id = ${owner.id}::uuid AND kind = 'top_up' AND reason LIKE 'rt-late-%'`
      ).map((row) => row.reason),
    )
    const cancelled = await cancelledIds(target, owner.id)
    const after = await money(target, owner.id)
    const retried = await Promise.all(cardIds.map((id) => httpCall('DELETE', `${target.base}/cards/${id}`, { 'x-api-key': owner.apiKey })))
    // Each request, what it was told and whether it was done.
    const topUpTold = topUps.map((a, i) => ({ status: a.status, ms: a.ms, applied: reasons.has(`rt-late-${i}`) }))
    const cancelTold = cancels.map((a, n) => ({
      status: a.status,
      ms: a.ms,
      retryAfter: a.retryAfter,
      applied: cancelled.has(cardIds[n]!),
      message: a.body.message,
    }))
    const lies = [...topUpTold.map((t) => ({ what: 'top-up', ...t })), ...cancelTold.map((t) => ({ what: 'cancel', ...t }))].filter(
      (t) => (t.status === 200 && !t.applied) || (t.status !== 200 && t.status !== 500 && t.applied),
    )
    report('late statements', {
      topUps: topUpTold.map((t) => [t.status, t.ms, t.applied]),
      cancels: cancelTold.map((t) => [t.status, t.ms, t.retryAfter, t.applied]),
      messages: [...new Set([...cancels, ...topUps].filter((a) => a.status >= 500).map((a) => `${a.status} ${a.body.message}`))],
      cancelRetriedAsAdvised: tally(retried),
      balanceBefore: before.balance,
      balanceAfter: after.balance,
    })
    await expectLedgerMatchesLetters(target.app.db, owner.id)
    // A 503 (or 4xx) whose work was done anyway; a 200 whose work was not.
    expect(lies).toEqual([])
  }, 60_000)
})

describe('the answerBy 500 of a creation whose commit failed', () => {
  // The commit of a write near decideBy is cut (its backend terminated) and, while the intake
  // finds out what became of it, another transaction holds the account's row: the client is
  // told in time (200, 503 with nothing written, or 500 "outcome unknown" at answerBy).
  it('answers a creation whose commit was cut in time, never cutting it at T, and keyed retries find what was stored', async ({ target }) => {
    const owner = await newOwner(target, 20_000)
    const all: Array<{ plans: Plan[]; answers: Answer[] }> = []
    let killed = { commitWindow: 0, verification: 0 }
    for (let round = 0; round < 3; round++) {
      const plans = mixedPlans(`u${round}`, { singles: 30, cards: 6, bulks: [100, 10] })
      const release = await holdAccountRow(target, owner.id)
      let relock: (() => Promise<void>) | undefined
      const releasing = sleep(DECIDE - 250).then(async () => {
        const again = holdAccountRow(target, owner.id)
        await release()
        relock = await again
        await sleep(4000)
        await relock()
      })
      const killer = commitKiller(target, { spareVerification: true })
      const answers = await Promise.all(plans.map((plan) => fire(target, owner, plan)))
      const seen = await killer.stop()
      killed = { commitWindow: killed.commitWindow + seen.commitWindow, verification: killed.verification + seen.verification }
      await releasing
      all.push({ plans, answers })
    }
    await drainAndSettle(target)
    const plans = all.flatMap((round) => round.plans)
    const answers = all.flatMap((round) => round.answers)
    const first = await audit(target, owner, plans, answers)
    const byTag = await lettersByTag(target, owner.id)
    const cut = plans.flatMap((plan, n) =>
      answers[n]!.status === 0 ? [{ tag: plan.tag, keyed: !!plan.key, ms: answers[n]!.ms, letters: (byTag.get(plan.tag) ?? []).length }] : [],
    )
    const retries = await settleKeyed(target, owner, plans, answers)
    const after = await audit(target, owner, plans, answers, true)
    report('answerBy after a failed commit', { killed, first: first.statuses, unknown: first.unknown.length, cut, retries, final: after.statuses })
    expect(first.writtenAfterRefusal).toEqual([])
    expect(after.wrong200).toEqual([])
    expect(retries.neverSettled).toEqual([])
    await expectMoneyConsistent(target, owner)
    expect(first.cut, 'creations cut without an answer (no 500 at answerBy)').toEqual([])
  }, 60_000)
})

describe('a gateway process stopped (SIGTERM) while its creations wait on a held account row', () => {
  it('answers every waiting creation 503 after its 3 s grace, writes nothing, and exits within its drain time', async ({ target }) => {
    const port = await freePort()
    const child = await startGatewayProcess(target.app.config, port, { ...ENV, HTTP_REQUEST_TIMEOUT_MS: '20000' })
    const url = `http://127.0.0.1:${port}`
    const owner = await newOwner(target, 20_000)
    const plans = mixedPlans('q', { singles: 20, cards: 6, bulks: [1000, 100] })
    const release = await holdAccountRow(target, owner.id)
    try {
      const pending = Promise.all(plans.map((plan) => fire(target, owner, plan, url)))
      await sleep(1000)
      const stoppedAt = Date.now()
      child.child.kill('SIGTERM')
      const answers = await pending
      const exit = await Promise.race([child.exited, sleep(15_000).then(() => 'still running')])
      const exitedAfterMs = Date.now() - stoppedAt
      await release()
      await sleep(1500)
      const result = await audit(target, owner, plans, answers)
      const retryAfters = tally(answers.map((a) => ({ ...a, status: Number(a.retryAfter ?? -1) })))
      report('SIGTERM', { requests: plans.length, statuses: result.statuses, retryAfters, answeredWithinMs: result.slowest, exit, exitedAfterMs })
      expectClean(result)
      expect(await money(target, owner.id)).toMatchObject({ letters: 0, charges: 0, balance: owner.credits })
      expect(result.slowest).toBeLessThan(1000 + 3000 + 2000)
    } finally {
      await release()
      await child.kill()
    }
  }, 60_000)
})

/** Account A's row held for 3 T while A's client keeps sending creations, and four other (unlocked) accounts send theirs among them. */
async function heldBesideOthers(target: Target) {
  const held = await newOwner(target, 20_000)
  const others = await Promise.all(Array.from({ length: 4 }, () => newOwner(target, 1000)))
  const trace = traceIntake(target)
  const heldPlans = mixedPlans('ha', { singles: 30, cards: 6, bulks: [100, 10] })
  const otherPlans = others.map((_, o) =>
    Array.from({ length: 8 }, (_, i): Plan => ({ kind: 'single', tag: `ob${o}x${i}`, ...(i % 2 === 0 ? { key: `ob-${o}-${i}` } : {}) })),
  )
  const release = await holdAccountRow(target, held.id)
  const releasing = sleep(3 * T).then(release)
  // The held account's requests keep coming, as a client's would; the others' come among them.
  const heldAnswers = Promise.all(heldPlans.map((plan, n) => sleep((n % 10) * 150).then(() => fire(target, held, plan))))
  const otherAnswers = await Promise.all(
    others.map((owner, o) => Promise.all(otherPlans[o]!.map((plan, n) => sleep(200 + n * 150).then(() => fire(target, owner, plan))))),
  )
  const heldDone = await heldAnswers
  await releasing
  await drainAndSettle(target)
  trace.stop()
  if (process.env.RT_DEBUG) console.log(trace.lines().join('\n'))
  const results = await Promise.all(others.map((owner, o) => audit(target, owner, otherPlans[o]!, otherAnswers[o]!)))
  const heldResult = await audit(target, held, heldPlans, heldDone)
  const statuses = results.reduce<Record<string, number>>((all, r) => {
    for (const [k, v] of Object.entries(r.statuses)) all[k] = (all[k] ?? 0) + v
    return all
  }, {})
  const otherMs = otherAnswers.flat().map((a) => a.ms)
  const otherMedianMs = [...otherMs].sort((a, b) => a - b)[Math.floor(otherMs.length / 2)]!
  report('other accounts beside a held one', {
    held: heldResult.statuses,
    heldCut: heldResult.cut,
    others: statuses,
    otherMsMedian: otherMedianMs,
    otherMs,
  })
  for (const result of results) expect(result.writtenAfterRefusal).toEqual([])
  expect(heldResult.writtenAfterRefusal).toEqual([])
  for (const owner of others) await expectMoneyConsistent(target, owner)
  await expectMoneyConsistent(target, held)
  return { held: heldResult, others: results, statuses, otherMedianMs }
}

describe("one account's row held while its client keeps sending, other accounts sending among them", () => {
  // An abandoned order leaves the intake's queues at once: its request is answered at decideBy.
  it("answers the held account's creations at decideBy, not when the intake reaches them", async ({ besideOthers }) => {
    const { held } = besideOthers
    expect(held.cut, "held account's creations cut without an answer").toEqual([])
  }, 60_000)

  // A batch that gave way to the held account's row is stored again without the held account's
  // orders: only those wait.
  it("stores other, unlocked accounts' creations without delay while one account is held", async ({ besideOthers }) => {
    const { others, statuses, otherMedianMs } = besideOthers
    for (const result of others) expect(result.cut).toEqual([])
    // Unlocked, each is a few tens of milliseconds; behind the held account, about decideBy.
    expect({ statuses, slowerThanASecond: otherMedianMs > 1000 }, "the other accounts' creations").toEqual({
      statuses: { 200: others.length * 8 },
      slowerThanASecond: false,
    })
  }, 60_000)
})

describe("the SDK against a held account row and terminated backends, its own attempt timeout shorter than the server's", () => {
  it('stores each call once: attempts abandoned client-side and 503s are retried with the same key, and the key it hands back settles the rest', async ({
    target,
  }) => {
    const owner = await newOwner(target, 1000)
    // Each attempt abandoned after decideBy − 300 ms: the retry arrives while the first may still be in its transaction.
    const client = createClient({ apiKey: owner.apiKey, baseUrl: target.base, retries: 4, retryDelayMs: 100, timeoutMs: DECIDE - 300 })
    const release = await holdAccountRow(target, owner.id)
    const releasing = sleep(DECIDE + 1500).then(release)
    const kill = sleep(DECIDE - 600).then(() => terminator(target, () => 50 + Math.random() * 200))
    const bodies = Array.from({ length: 16 }, (_, i) => singleLetter(owner, { surname: `sdk${i}`, message: `Hola sdk${i}` }))
    const calls = await Promise.all(
      bodies.map((body) =>
        client.POST('/single', { body }).then(
          (result) => ({ ok: true as const, key: result.idempotencyKey, cardId: result.data!.cardId }),
          (error: unknown) => ({
            ok: false as const,
            kind: error instanceof LettersApiError ? `api ${error.status}` : error instanceof LettersConnectionError ? 'connection' : String(error),
            key: (error as LettersApiError | LettersConnectionError).idempotencyKey,
          }),
        ),
      ),
    )
    await releasing
    await (await kill).stop()
    await drainAndSettle(target)
    const failures = calls.filter((call) => !call.ok)
    const settled = await Promise.all(
      calls.map(async (call, i) => {
        if (call.ok) return call.cardId
        expect(call.key, 'the failed call hands back its key').toEqual(expect.any(String))
        const again = await client.POST('/single', { body: bodies[i]!, idempotencyKey: call.key! })
        return again.data!.cardId
      }),
    )
    const byTag = await lettersByTag(target, owner.id)
    report('SDK', {
      calls: calls.length,
      storedWithinRetries: calls.filter((call) => call.ok).length,
      failures: failures.map((call) => (call.ok ? '' : call.kind)),
    })
    bodies.forEach((_, i) => expect(byTag.get(`sdk${i}`), `sdk${i}`).toEqual([settled[i]]))
    await expectMoneyConsistent(target, owner)
  }, 60_000)
})
