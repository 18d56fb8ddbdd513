import { randomUUID } from 'node:crypto'
import { once } from 'node:events'
import { createConnection, createServer, type Socket } from 'node:net'
import { describe, expect } from 'vitest'
import { asc, eq, sql } from 'drizzle-orm'
import {
  accounts,
  addressSuppressions,
  campaigns,
  closeDb,
  createDb,
  idempotencyKeys,
  ledgerEntries,
  letterEvents,
  letters,
  outbox,
  type Db,
} from '@letters/db'
import { metrics } from '@letters/observability'
import { newAccount, newCompanyData, sampleRecipient } from '@letters/test/support/factories'
import { it as base } from '@letters/test/support/fixtures'
import {
  DeadlineExceededError,
  LetterIntake,
  OrderDeadline,
  RolledBackError,
  idempotencyLockName,
  storeOrders,
  type LetterDraft,
  type LetterOrder,
  type OrderOutcome,
} from '../src/index.js'

const it = base
  /** A second pool, for what happens beside the intake: held locks, killed connections. */
  .extend('other', { scope: 'file' }, ({ databaseUrl }, { onCleanup }) => {
    const other = createDb(databaseUrl, { max: 4 })
    onCleanup(() => closeDb(other))
    return other
  })

it.override({ databaseLabel: 'intake' })

type Company = Awaited<ReturnType<typeof newCompanyData>>

function draft(company: Company, overrides: Partial<LetterDraft> = {}): LetterDraft {
  return {
    id: randomUUID(),
    type: 'single',
    campaignId: null,
    cardDesignId: company.cardDesignId,
    envelopeDesignId: company.envelopeDesignId,
    senderId: company.senderId,
    signatureId: null,
    fontName: 'caveat',
    fontId: null,
    fontVersion: null,
    inkColor: 'blue',
    message: 'Gracias por tu pedido',
    recipient: sampleRecipient,
    cost: 3,
    sendAt: null,
    trackingUrl: null,
    trackingCode: null,
    suppressionKey: null,
    ...overrides,
  }
}

async function customer(db: Db, credits: number) {
  const account = await newAccount(db, { credits })
  return { account, company: await newCompanyData(db, account.id) }
}

const order = (accountId: string, company: Company, overrides: Partial<LetterOrder> = {}, letterOverrides: Partial<LetterDraft> = {}): LetterOrder => ({
  accountId,
  livemode: true,
  letters: [draft(company, letterOverrides)],
  ...overrides,
})

const keyed = (key: string, fingerprint = 'fp-1') => ({ idempotency: { key, fingerprint, response: { status: 200, body: { key } } } })

/**
 * What an account holds, checked against the ledger's invariants: the balance is the sum of the
 * entries, each entry's balance_after continues the one before, and each letter has exactly one
 * charge of its cost, one first event and one address job.
 */
async function expectConsistent(db: Db, accountId: string) {
  const [account] = await db.select({ balance: accounts.balance }).from(accounts).where(eq(accounts.id, accountId))
  const entries = await db.select().from(ledgerEntries).where(eq(ledgerEntries.accountId, accountId)).orderBy(asc(ledgerEntries.id))
  const stored = await db.select().from(letters).where(eq(letters.accountId, accountId))
  let running = 0
  for (const entry of entries) {
    running += entry.amount
    expect(entry.balanceAfter).toBe(running)
  }
  expect(account!.balance).toBe(running)
  const charges = entries.filter((entry) => entry.kind === 'charge')
  expect(charges.map((entry) => entry.letterId).sort()).toEqual(stored.map((letter) => letter.id).sort())
  for (const letter of stored) expect(charges.find((entry) => entry.letterId === letter.id)!.amount).toBe(-letter.cost)
  const ids = stored.map((letter) => letter.id)
  if (ids.length > 0) {
    const events = await db.execute<{ letter_id: string; status: string }>(
      sql`SELECT letter_id::text, status FROM letter_events WHERE letter_id IN (SELECT id FROM letters WHERE account_id = ${accountId}::uuid)`,
    )
    expect(events.map((event) => event.letter_id).sort()).toEqual([...ids].sort())
    expect(new Set(events.map((event) => event.status))).toEqual(new Set(['received']))
    const jobs = await db.execute<{ letter_id: string }>(
      sql`SELECT payload->>'letterId' AS letter_id FROM outbox WHERE queue = 'address' AND payload->>'letterId' IN (SELECT id::text FROM letters WHERE account_id = ${accountId}::uuid)`,
    )
    expect(jobs.map((job) => job.letter_id).sort()).toEqual([...ids].sort())
  }
  return { balance: account!.balance, letters: stored, charges }
}

describe('storeOrders: charge and store a batch of letters', () => {
  it('stores a letter with its charge, first event, address job and key answer', async ({ database: db }) => {
    const { account, company } = await customer(db, 10)
    const letter = draft(company)
    const [outcome] = await storeOrders(db, [{ accountId: account.id, livemode: true, letters: [letter], ...keyed('k-1') }])
    expect(outcome).toEqual({ outcome: 'stored', balanceAfter: 7 })
    const state = await expectConsistent(db, account.id)
    expect(state.letters).toMatchObject([{ id: letter.id, status: 'received', cost: 3, message: letter.message, recipient: sampleRecipient }])
    expect(await db.select().from(letterEvents).where(eq(letterEvents.letterId, letter.id))).toMatchObject([{ status: 'received', detail: null }])
    expect(
      await db
        .select()
        .from(outbox)
        .where(sql`${outbox.payload}->>'letterId' = ${letter.id}`),
    ).toMatchObject([{ queue: 'address', jobName: 'normalize-address', sentAt: null }])
    const [key] = await db.select().from(idempotencyKeys).where(eq(idempotencyKeys.accountId, account.id))
    expect(key).toMatchObject({ key: 'k-1', requestHash: 'fp-1', responseStatus: 200, responseBody: { key: 'k-1' } })
  })

  it('takes the orders of a batch one after another: each paid from what the ones before left, a refused one taking nothing', async ({ database: db }) => {
    const { account, company } = await customer(db, 10)
    const outcomes = await storeOrders(db, [
      order(account.id, company),
      order(account.id, company),
      order(account.id, company, {}, { cost: 5 }),
      order(account.id, company),
      order(account.id, company),
    ])
    expect(outcomes).toEqual<OrderOutcome[]>([
      { outcome: 'stored', balanceAfter: 7 },
      { outcome: 'stored', balanceAfter: 4 },
      { outcome: 'unpaid', cost: 5, balance: 4 },
      { outcome: 'stored', balanceAfter: 1 },
      { outcome: 'unpaid', cost: 3, balance: 1 },
    ])
    expect((await expectConsistent(db, account.id)).letters).toHaveLength(3)
  })

  it('stores an order of several letters whole or not at all', async ({ database: db }) => {
    const { account, company } = await customer(db, 8)
    const three = { accountId: account.id, livemode: true, letters: [draft(company), draft(company), draft(company)] }
    const two = { accountId: account.id, livemode: true, letters: [draft(company), draft(company)] }
    expect(await storeOrders(db, [three, two])).toEqual([
      { outcome: 'unpaid', cost: 9, balance: 8 },
      { outcome: 'stored', balanceAfter: 2 },
    ])
    const state = await expectConsistent(db, account.id)
    expect(state.letters.map((letter) => letter.id).sort()).toEqual(two.letters.map((letter) => letter.id).sort())
  })

  it('refuses designs, senders and campaigns the account does not own or has paused, writing nothing for them', async ({ database: db }) => {
    const { account, company } = await customer(db, 30)
    const stranger = await customer(db, 30)
    const [paused] = await db
      .insert(campaigns)
      .values({ accountId: account.id, name: 'Pausada', active: false, message: 'Hola', ...company })
      .returning({ id: campaigns.id })
    const outcomes = await storeOrders(db, [
      order(account.id, company, {}, { cardDesignId: stranger.company.cardDesignId }),
      order(account.id, company, {}, { envelopeDesignId: stranger.company.envelopeDesignId }),
      order(account.id, company, {}, { senderId: randomUUID() }),
      order(account.id, company, {}, { type: 'campaign', campaignId: paused!.id }),
      order(account.id, company),
    ])
    expect(outcomes).toEqual<OrderOutcome[]>([
      { outcome: 'not-owned', field: 'cardDesignId' },
      { outcome: 'not-owned', field: 'envelopeDesignId' },
      { outcome: 'not-owned', field: 'senderId' },
      { outcome: 'campaign-inactive' },
      { outcome: 'stored', balanceAfter: 27 },
    ])
    expect((await expectConsistent(db, account.id)).letters).toHaveLength(1)
  })

  it('refuses an order with a letter to an address on its account and mode suppression list, writing and charging nothing for it', async ({ database: db }) => {
    const { account, company } = await customer(db, 30)
    const since = new Date('2026-12-02T10:00:00Z')
    await db
      .insert(addressSuppressions)
      .values({ accountId: account.id, livemode: true, addressHash: 'dead-address', reason: 'bad_address', zip: '28013', country: 'ES', createdAt: since })
    const outcomes = await storeOrders(db, [
      order(account.id, company, {}, { suppressionKey: 'dead-address' }),
      // In a bulk order, one suppressed letter among others refuses the whole order.
      order(account.id, company, { letters: [draft(company, { suppressionKey: 'live-address' }), draft(company, { suppressionKey: 'dead-address' })] }),
      // A test order has its own list; a letter whose request ignores the list carries no key.
      order(account.id, company, { livemode: false }, { suppressionKey: 'dead-address' }),
      order(account.id, company, {}, { suppressionKey: null }),
      order(account.id, company, {}, { suppressionKey: 'live-address' }),
    ])
    expect(outcomes).toEqual<OrderOutcome[]>([
      { outcome: 'suppressed', key: 'dead-address', reason: 'bad_address', since },
      { outcome: 'suppressed', key: 'dead-address', reason: 'bad_address', since },
      { outcome: 'stored', balanceAfter: 30 },
      { outcome: 'stored', balanceAfter: 27 },
      { outcome: 'stored', balanceAfter: 24 },
    ])
    // Stored: the test letter (uncharged) and the two live ones, 3 credits each; nothing of the refused orders.
    const stored = await db.select({ livemode: letters.livemode }).from(letters).where(eq(letters.accountId, account.id))
    expect(stored.map((letter) => letter.livemode).sort()).toEqual([false, true, true])
    const [after] = await db.select({ balance: accounts.balance }).from(accounts).where(eq(accounts.id, account.id))
    expect(after!.balance).toBe(24)
  })

  it('answers an account that does not exist without writing', async ({ database: db }) => {
    const { company } = await customer(db, 0)
    expect(await storeOrders(db, [order(randomUUID(), company)])).toEqual([{ outcome: 'no-account' }])
  })

  it('replays an answered key, refuses it for another request, and treats a copy in the same batch as in flight', async ({ database: db }) => {
    const { account, company } = await customer(db, 30)
    expect(await storeOrders(db, [order(account.id, company, keyed('k-a')), order(account.id, company, keyed('k-a'))])).toEqual([
      { outcome: 'stored', balanceAfter: 27 },
      { outcome: 'key-in-flight' },
    ])
    expect(
      await storeOrders(db, [
        order(account.id, company, keyed('k-a')),
        order(account.id, company, keyed('k-a')),
        order(account.id, company, keyed('k-a', 'fp-other')),
      ]),
    ).toEqual([{ outcome: 'replay', status: 200, body: { key: 'k-a' } }, { outcome: 'replay', status: 200, body: { key: 'k-a' } }, { outcome: 'key-reused' }])
    expect((await expectConsistent(db, account.id)).letters).toHaveLength(1)
  })

  it('answers in flight at once for a key another transaction holds, even while that one waits for the account', async ({ database: db, other }) => {
    const { account, company } = await customer(db, 30)
    const release = await holdAccountRow(other, account.id)
    const first = storeOrders(db, [order(account.id, company, keyed('k-held'))])
    await expect.poll(() => keyHeld(other, account.id, 'k-held'), { timeout: 5000, interval: 20 }).toBe(true)
    expect(await storeOrders(db, [order(account.id, company, keyed('k-held'))])).toEqual([{ outcome: 'key-in-flight' }])
    await release()
    expect(await first).toEqual([{ outcome: 'stored', balanceAfter: 27 }])
    expect(await storeOrders(db, [order(account.id, company, keyed('k-held'))])).toEqual([{ outcome: 'replay', status: 200, body: { key: 'k-held' } }])
  })

  it('keeps the accounts of one batch apart', async ({ database: db }) => {
    const first = await customer(db, 6)
    const second = await customer(db, 3)
    const outcomes = await storeOrders(db, [
      order(first.account.id, first.company),
      order(second.account.id, second.company),
      order(first.account.id, first.company),
      order(second.account.id, second.company),
    ])
    expect(outcomes.map((outcome) => outcome.outcome)).toEqual(['stored', 'stored', 'stored', 'unpaid'])
    expect((await expectConsistent(db, first.account.id)).balance).toBe(0)
    expect((await expectConsistent(db, second.account.id)).balance).toBe(0)
  })

  it('keeps each transaction whole on connections that run its statements for the first time', async ({ database: db, databaseUrl }) => {
    // A fresh pool: every statement is described before its first run on each connection, the
    // moment a statement sent behind it could overtake it.
    const fresh = createDb(databaseUrl, { max: 8 })
    try {
      const { account, company } = await customer(db, 60)
      const outcomes = await Promise.all(
        Array.from({ length: 24 }, (_, i) => storeOrders(fresh, [order(account.id, company, i % 2 ? keyed(`k-fresh-${i}`) : {})])),
      )
      expect(outcomes.map(([outcome]) => outcome!.outcome).sort()).toEqual([...Array(20).fill('stored'), ...Array(4).fill('unpaid')])
      const state = await expectConsistent(db, account.id)
      expect(state.balance).toBe(0)
      expect(state.letters).toHaveLength(20)
    } finally {
      await closeDb(fresh)
    }
  })

  it('refuses an empty order and a cost that is not a positive whole number before touching the database', async ({ database: db }) => {
    const { account, company } = await customer(db, 10)
    await expect(storeOrders(db, [{ accountId: account.id, livemode: true, letters: [] }])).rejects.toThrow(RangeError)
    await expect(storeOrders(db, [order(account.id, company, {}, { cost: 0 })])).rejects.toThrow(RangeError)
    await expect(storeOrders(db, [order(account.id, company, {}, { cost: 1.5 })])).rejects.toThrow(RangeError)
    expect((await expectConsistent(db, account.id)).balance).toBe(10)
  })
})

/** Holds the account's row lock in a transaction of the other pool until released. */
async function holdAccountRow(other: Db, accountId: string): Promise<() => Promise<void>> {
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  let locked!: () => void
  const isLocked = new Promise<void>((resolve) => (locked = resolve))
  const holder = other.transaction(async (tx) => {
    await tx.execute(sql`SELECT 1 FROM accounts WHERE id = ${accountId}::uuid FOR UPDATE`)
    locked()
    await released
  })
  await isLocked
  return async () => {
    release()
    await holder
  }
}

async function keyHeld(other: Db, accountId: string, key: string): Promise<boolean> {
  const [row] = await other.execute<{ locked: boolean }>(sql`SELECT EXISTS (SELECT 1 FROM pg_locks l
    WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
      AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended(${idempotencyLockName(accountId, true, key)}, 0)) AS locked`)
  return row?.locked ?? false
}

async function batchesObserved(): Promise<{ count: number; sum: number }> {
  const values = (await metrics.intakeBatchOrders.get()).values
  return {
    count: values.find((value) => value.metricName === 'letters_intake_batch_orders_count')?.value ?? 0,
    sum: values.find((value) => value.metricName === 'letters_intake_batch_orders_sum')?.value ?? 0,
  }
}

describe('LetterIntake: group commit', () => {
  it('lets exactly 50 of 200 parallel orders through on credits for 50, in batches, and the ledger agrees', async ({ database: db }) => {
    const { account, company } = await customer(db, 150)
    const intake = new LetterIntake(db, { concurrentBatches: 2 })
    const before = await batchesObserved()
    const outcomes = await Promise.all(Array.from({ length: 200 }, (_, i) => intake.submit(order(account.id, company, i % 2 ? keyed(`k-${i}`) : {}))))
    const after = await batchesObserved()
    expect(outcomes.filter((outcome) => outcome.outcome === 'stored')).toHaveLength(50)
    expect(outcomes.filter((outcome) => outcome.outcome === 'unpaid')).toHaveLength(150)
    for (const outcome of outcomes) if (outcome.outcome === 'unpaid') expect(outcome).toEqual({ outcome: 'unpaid', cost: 3, balance: 0 })
    // The 200 orders went through far fewer transactions than 200.
    expect(after.sum - before.sum).toBe(200)
    expect(after.count - before.count).toBeLessThan(50)
    const state = await expectConsistent(db, account.id)
    expect(state.balance).toBe(0)
    expect(state.letters).toHaveLength(50)
  })

  it('keeps exactly-once across two intakes (two replicas) spending one account and crossing two', async ({ database: db, other }) => {
    const hot = await customer(db, 150)
    const cold = await customer(db, 60)
    const replicas = [new LetterIntake(db, { concurrentBatches: 2 }), new LetterIntake(other, { concurrentBatches: 2 })]
    const outcomes = await Promise.all(
      Array.from({ length: 240 }, (_, i) => {
        const owner = i % 3 === 0 ? cold : hot
        return replicas[i % 2]!.submit(order(owner.account.id, owner.company))
      }),
    )
    expect(outcomes.filter((outcome) => outcome.outcome === 'stored')).toHaveLength(70)
    expect((await expectConsistent(db, hot.account.id)).letters).toHaveLength(50)
    expect((await expectConsistent(db, cold.account.id)).letters).toHaveLength(20)
  })

  it('fails only the order that cannot be written: its batch is rolled back and the others stored again alone', async ({ database: db }) => {
    const { account, company } = await customer(db, 30)
    const intake = new LetterIntake(db, { concurrentBatches: 1 })
    // Postgres refuses a NUL character in text: the batch's write statement fails.
    const submitted = [
      intake.submit(order(account.id, company)),
      intake.submit(order(account.id, company, {}, { message: 'roto\u0000' })),
      intake.submit(order(account.id, company, keyed('k-neighbour'))),
      intake.submit(order(account.id, company)),
    ]
    const results = await Promise.allSettled(submitted)
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled'])
    const state = await expectConsistent(db, account.id)
    expect(state.letters).toHaveLength(3)
    expect(state.balance).toBe(21)
  })

  it('stores every order once when the batch loses its connection before committing', async ({ database: db, other }) => {
    const { account, company } = await customer(db, 30)
    const intake = new LetterIntake(db, { concurrentBatches: 1 })
    const release = await holdAccountRow(other, account.id)
    const submitted = Array.from({ length: 5 }, (_, i) => intake.submit(order(account.id, company, i % 2 ? keyed(`k-drop-${i}`) : {})))
    // The batch waits for the row; its connection is cut off.
    let waiting: Array<{ pid: number }> = []
    await expect
      .poll(
        async () => {
          waiting = await other.execute<{ pid: number }>(
            sql`SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%FOR UPDATE%' AND datname = current_database()`,
          )
          return waiting.length
        },
        { timeout: 5000, interval: 20 },
      )
      .toBe(1)
    await other.execute(sql`SELECT pg_terminate_backend(${waiting[0]!.pid})`)
    await release()
    const outcomes = await Promise.all(submitted)
    expect(outcomes.map((outcome) => outcome.outcome)).toEqual(Array(5).fill('stored'))
    const state = await expectConsistent(db, account.id)
    expect(state.letters).toHaveLength(5)
    expect(state.balance).toBe(15)
  })

  it('answers every order before drained() resolves', async ({ database: db }) => {
    const { account, company } = await customer(db, 30)
    const intake = new LetterIntake(db, { concurrentBatches: 2 })
    const answered: OrderOutcome[] = []
    for (let i = 0; i < 10; i++) void intake.submit(order(account.id, company)).then((outcome) => answered.push(outcome))
    await intake.drained()
    await Promise.resolve()
    expect(answered).toHaveLength(10)
  })
})

/**
 * A TCP proxy to Postgres that, once armed, loses the next COMMIT: either after Postgres ran it
 * (its answer never comes back) or before (it never reaches Postgres, which rolls back when the
 * connection goes). Either way the client sees its connection close while committing.
 */
async function commitLoser(databaseUrl: string) {
  const target = new URL(databaseUrl)
  let armed: 'after' | 'before' | undefined
  const server = createServer((client: Socket) => {
    const upstream = createConnection(Number(target.port || 5432), target.hostname)
    const cut = () => {
      armed = undefined
      client.destroy()
      upstream.destroy()
    }
    client.on('data', (chunk) => {
      if (armed === 'before' && chunk.toString('latin1').includes('commit\u0000')) return cut()
      upstream.write(chunk)
    })
    upstream.on('data', (chunk) => {
      if (armed === 'after' && chunk.toString('latin1').includes('COMMIT\u0000')) return cut()
      client.write(chunk)
    })
    for (const socket of [client, upstream]) {
      socket.on('error', () => {})
      socket.on('close', () => (socket === client ? upstream : client).destroy())
    }
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const url = new URL(target)
  url.hostname = '127.0.0.1'
  url.port = String((server.address() as { port: number }).port)
  const proxied = createDb(url.toString(), { max: 4 })
  return {
    db: proxied,
    arm: (when: 'after' | 'before') => (armed = when),
    armed: () => armed,
    close: async () => {
      // A connection the proxy cut can keep end() waiting for its whole timeout.
      await proxied.$client.end({ timeout: 0.2 })
      server.close()
    },
  }
}

describe('a commit whose answer is lost', () => {
  it('is found committed, and its orders answered as stored, when Postgres ran it', async ({ database: db, databaseUrl }) => {
    const proxy = await commitLoser(databaseUrl)
    try {
      const { account, company } = await customer(db, 30)
      // Every statement prepared on the proxied connections first, so the batch's COMMIT is the one cut.
      await storeOrders(proxy.db, [order(account.id, company)])
      proxy.arm('after')
      const outcomes = await storeOrders(proxy.db, [
        order(account.id, company, keyed('k-lost-1')),
        order(account.id, company),
        order(account.id, company, keyed('k-lost-2')),
      ])
      expect(proxy.armed()).toBeUndefined()
      expect(outcomes).toEqual([
        { outcome: 'stored', balanceAfter: 24 },
        { outcome: 'stored', balanceAfter: 21 },
        { outcome: 'stored', balanceAfter: 18 },
      ])
      const state = await expectConsistent(db, account.id)
      expect(state.letters).toHaveLength(4)
    } finally {
      await proxy.close()
    }
  })

  it('is found rolled back when Postgres never ran it, and the intake stores each order again', async ({ database: db, databaseUrl }) => {
    const { account, company } = await customer(db, 30)
    // A fresh proxy (and pool) for each part: the COMMIT it recognizes is one not yet prepared on its connection.
    const first = await commitLoser(databaseUrl)
    try {
      first.arm('before')
      await expect(storeOrders(first.db, [order(account.id, company), order(account.id, company)])).rejects.toBeInstanceOf(RolledBackError)
      expect(first.armed()).toBeUndefined()
      expect((await expectConsistent(db, account.id)).letters).toHaveLength(0)
    } finally {
      await first.close()
    }
    const second = await commitLoser(databaseUrl)
    try {
      const intake = new LetterIntake(second.db, { concurrentBatches: 1 })
      second.arm('before')
      const outcomes = await Promise.all([intake.submit(order(account.id, company)), intake.submit(order(account.id, company, keyed('k-again')))])
      expect(second.armed()).toBeUndefined()
      expect(outcomes.map((outcome) => outcome.outcome)).toEqual(['stored', 'stored'])
      const state = await expectConsistent(db, account.id)
      expect(state.letters).toHaveLength(2)
      expect(state.balance).toBe(24)
    } finally {
      await second.close()
    }
  })
})

describe('an account whose row is held', () => {
  it('answers an order given up during its last wait for the row as past its time, not with the lock error', async ({ database: db, other }) => {
    const held = await customer(db, 30)
    // One wait alone allowed after the batch gave way (maxWaitForLockMs = lockTimeoutMs).
    const intake = new LetterIntake(db, { concurrentBatches: 1, lockTimeoutMs: 300, maxWaitForLockMs: 300 })
    const release = await holdAccountRow(other, held.account.id)
    try {
      const deadline = new OrderDeadline(Date.now() + 60_000, Date.now() + 60_000)
      const answered = intake.submit(order(held.account.id, held.company, { deadline }))
      answered.catch(() => {})
      // The batch's wait, then the order's own: given up (its request answered 503) during the second.
      const waitStarts = async () =>
        (
          await other.execute<{ started: string }>(
            sql`SELECT query_start::text AS started FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%FOR UPDATE%' AND datname = current_database()`,
          )
        ).map((row) => row.started)
      let first: string | undefined
      await expect.poll(async () => (first ??= (await waitStarts())[0]), { timeout: 10_000, interval: 10 }).toBeDefined()
      await expect.poll(async () => (await waitStarts()).some((started) => started !== first), { timeout: 10_000, interval: 10 }).toBe(true)
      expect(deadline.abandon()).toBe(true)
      await expect(answered).rejects.toBeInstanceOf(DeadlineExceededError)
    } finally {
      await release()
    }
    expect((await expectConsistent(db, held.account.id)).letters).toHaveLength(0)
  })

  it('does not hold up the orders of other accounts: its batches give way and its orders wait alone', async ({ database: db, other }) => {
    const held = await customer(db, 30)
    const free = await customer(db, 30)
    const intake = new LetterIntake(db, { concurrentBatches: 2, lockTimeoutMs: 100 })
    const release = await holdAccountRow(other, held.account.id)
    // Two batches for the held account, one in each slot.
    const first = intake.submit(order(held.account.id, held.company))
    await new Promise((resolve) => setTimeout(resolve, 20))
    const second = intake.submit(order(held.account.id, held.company))
    // The other account is answered while the row is still held.
    expect(await intake.submit(order(free.account.id, free.company))).toEqual({ outcome: 'stored', balanceAfter: 27 })
    await release()
    expect((await Promise.all([first, second])).map((outcome) => outcome.outcome)).toEqual(['stored', 'stored'])
    expect((await expectConsistent(db, held.account.id)).letters).toHaveLength(2)
  })
})
