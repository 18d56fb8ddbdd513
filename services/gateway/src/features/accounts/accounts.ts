import { eq, sql } from 'drizzle-orm'
import { alias } from 'drizzle-orm/pg-core'
import { ledgerReasons, type admin } from '@letters/contracts'
import { AccountNotFoundError, BalanceLimitError, InsufficientCreditsError, adjust, topUp } from '@letters/credits'
import { accounts, keysetPage, SQLSTATE, sqlState, type Db, type Executor } from '@letters/db'
import { conflict, notFound, type ApiError } from '../../common/errors.js'
import { issueApiKey } from './api-keys.js'
import { decodeCursor, pageOf, positionSql, type Positioned } from '../../common/cursor.js'
import { isoInstant } from '@letters/letters'

export const accountNotFound = () => notFound('La cuenta no existe')

/** An insert naming an account that does not exist fails on its foreign key: the account's 404. */
export async function intoAccount<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write()
  } catch (error) {
    if (sqlState(error) === SQLSTATE.foreignKeyViolation) throw accountNotFound()
    throw error
  }
}

/** A new account with its first API key; opening credits go through the ledger like any other. */
export async function createAccount(db: Executor, input: { name: string; credits?: number | undefined }) {
  return db.transaction(async (tx) => {
    const [account] = await tx.insert(accounts).values({ name: input.name }).returning({ id: accounts.id, name: accounts.name })
    if (!account) throw new Error('account insert returned nothing')
    const balance = input.credits ? (await topUp(tx, account.id, input.credits, ledgerReasons.openingCredits)).balanceAfter : 0
    const { apiKey } = await issueApiKey(tx, account.id)
    return { ...account, balance, apiKey }
  })
}

export async function findAccount(ex: Executor, id: string) {
  const [account] = await ex.select({ id: accounts.id, name: accounts.name, balance: accounts.balance }).from(accounts).where(eq(accounts.id, id))
  return account
}

export async function getAccount(ex: Executor, id: string) {
  const account = await findAccount(ex, id)
  if (!account) throw accountNotFound()
  return account
}

/**
 * Every account with its balance, newest first, a page at a time. Ops open accounts by hand, so
 * there are few enough for Postgres to order them without an index of their own.
 */
export async function listAccounts(ex: Executor, query: admin.AccountListQuery): Promise<admin.AccountList> {
  const limit = query.limit ?? 20
  const a = alias(accounts, 'a')
  const page = keysetPage({ instant: a.createdAt, id: a.id }, query.cursor ? decodeCursor(query.cursor) : undefined, 'newest first', limit)
  const rows = await ex
    .select({
      id: a.id,
      position: sql<Positioned['position']>`${positionSql(a.createdAt)}`,
      // Built by Postgres, the instant already in the API's format.
      account: sql<
        admin.AccountList['data'][number]
      >`json_build_object('id', a.id, 'name', a.name, 'balance', a.balance, 'createdAt', ${isoInstant(a.createdAt)})`,
    })
    .from(a)
    .where(page.after)
    .orderBy(page.orderBy)
    .limit(page.limit)
  const { rows: pageRows, nextCursor } = pageOf(rows, limit)
  return { data: pageRows.map((row) => row.account), nextCursor }
}

/** A positive amount is a top-up, a negative one an adjustment that must fit the balance (409 otherwise). */
export async function addCredits(db: Db, id: string, amount: number, reason: string | undefined) {
  try {
    const moved = await db.transaction((tx) => (amount > 0 ? topUp(tx, id, amount, reason) : adjust(tx, id, amount, reason)))
    return { balance: moved.balanceAfter }
  } catch (error) {
    if (error instanceof AccountNotFoundError) throw accountNotFound()
    if (error instanceof BalanceLimitError) throw conflict(`El saldo no puede superar ${BalanceLimitError.MAX_BALANCE} créditos`)
    if (error instanceof InsufficientCreditsError) {
      const { balance } = await getAccount(db, id)
      throw conflict(`No se pueden restar ${-amount} créditos: el saldo de la cuenta es ${balance}`)
    }
    throw error
  }
}

/** A thing of another account is as unknown as one that does not exist; an unknown account is its own 404. */
export async function notFoundInAccount(ex: Executor, accountId: string, message: string): Promise<ApiError> {
  return (await findAccount(ex, accountId)) ? notFound(message) : accountNotFound()
}
