// Writes other than creations (a client's cancel, an admin's top-up) whose statements may still
// commit after their deadline are never told 503 ("nothing was done, retry") and then applied:
// at their deadline they are told 500 "outcome unknown"; a 200 was applied; a 503 or a 4xx was
// not (the requests, audit and waits in ./support/deadline-faults.ts).
import { describe, expect } from 'vitest'
import { expectLedgerMatchesLetters } from '@letters/test/support/ledger'
import {
  DECIDE,
  ENV,
  cancelledIds,
  countTransactions,
  deadlineTest,
  holdAccountRow,
  httpCall,
  money,
  newOwner,
  report,
  settled,
  someLetters,
  tally,
  topUp,
  until,
  watchServer,
} from './support/deadline-faults.js'

const it = deadlineTest()
it.override({ gatewayOptions: { isolate: 'latewrites', checkContract: false, env: ENV } })

describe('the deadline timers and writes that may still commit after the answer', () => {
  // Each statement may run DATABASE_STATEMENT_TIMEOUT_MS from when it starts, not from when its
  // request arrived, so a cancel or a top-up queued for a connection can commit after its
  // request's decideBy: only reads and creations (which stop with their deadline) are 503'd then.
  it('client cancels and admin top-ups answered 503 at their deadline are not applied afterwards (a 200 is, a 500 may be)', async ({ target }) => {
    const owner = await newOwner(target, 1000)
    const cardIds = await someLetters(target, owner, 'x', 6)
    const before = await money(target, owner.id)
    const writes = countTransactions(target)
    const release = await holdAccountRow(target, owner.id)
    const server = watchServer(target)
    const releasing = server.after(DECIDE + 800).then(release)
    const [topUps, cancels] = await Promise.all([
      Promise.all(Array.from({ length: 14 }, (_, i) => topUp(target, owner.id, `rt-late-${i}`))),
      Promise.all(cardIds.map((id) => httpCall('DELETE', `${target.base}/cards/${id}`, { 'x-api-key': owner.apiKey }))),
    ])
    await releasing
    // A top-up and a cancel each write in one transaction: what each did is known once all of
    // them have committed or rolled back, whatever their requests were told meanwhile.
    await until('every top-up and cancel to commit or roll back', () =>
      writes.counts.started >= topUps.length + cancels.length && writes.counts.inFlight === 0 ? true : undefined,
    )
    await settled(target)
    writes.stop()
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
      transactions: writes.counts.started,
      balanceBefore: before.balance,
      balanceAfter: after.balance,
    })
    await expectLedgerMatchesLetters(target.app.db, owner.id)
    // A 503 (or 4xx) whose work was done anyway; a 200 whose work was not.
    expect(lies).toEqual([])
  }, 90_000)
})
