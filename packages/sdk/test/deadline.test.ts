// The SDK against a gateway whose account row is held past the request timeout: every call is
// answered 503 in time, retried with its own key, and stored once when the lock goes.
import { describe, expect } from 'vitest'
import { count, eq } from 'drizzle-orm'
import { accounts, letters } from '@letters/db'
import { holdAccountRow } from '@letters/test/support/account-lock'
import { it as base } from '@letters/test/support/fixtures'
import { singleLetter } from '@letters/test/support/factories'
import { createClient, LettersApiError } from '../src/index.js'

/** The gateway listening on 127.0.0.1, as a client of the SDK reaches it. */
const it = base.extend('baseUrl', { scope: 'file' }, ({ gateway }) => gateway.listen({ host: '127.0.0.1', port: 0 }))

it.override({ gatewayOptions: { env: { HTTP_REQUEST_TIMEOUT_MS: '2000' } } })

describe('the SDK behind a lock longer than the request timeout', () => {
  it('stores each of 20 concurrent calls once, charged once, through 503s retried with the same key', async ({ gateway: app, baseUrl, account: owner }) => {
    const client = createClient({ apiKey: owner.apiKey, baseUrl, retries: 6, retryDelayMs: 100 })
    const release = await holdAccountRow(app.db, owner.id)
    const releasing = new Promise((resolve) => setTimeout(resolve, 3500)).then(release)
    const bodies = Array.from({ length: 20 }, (_, i) => singleLetter(owner, { name: `Lucía ${i}` }))
    const results = await Promise.all(
      bodies.map((body) =>
        client.POST('/single', { body }).then(
          (result) => ({ ok: true as const, key: result.idempotencyKey, cardId: result.data!.cardId }),
          (error: unknown) => ({ ok: false as const, key: (error as LettersApiError).idempotencyKey, error }),
        ),
      ),
    )
    // A call that ran out of retries is called again with the key it gave back: never a second letter.
    await releasing
    const settled = await Promise.all(
      results.map(async (result, i) =>
        result.ok
          ? result
          : { ok: true as const, key: result.key, cardId: (await client.POST('/single', { body: bodies[i]!, idempotencyKey: result.key! })).data!.cardId },
      ),
    )
    console.log(`### 20 calls behind a 3.5 s lock (2 s request timeout): ${results.filter((result) => result.ok).length} stored within their retries`)
    expect(new Set(settled.map((result) => result.cardId)).size).toBe(20)
    const [{ n }] = (await app.db.select({ n: count() }).from(letters).where(eq(letters.accountId, owner.id))) as [{ n: number }]
    expect(n).toBe(20)
    const [account] = await app.db.select({ balance: accounts.balance }).from(accounts).where(eq(accounts.id, owner.id))
    expect(account!.balance).toBe(100 - 20 * 3)
  }, 60_000)
})
