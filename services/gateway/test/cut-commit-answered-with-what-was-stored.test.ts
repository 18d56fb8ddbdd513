// A creation whose commit is cut (its backend terminated at COMMIT, or while the intake finds out
// what became of it) is answered with what was stored, and in time: a 200 with its letters, a 503
// with nothing written, or a 500 "outcome unknown" by answerBy that its keyed retry resolves;
// never a connection cut at T (the requests, audit and waits in ./support/deadline-faults.ts).
import { describe, expect } from 'vitest'
import {
  DECIDE,
  ENV,
  audit,
  commitKiller,
  deadlineTest,
  expectClean,
  expectMoneyConsistent,
  fire,
  holdAccountRow,
  lettersByTag,
  mixedPlans,
  newOwner,
  report,
  settleKeyed,
  settled,
  watchServer,
  type Answer,
  type Plan,
} from './support/deadline-faults.js'

const it = deadlineTest()
it.override({ gatewayOptions: { isolate: 'cutcommit', checkContract: false, env: ENV } })

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
      const server = watchServer(target)
      const releasing = server.after(DECIDE - 250).then(release)
      const killer = commitKiller(target)
      const answers = await Promise.all(plans.map((plan) => fire(target, owner, plan)))
      await releasing
      server.stop()
      const seen = await killer.stop()
      killed.commitWindow += seen.commitWindow
      killed.verification += seen.verification
      await settled(target)
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
    // The rounds cut transactions between their write and its commit: what the test claims of.
    expect(killed.commitWindow).toBeGreaterThan(0)
  }, 180_000)
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
      const server = watchServer(target)
      // Just before decideBy the row changes hands: another transaction takes it as this one lets
      // it go, and holds it until every request of the round has its answer.
      const relocked = server.after(DECIDE - 250).then(async () => {
        const again = holdAccountRow(target, owner.id)
        await release()
        return again
      })
      const killer = commitKiller(target, { spareVerification: true })
      const answers = await Promise.all(plans.map((plan) => fire(target, owner, plan)))
      const seen = await killer.stop()
      killed = { commitWindow: killed.commitWindow + seen.commitWindow, verification: killed.verification + seen.verification }
      await (
        await relocked
      )()
      server.stop()
      all.push({ plans, answers })
    }
    await settled(target)
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
    expect(killed.commitWindow, 'commits cut').toBeGreaterThan(0)
  }, 120_000)
})
