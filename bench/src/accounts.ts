import { adminAccount, overHttp } from '@letters/test/support/accounts'
import { SENDER_NAME } from './letter.js'

/** An account made through the admin API, by the tests' own helper: credits, a key, one of each entry a letter needs. */
export type BenchAccount = Awaited<ReturnType<typeof adminAccount>>

/** The most credits the admin API grants at once: plenty for a few seconds of letters. */
export const OPENING_CREDITS = 10_000_000

export function createAccount(gateway: string, adminToken: string, name: string): Promise<BenchAccount> {
  return adminAccount(overHttp(gateway), OPENING_CREDITS, SENDER_NAME, { name, adminToken })
}

/** Accounts the spread rows share out, one per connection. */
export const SPREAD_ACCOUNTS = 50

/** The headers that send a request as `account`. */
export const withKey = (account: BenchAccount) => ({ 'x-api-key': account.apiKey })

/** The spread rows' accounts, made through the admin API. */
export function spreadAccounts(gateway: string, adminToken: string): Promise<BenchAccount[]> {
  return Promise.all(Array.from({ length: SPREAD_ACCOUNTS }, (_, index) => createAccount(gateway, adminToken, `Cuenta ${index + 1}`)))
}
