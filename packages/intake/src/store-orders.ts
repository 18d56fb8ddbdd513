import { eq, sql as drizzleSql } from 'drizzle-orm'
import type { TransactionSql } from 'postgres'
import { DRAWING_REVISION, modeLabel, publicApi } from '@letters/contracts'
import { connectionStatementTimeoutMs, letters, outboxTargetSql, type Db } from '@letters/db'
import { metrics } from '@letters/observability'
import { OLD_CLAIM_ABANDONED_AFTER_SECONDS, idempotencyLockName, keyVerdict, storedKeyColumns, type StoredKey } from './idempotency.js'
import { json } from './json.js'
import { DeadlineExceededError, type LetterDraft, type LetterOrder, type OrderDeadline, type OrderOutcome } from './orders.js'
import { checkChoices, refusalOf, type CheckRow, type Choice } from './ownership.js'
import { firstLetterEventsCtes } from '@letters/letters'

/**
 * The transaction failed while committing and what became of it could not be found out: it may
 * have committed. Its orders must not be stored again (that could charge twice); their requests
 * get an error, and a client retry with its Idempotency-Key finds the stored answer if there is one.
 */
export class CommitUnknownError extends Error {
  override name = 'CommitUnknownError'
  /** The commit's own failure, kept apart from `cause` so nothing reads it as a dependency merely unavailable. */
  readonly commitError: unknown
  constructor(commitError: unknown) {
    super('the outcome of the intake transaction is unknown: it failed while committing')
    this.commitError = commitError
  }
}

/** The transaction failed while committing, and was found rolled back: nothing of it was kept, its orders may be stored again. */
export class RolledBackError extends Error {
  override name = 'RolledBackError'
  constructor(override readonly cause: unknown) {
    super('the intake transaction failed while committing and was rolled back')
  }
}

/** Options of one storeOrders call. */
export interface StoreOptions {
  /** Longest the batch waits for an account's row before giving up (Postgres error 55P03); unset: up to the statement timeout. */
  lockTimeoutMs?: number
  /**
   * Leave out the orders whose account's row another transaction holds (each `held`), and store
   * the others: a batch that gave way to a held account is stored again so, and only the held
   * account's orders wait.
   */
  skipHeld?: boolean
}

/** An order left out by `skipHeld`: its account's row was held by another transaction; nothing of it was written. */
export const HELD = { outcome: 'held' } as const
export type HeldOutcome = typeof HELD

/** A key changed between its check and its write (an older replica's claim): the whole transaction rolls back. */
export class KeyTakenMeanwhileError extends Error {
  override name = 'KeyTakenMeanwhileError'
  constructor() {
    super('an Idempotency-Key was claimed by another writer while the order was being stored')
  }
}

/** A letter as the write statement reads it. */
interface LetterRow extends Omit<LetterDraft, 'sendAt'> {
  n: number
  accountId: string
  livemode: boolean
  /** ISO 8601, or null. */
  sendAt: string | null
  /** The balance its charge leaves; null for a test letter, which is not charged. */
  balanceAfter: number | null
}

function validateOrders(orders: LetterOrder[]): void {
  for (const order of orders) {
    if (order.letters.length === 0) throw new RangeError('an order holds at least one letter')
    for (const letter of order.letters) {
      if (!Number.isSafeInteger(letter.cost) || letter.cost <= 0) throw new RangeError(`a letter costs a positive whole number of credits, got ${letter.cost}`)
    }
  }
}

/** The distinct choices of an order's letters: a bulk order usually has one. */
function choicesOf(order: LetterOrder, n: number): Choice[] {
  const seen = new Map<string, Choice>()
  for (const letter of order.letters) {
    const choice: Choice = {
      n,
      account: order.accountId,
      livemode: order.livemode,
      addresses: [],
      card: letter.cardDesignId,
      envelope: letter.envelopeDesignId,
      sender: letter.senderId,
      signature: letter.signatureId,
      campaign: letter.campaignId,
    }
    seen.set(`${choice.card}/${choice.envelope}/${choice.sender}/${choice.signature}/${choice.campaign}`, choice)
  }
  const choices = [...seen.values()]
  // The order's addresses go with one of its choices: each is looked for once.
  choices[0]!.addresses = [...new Set(order.letters.flatMap((letter) => (letter.suppressionKey === null ? [] : [letter.suppressionKey])))]
  return choices
}

/**
 * Charges and stores a batch of orders in one transaction: each order's letters, their first
 * events, their address jobs in the outbox, one ledger entry per letter and the order's
 * Idempotency-Key answer. Orders are taken in the given order, as if one after another: each is
 * checked (its key, that the account owns its designs and sender, that its campaign is active)
 * and paid from the balance the orders before it left, all or nothing. An order that fails a
 * check or cannot be paid writes nothing and does not affect the others. Returns one outcome
 * per order, in order.
 *
 * Round trips: BEGIN; for orders with keys, their advisory locks, then their stored answers;
 * the account rows locked `FOR UPDATE` in id order (concurrent batches never deadlock) together
 * with the ownership checks; the write statement, which also writes the letters' first events;
 * COMMIT. Four for a batch without keys, six with, however many orders it holds.
 *
 * Only statements that do not depend on each other share a round trip: postgres.js describes a
 * statement with parameters before its first run on a connection, and a statement queued behind
 * it may then run first (a COMMIT pipelined behind the write was seen to run before it, outside
 * the transaction).
 */
export async function storeOrders(db: Db, orders: LetterOrder[], options?: StoreOptions & { skipHeld?: false }): Promise<OrderOutcome[]>
export async function storeOrders(db: Db, orders: LetterOrder[], options: StoreOptions & { skipHeld: true }): Promise<Array<OrderOutcome | HeldOutcome>>
export async function storeOrders(db: Db, orders: LetterOrder[], options: StoreOptions = {}): Promise<Array<OrderOutcome | HeldOutcome>> {
  validateOrders(orders)
  if (orders.length === 0) return []
  if (orders.some((order) => order.deadline?.abandoned)) throw new DeadlineExceededError()
  const transaction: Transaction = { options, writing: [], statementTimeoutMs: connectionStatementTimeoutMs(db) }
  // Nothing was written: the orders being written may be written again, or abandoned.
  const notWriting = () => transaction.writing.forEach((deadline) => deadline.stopWriting())
  try {
    // Raw postgres.js kept: the intake's batch, one transaction whose round trips (above) are
    // laid out statement by statement as postgres.js sends them, prepared and pipelined.
    const outcomes = await db.$client.begin((sql) => storeInTransaction(sql, transaction, orders))
    countStored(orders, outcomes)
    return outcomes
  } catch (error) {
    const { committing } = transaction
    if (!committing) {
      notWriting()
      throw error
    }
    const kept = await committed(db, committing.witness).catch(() => undefined)
    if (kept === undefined) throw new CommitUnknownError(error)
    if (!kept) {
      notWriting()
      throw new RolledBackError(error)
    }
    countStored(orders, committing.outcomes)
    return committing.outcomes
  }
}

/** The least time any order of the batch has left before it must be decided, or undefined when none has a deadline. */
function leastRemaining(orders: LetterOrder[]): number | undefined {
  const left = orders.flatMap((order) => (order.deadline ? [order.deadline.remaining()] : []))
  return left.length === 0 ? undefined : Math.min(...left)
}

/**
 * Marks the orders about to be written as such, all or none: if one of them was abandoned or
 * its time is up, none is written and the transaction rolls back. Returns how long the write
 * may take, from the orders' answer times (undefined: no deadline).
 */
function startWriting(transaction: Transaction, orders: LetterOrder[]): number | undefined {
  const now = Date.now()
  for (const order of orders) {
    if (!order.deadline) continue
    if (!order.deadline.startWriting(now)) throw new DeadlineExceededError()
    transaction.writing.push(order.deadline)
  }
  const answerBy = orders.flatMap((order) => (order.deadline ? [order.deadline.answerBy] : []))
  if (answerBy.length === 0) return undefined
  const allowed = Math.min(...answerBy) - now - WRITE_ANSWER_MARGIN_MS
  if (allowed < 1) throw new DeadlineExceededError()
  return allowed
}

/** Kept between the end of the write and the answer's time: the COMMIT's round trip and the answer itself. */
const WRITE_ANSWER_MARGIN_MS = 100

interface Transaction {
  options: StoreOptions
  /** The connection's own statement timeout: a write allowed at least this long needs no shorter one of its own. */
  statementTimeoutMs: number | undefined
  /** The deadlines of the orders this transaction has started writing. */
  writing: OrderDeadline[]
  /** Set once something was written and the transaction is about to commit: from then on a failure leaves the outcome to be found out. */
  committing?: { outcomes: Outcome[]; witness: Witness }
}

/**
 * Whether the transaction that wrote `witness` committed, once it is over, asked of Postgres by
 * its transaction id: no lock is waited for, so another transaction holding the account's row
 * does not hold up the answer. A transaction still in progress (its connection gone, Postgres
 * not yet aware) is asked again until it is over, for as long as a statement may last.
 */
async function committed(db: Db, witness: Witness): Promise<boolean> {
  for (let waited = 0; ; waited += COMMIT_POLL_MS) {
    const [row] = await db.execute<{ status: string | null }>(drizzleSql`SELECT txid_status(${witness.xid}::bigint) AS status`)
    if (row?.status === 'committed') return true
    if (row?.status === 'aborted') return false
    // Too old for Postgres to remember (it ended long ago): the letter tells, the batch being all or nothing.
    if (row?.status == null) return (await db.select({ id: letters.id }).from(letters).where(eq(letters.id, witness.letterId))).length > 0
    if (waited >= COMMIT_POLL_LIMIT_MS) throw new Error(`transaction ${witness.xid} still in progress`)
    await new Promise((resolve) => setTimeout(resolve, COMMIT_POLL_MS))
  }
}

const COMMIT_POLL_MS = 100
const COMMIT_POLL_LIMIT_MS = 10_000

/** What tells whether a transaction committed: its id, and one letter it wrote. */
interface Witness {
  xid: string
  letterId: string
}

type Outcome = OrderOutcome | HeldOutcome

async function storeInTransaction(sql: TransactionSql, transaction: Transaction, orders: LetterOrder[]): Promise<Outcome[]> {
  const outcomes: Array<Outcome | undefined> = orders.map(() => undefined)
  // Each key is locked and read once; an order that repeats a key given earlier in the batch
  // is a copy of a request in flight (or, if the key was answered before, replayed).
  const firstWithKey = new Map<string, number>()
  orders.forEach((order, n) => {
    if (!order.idempotency) return
    const name = idempotencyLockName(order.accountId, order.livemode, order.idempotency.key)
    if (!firstWithKey.has(name)) firstWithKey.set(name, n)
  })
  const keyOf = (n: number) => firstWithKey.get(idempotencyLockName(orders[n]!.accountId, orders[n]!.livemode, orders[n]!.idempotency!.key))!

  const keyRows = [...firstWithKey.entries()].map(([name, n]) => ({
    n,
    name,
    account: orders[n]!.accountId,
    livemode: orders[n]!.livemode,
    key: orders[n]!.idempotency!.key,
  }))
  if (keyRows.length > 0) {
    // The keys first, before any account row is waited for: a copy of a request still in its
    // transaction is told so at once. The stored keys are read by a statement of their own,
    // once the locks are held (a statement's snapshot is taken when it starts), so a request
    // that held a key and committed meanwhile is seen.
    const held = await sql<Array<{ n: number; held: boolean }>>`
      SELECT i.n, pg_try_advisory_xact_lock(hashtextextended(i.name, 0)) AS held
      FROM jsonb_to_recordset(${json(keyRows)}::jsonb) AS i(n int, name text)`
    // postgres.js text: the intake's batch is its own pipelined transaction, and the column list
    // is shared with answeredBefore (storedKeyColumns), our own constant text.
    const stored = await sql.unsafe<Array<StoredKey & { n: number }>>(
      `SELECT i.n, ${storedKeyColumns}
       FROM jsonb_to_recordset($1::jsonb) AS i(n int, account uuid, livemode boolean, key text)
       JOIN idempotency_keys k ON k.account_id = i.account AND k.livemode = i.livemode AND k.key = i.key AND k.expires_at >= now()`,
      [json(keyRows)],
      { prepare: true },
    )
    const heldKeys = new Map(held.map((row) => [row.n, row.held]))
    const storedKeys = new Map(stored.map((row) => [row.n, row]))
    orders.forEach((order, n) => {
      if (!order.idempotency) return
      const first = keyOf(n)
      outcomes[n] = keyVerdict(storedKeys.get(first), order.idempotency.fingerprint, first === n && heldKeys.get(n) === true)
    })
  }

  // The orders their key has not decided already (a replay, a 422, a key in flight).
  const undecided = orders.flatMap((order, n) => (outcomes[n] ? [] : [n]))
  if (undecided.length === 0) return outcomes as Outcome[]
  const accountIds = [...new Set(undecided.map((n) => orders[n]!.accountId))].sort()
  const choices = undecided.flatMap((n) => choicesOf(orders[n]!, n))
  // The accounts' rows in id order (concurrent batches never deadlock), and the ownership checks,
  // which do not depend on the locks: sent together. The checks are a statement of their own,
  // run once the locks are held: a suppression list entry committed while this waited for an
  // account's row (its insert holds that row) is seen.
  // An account's row is waited for no longer than the orders' deadlines allow.
  const remaining = leastRemaining(undecided.map((n) => orders[n]!))
  if (remaining === 0) throw new DeadlineExceededError()
  const lockTimeoutMs = minDefined(transaction.options.lockTimeoutMs, remaining)
  const { skipHeld = false } = transaction.options
  const [, locked, checks, existing] = await Promise.all([
    // Without parameters, so it runs ahead of the lock (see above).
    lockTimeoutMs === undefined ? undefined : sql.unsafe(`SET LOCAL lock_timeout = ${Math.max(1, Math.floor(lockTimeoutMs))}`),
    sql<Array<{ id: string; balance: number }>>`
      SELECT id::text AS id, balance FROM accounts
      WHERE id IN (SELECT value::uuid FROM jsonb_array_elements_text(${json(accountIds)}::jsonb))
      ORDER BY id FOR UPDATE ${skipHeld ? sql`SKIP LOCKED` : sql``}`,
    checkChoices(sql, choices),
    // Left out by SKIP LOCKED: held (the account exists), or no account at all.
    skipHeld
      ? sql<Array<{ id: string }>>`
      SELECT id::text AS id FROM accounts WHERE id IN (SELECT value::uuid FROM jsonb_array_elements_text(${json(accountIds)}::jsonb))`
      : [],
  ])
  const exists = new Set(existing.map((row) => row.id))

  const balances = new Map(locked.map((row) => [row.id, row.balance]))
  const checksByOrder = new Map<number, CheckRow[]>()
  for (const row of checks) checksByOrder.set(row.n, [...(checksByOrder.get(row.n) ?? []), row])

  const letters: LetterRow[] = []
  const answers: object[] = []
  for (const n of undecided) {
    const order = orders[n]!
    const available = balances.get(order.accountId)
    if (available === undefined) {
      outcomes[n] = exists.has(order.accountId) ? HELD : { outcome: 'no-account' }
      continue
    }
    const refused = refusalOf(checksByOrder.get(n))
    if (refused) {
      outcomes[n] = refused
      continue
    }
    // A test order is refused as a live one would be, and then charged nothing.
    const cost = order.letters.reduce((sum, letter) => sum + letter.cost, 0)
    if (cost > available) {
      outcomes[n] = { outcome: 'unpaid', cost, balance: available }
      continue
    }

    let balance = available
    for (const letter of order.letters) {
      if (order.livemode) balance -= letter.cost
      const sendAt = letter.sendAt?.toISOString() ?? null
      letters.push({
        ...letter,
        sendAt,
        n: letters.length,
        accountId: order.accountId,
        livemode: order.livemode,
        balanceAfter: order.livemode ? balance : null,
      })
    }
    balances.set(order.accountId, balance)
    if (order.idempotency) {
      const { key, fingerprint, response } = order.idempotency
      answers.push({ account: order.accountId, livemode: order.livemode, key, hash: fingerprint, status: response.status, body: response.body })
    }
    outcomes[n] = { outcome: 'stored', balanceAfter: balance }
  }

  if (letters.length > 0) {
    const writeTimeoutMs = startWriting(
      transaction,
      undecided.filter((n) => outcomes[n]?.outcome === 'stored').map((n) => orders[n]!),
    )
    // Most writes have far longer than the connection's statement timeout left: that timeout already
    // cancels them in time, and setting the same bound again would cost a statement per batch.
    const { statementTimeoutMs } = transaction
    const ownTimeoutMs = writeTimeoutMs !== undefined && statementTimeoutMs !== undefined && writeTimeoutMs >= statementTimeoutMs ? undefined : writeTimeoutMs
    const xid = await write(sql, letters, answers, balances, ownTimeoutMs)
    transaction.committing = { outcomes: outcomes as Outcome[], witness: { xid, letterId: letters[0]!.id } }
  }
  return outcomes as Outcome[]
}

/**
 * The letters' first events (letter.received, or letter.scheduled) for GET /events and the
 * endpoints, from the write's own RETURNING rows: the same fan-out every other letter event goes
 * through (firstLetterEventsCtes, packages/letters), as constant text.
 */
const FIRST_EVENTS = firstLetterEventsCtes('first_rows', 'stored')

/**
 * One statement writes the balances, the letters, their first letter_events rows and events (with
 * their webhook copies), outbox rows and charges, and the keys' answers: one round trip, while
 * the accounts' rows are locked. Counts that disagree with what the locks said roll it all back.
 *
 * A letter with a `sendAt` starts `scheduled`, without an address job: the clock releases it
 * (packages/pipeline, LetterClock). A test letter gets no charge and debits nothing.
 */
async function write(
  sql: TransactionSql,
  letters: LetterRow[],
  answers: object[],
  balances: Map<string, number>,
  timeoutMs: number | undefined,
): Promise<string> {
  const charged = new Map<string, number>()
  for (const letter of letters) if (letter.livemode) charged.set(letter.accountId, (charged.get(letter.accountId) ?? 0) + letter.cost)
  const debits = [...charged].map(([id, total]) => ({ id, total, expected: balances.get(id) }))
  const [, [written]] = await Promise.all([
    // Without parameters, so it runs ahead of the write: a write that would end after its
    // requests' answer time is cancelled (and the transaction rolled back) instead.
    timeoutMs === undefined ? undefined : sql.unsafe(`SET LOCAL statement_timeout = ${Math.max(1, Math.floor(timeoutMs))}`),
    sql<Array<{ debited: number; mismatched: number; answers: number; xid: string }>>`
    WITH new_letters AS (
      SELECT * FROM jsonb_to_recordset(${json(letters)}::jsonb) AS l(
        n int, id uuid, "accountId" uuid, livemode boolean, "sendAt" timestamptz, type text, "campaignId" uuid, "cardDesignId" uuid,
        "envelopeDesignId" uuid, "senderId" uuid, "signatureId" uuid, "fontName" text, "fontId" uuid, "fontVersion" int, "inkColor" text, message text, recipient jsonb, cost int, "balanceAfter" int,
        "trackingUrl" text, "trackingCode" text)
    ),
    debited AS (
      UPDATE accounts a SET balance = a.balance - d.total
      FROM jsonb_to_recordset(${json(debits)}::jsonb) AS d(id uuid, total int, expected int)
      WHERE a.id = d.id
      RETURNING a.balance = d.expected AS as_expected
    ),
    -- Each distinct choice's print spec once: a bulk order's thousand letters share one. The table
    -- function is inlined into this statement's plan (letter_print_spec_of, migration 0017).
    specs AS (
      SELECT c.card, c.envelope, c.sender, c.signature, p.spec
      FROM (SELECT DISTINCT "cardDesignId" AS card, "envelopeDesignId" AS envelope, "senderId" AS sender, "signatureId" AS signature FROM new_letters) c
      CROSS JOIN LATERAL letter_print_spec_of(c.card, c.envelope, c.sender, c.signature) AS p
    ),
    stored AS (
      INSERT INTO letters (id, account_id, livemode, send_at, type, campaign_id, card_design_id, envelope_design_id, sender_id, signature_id, print_spec,
        font_name, font_id, font_version, ink_color, drawing, message, recipient, status, cost, tracking_url, tracking_code, created_at)
      SELECT l.id, l."accountId", l.livemode, l."sendAt", l.type, l."campaignId", l."cardDesignId", l."envelopeDesignId", l."senderId", l."signatureId",
        s.spec, l."fontName", l."fontId", l."fontVersion", l."inkColor", ${DRAWING_REVISION}::int, l.message, l.recipient, CASE WHEN l."sendAt" IS NULL THEN 'received' ELSE 'scheduled' END, l.cost,
        l."trackingUrl", l."trackingCode", clock_timestamp()
      FROM new_letters l
      JOIN specs s ON s.card = l."cardDesignId" AND s.envelope = l."envelopeDesignId" AND s.sender = l."senderId"
        AND s.signature IS NOT DISTINCT FROM l."signatureId"
      ORDER BY l.n
      RETURNING *
    ),
    first_rows AS (
      INSERT INTO letter_events (letter_id, status, detail)
      SELECT id, CASE WHEN "sendAt" IS NULL THEN 'received' ELSE 'scheduled' END,
        CASE WHEN "sendAt" IS NULL THEN NULL ELSE 'Programada: entrará en producción en la fecha indicada' END
      FROM new_letters ORDER BY n
      RETURNING letter_id, status, at
    ),
    ${sql.unsafe(FIRST_EVENTS)},
    address_jobs AS (
      INSERT INTO outbox (queue, job_name, payload)
      -- The job's queue and name as literals from the job registry (outboxTargetSql), never a client's text.
      SELECT ${sql.unsafe(outboxTargetSql('normalize-address'))}, jsonb_build_object('letterId', id) FROM new_letters WHERE "sendAt" IS NULL ORDER BY n
    ),
    charges AS (
      INSERT INTO ledger_entries (account_id, kind, amount, balance_after, letter_id)
      SELECT "accountId", 'charge', -cost, "balanceAfter", id FROM new_letters WHERE livemode ORDER BY n
    ),
    -- An answer replaces only an expired entry or an abandoned old-version claim.
    answered AS (
      INSERT INTO idempotency_keys AS k (account_id, livemode, key, request_hash, response_status, response_body, expires_at)
      SELECT account, livemode, key, hash, status, body, now() + make_interval(hours => ${publicApi.IDEMPOTENCY_TTL_HOURS})
      FROM jsonb_to_recordset(${json(answers)}::jsonb) AS a(account uuid, livemode boolean, key text, hash text, status int, body jsonb)
      ON CONFLICT (account_id, livemode, key) DO UPDATE
        SET request_hash = EXCLUDED.request_hash, response_status = EXCLUDED.response_status, response_body = EXCLUDED.response_body,
            created_at = now(), expires_at = EXCLUDED.expires_at
        WHERE k.expires_at < now()
           OR (k.response_status IS NULL AND k.created_at <= now() - make_interval(secs => ${OLD_CLAIM_ABANDONED_AFTER_SECONDS}))
      RETURNING 1
    )
    SELECT (SELECT count(*) FROM debited)::int AS debited,
      (SELECT count(*) FROM debited WHERE NOT as_expected)::int AS mismatched,
      (SELECT count(*) FROM answered)::int AS answers, txid_current()::text AS xid`,
  ])
  if (!written || written.debited !== debits.length || written.mismatched !== 0) {
    throw new Error(`the intake's debits disagree with the balances it locked: ${JSON.stringify(written)}`)
  }
  // A row an older replica wrote meanwhile: nothing of this batch may be kept.
  if (written.answers !== answers.length) throw new KeyTakenMeanwhileError()
  return written.xid
}

const minDefined = (a: number | undefined, b: number | undefined) => (a === undefined ? b : b === undefined ? a : Math.min(a, b))

function countStored(orders: LetterOrder[], outcomes: Outcome[]): void {
  orders.forEach((order, n) => {
    if (outcomes[n]?.outcome !== 'stored') return
    for (const letter of order.letters) {
      metrics.lettersCreated.inc({ type: letter.type, country: letter.recipient.country, mode: modeLabel(order.livemode) })
      if (order.livemode) metrics.creditsCharged.inc(letter.cost)
    }
  })
}
