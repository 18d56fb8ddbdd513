import { eq, sql, type SQL } from 'drizzle-orm'
import { accounts, type Executor, type LedgerKind } from '@letters/db'
import { metrics } from '@letters/observability'

/** A negative adjustment that the balance cannot cover. The admin API answers 409. */
export class InsufficientCreditsError extends Error {
  override name = 'InsufficientCreditsError'
  constructor(
    readonly accountId: string,
    readonly requested: number,
  ) {
    super(`account ${accountId} cannot cover ${requested} credits`)
  }
}

/** A balance is a Postgres integer: a top-up that would pass 2,147,483,647 is refused. */
export class BalanceLimitError extends Error {
  override name = 'BalanceLimitError'
  static readonly MAX_BALANCE = 2_147_483_647
  constructor(readonly accountId: string) {
    super(`account ${accountId} would exceed the largest balance, ${BalanceLimitError.MAX_BALANCE}`)
  }
}

export class AccountNotFoundError extends Error {
  override name = 'AccountNotFoundError'
  constructor(readonly accountId: string) {
    super(`account ${accountId} does not exist`)
  }
}

export interface LedgerResult {
  entryId: number
  balanceAfter: number
}

export interface Movement {
  kind: LedgerKind
  /** Signed credits: negative takes from the balance. */
  amount: number
  letterId?: string | null
  reason?: string | null
}

function assertWholeCredits(amount: number, what: string): void {
  if (!Number.isSafeInteger(amount) || amount <= 0) {
    throw new RangeError(`${what} must be a positive whole number of credits, got ${amount}`)
  }
}

/**
 * A movement's statement: `moved` (the account row after the movement) and `ledger_entry` (the
 * entry appended). The UPDATE takes the account's row lock, so concurrent movements on one
 * account queue up and each entry's `balance_after` is the balance that movement left. A
 * movement that would go below zero moves nothing and appends nothing. (Letters are charged by
 * packages/intake, with the letters they pay for, under the same row lock.)
 */
function movementCtes(accountId: string, movement: Movement): SQL {
  return sql`moved AS (
      UPDATE accounts SET balance = balance + ${movement.amount}::integer
      WHERE id = ${accountId}::uuid AND balance + ${movement.amount}::integer >= 0
      RETURNING id, balance
    ),
    ledger_entry AS (
      INSERT INTO ledger_entries (account_id, kind, amount, balance_after, letter_id, reason)
      SELECT id, ${movement.kind}::text, ${movement.amount}::integer, balance, ${movement.letterId ?? null}::uuid, ${movement.reason ?? null}::text
      FROM moved
      RETURNING id, balance_after
    )`
}

const NUMERIC_VALUE_OUT_OF_RANGE = '22003'

async function move(tx: Executor, accountId: string, movement: Movement): Promise<LedgerResult> {
  // Raw SQL kept: data-modifying CTEs (the guarded UPDATE and its ledger INSERT in one statement), which drizzle's builder does not write.
  const [row] = await tx
    .execute<{ id: string; balanceAfter: number }>(sql`WITH ${movementCtes(accountId, movement)} SELECT id, balance_after AS "balanceAfter" FROM ledger_entry`)
    .catch((error: { cause?: { code?: string } }) => {
      if (error.cause?.code === NUMERIC_VALUE_OUT_OF_RANGE) throw new BalanceLimitError(accountId)
      throw error
    })
  if (row) return { entryId: Number(row.id), balanceAfter: row.balanceAfter }
  // Nothing moved: tell a missing account from a short balance.
  await balance(tx, accountId)
  throw new InsufficientCreditsError(accountId, -movement.amount)
}

/** What a refund needs of a letter: what moveLetter read of it (LetterAtMove), and its id. */
export interface RefundableLetter {
  id: string
  accountId: string
  cost: number
  /** False for a test letter: it was never charged. */
  livemode: boolean
}

/**
 * Gives back what a letter cost, in the transaction that ends it (a cancellation, a rejected
 * address); a test letter was never charged, so it gets nothing: null. A letter can be refunded
 * once: a second refund violates a unique index.
 */
export async function refundLetter(tx: Executor, letter: RefundableLetter, reason: string): Promise<LedgerResult | null> {
  if (!letter.livemode) return null
  assertWholeCredits(letter.cost, 'a refund')
  const refunded = await move(tx, letter.accountId, { kind: 'refund', amount: letter.cost, letterId: letter.id, reason })
  // Counted when written: a rare rollback after it is counted too.
  metrics.creditsRefunded.inc(letter.cost)
  return refunded
}

/** Credits bought or granted. */
export async function topUp(tx: Executor, accountId: string, amount: number, reason?: string): Promise<LedgerResult> {
  assertWholeCredits(amount, 'a top-up')
  return move(tx, accountId, { kind: 'top_up', amount, reason: reason ?? null })
}

/** A correction by an operator, either way; a negative one must fit the balance. */
export async function adjust(tx: Executor, accountId: string, amount: number, reason?: string): Promise<LedgerResult> {
  if (!Number.isSafeInteger(amount) || amount === 0) {
    throw new RangeError(`an adjustment must be a non-zero whole number of credits, got ${amount}`)
  }
  return move(tx, accountId, { kind: 'adjustment', amount, reason: reason ?? null })
}

export async function balance(tx: Executor, accountId: string): Promise<number> {
  const [row] = await tx.select({ balance: accounts.balance }).from(accounts).where(eq(accounts.id, accountId))
  if (!row) throw new AccountNotFoundError(accountId)
  return row.balance
}
