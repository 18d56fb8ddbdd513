import { adminAccount, overHttp } from '@letters/test/support/accounts'
import { SENDER_NAME } from './letter.js'

/** An account made through the admin API, by the tests' own helper: credits, a key, one of each entry a letter needs. */
export type BenchAccount = Awaited<ReturnType<typeof adminAccount>>

/** The most credits the admin API grants at once: plenty for a few seconds of letters. */
export const OPENING_CREDITS = 10_000_000

export function createAccount(gateway: string, adminToken: string, name: string): Promise<BenchAccount> {
  return adminAccount(overHttp(gateway), OPENING_CREDITS, SENDER_NAME, { name, adminToken })
}
