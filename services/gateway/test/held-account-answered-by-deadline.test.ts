// A creation waiting for its account's row, held by another transaction around the deadline, is
// answered before its connection is cut: a 503 has written and charged nothing, a 200 names
// exactly its letters, a keyed request is settled by its retry, and the ledger matches the
// balance (the requests, audit and waits in ./support/deadline-faults.ts).
import { describe, expect } from 'vitest'
import {
  ANSWER,
  DECIDE,
  ENV,
  T,
  audit,
  deadlineTest,
  expectClean,
  expectMoneyConsistent,
  fire,
  holdAccountRow,
  mixedPlans,
  money,
  newOwner,
  report,
  settleKeyed,
  settled,
  watchServer,
} from './support/deadline-faults.js'

const it = deadlineTest()
it.override({ gatewayOptions: { isolate: 'heldrow', checkContract: false, env: ENV } })

describe('an account row held (FOR NO KEY UPDATE) around the deadline, under mixed concurrent creations', () => {
  for (const [name, holdMs] of [
    ['just below decideBy', DECIDE - 300],
    ['just above decideBy', DECIDE + 300],
    ['far above decideBy (3 T)', 3 * T],
  ] as const) {
    it(`an account row locked for ${name} (${holdMs} ms; decideBy ${DECIDE}, answerBy ${ANSWER}): every request answered, 503s write nothing, 200s exactly their letters`, async ({
      target,
    }) => {
      const owner = await newOwner(target, 20_000)
      const plans = mixedPlans(`h${holdMs}`)
      const release = await holdAccountRow(target, owner.id)
      const server = watchServer(target)
      const releasing = server.after(holdMs).then(release)
      const answers = await Promise.all(plans.map((plan) => fire(target, owner, plan)))
      await releasing
      await settled(target)
      const first = await audit(target, owner, plans, answers)
      const retries = await settleKeyed(target, owner, plans, answers)
      const after = await audit(target, owner, plans, answers)
      const state = await money(target, owner.id)
      const retryAfters = answers.reduce<Record<string, number>>(
        (all, a) => (a.status === 503 ? { ...all, [`${a.retryAfter}`]: (all[`${a.retryAfter}`] ?? 0) + 1 } : all),
        {},
      )
      report(`lock ${name}`, {
        retryAfters,
        requests: plans.length,
        first: first.statuses,
        slowestByClient: first.slowest,
        slowestByGateway: server.slowestMs(),
        unknown: first.unknown,
        retries,
        final: after.statuses,
        state,
      })
      expectClean(first)
      expectClean(after)
      expect(retries.neverSettled).toEqual([])
      // A 500 "outcome unknown" without a key leaves the client nothing to find out with; count them.
      expect(
        first.unknown.filter((u) => !u.keyed && u.letters > 0),
        'unkeyed 500s whose letters were stored',
      ).toEqual([])
      // By the gateway's clock, from each request's arrival to its answer written: its socket is
      // cut after T of silence, so an answer is due by then; the 1.5 s above T is room for timers
      // that fire late on a loaded machine, as the gateway's own deadline timers do.
      expect(server.slowestMs()).toBeLessThan(T + 1500)
      await expectMoneyConsistent(target, owner)
    }, 90_000)
  }
})
