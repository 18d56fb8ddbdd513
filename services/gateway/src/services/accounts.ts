import { eq } from 'drizzle-orm'
import { AccountNotFoundError, BalanceLimitError, InsufficientCreditsError, adjust, topUp } from '@letters/credits'
import { accounts, type Db, type Executor } from '@letters/db'
import { conflict, notFound } from '../errors.js'
import { issueApiKey } from './api-keys.js'

export const accountNotFound = () => notFound('La cuenta no existe')

/** A new account with its first API key; opening credits go through the ledger like any other. */
export async function createAccount(db: Db, input: { name: string; credits?: number | undefined }) {
  return db.transaction(async (tx) => {
    const [account] = await tx.insert(accounts).values({ name: input.name }).returning({ id: accounts.id, name: accounts.name })
    if (!account) throw new Error('account insert returned nothing')
    const balance = input.credits ? (await topUp(tx, account.id, input.credits, 'opening credits')).balanceAfter : 0
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
