// The gateway's Postgres backends terminated (a failover, a pooler restart) while creations wait
// for a held account row and are written near their deadline: no request is refused with
// letters written, every keyed 500 "outcome unknown" is found by its retry, and the ledger
// matches the balance (the requests, audit and waits in ./support/deadline-faults.ts).
import { describe, expect } from 'vitest'
import {
  ANSWER,
  DECIDE,
  ENV,
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
  terminator,
  watchServer,
} from './support/deadline-faults.js'

const it = deadlineTest()
it.override({ gatewayOptions: { isolate: 'termbackend', checkContract: false, env: ENV } })

describe("the gateway's Postgres backends terminated (pg_terminate_backend) around the deadline", () => {
  for (const [name, holdMs, every] of [
    ['during writes near decideBy (lock released 200 ms before it)', DECIDE - 200, () => 20 + Math.random() * 130],
    ['in a storm (every 0-10 ms) during writes at decideBy', DECIDE - 150, () => Math.random() * 10],
    ['during deadline refusals (lock held past answerBy)', ANSWER + 1000, () => 20 + Math.random() * 130],
  ] as const) {
    it(`${name}: no 503 with letters, every keyed 500 found by its retry, ledger matches`, async ({ target }) => {
      const owner = await newOwner(target, 20_000)
      const plans = mixedPlans(`t${holdMs}`, { singles: 30, cards: 10, bulks: [1000, 300, 100, 10] })
      const release = await holdAccountRow(target, owner.id)
      const server = watchServer(target)
      const releasing = server.after(holdMs).then(release)
      // Terminations from 800 ms before the release until 500 ms after it (the writes it lets
      // through), by the gateway's clock.
      const started = server.after(Math.max(0, holdMs - 800)).then(() => terminator(target, every))
      const answers = await Promise.all(plans.map((plan) => fire(target, owner, plan)))
      await releasing
      await server.after(holdMs + 500)
      const kills = await (await started).stop()
      await settled(target)
      const first = await audit(target, owner, plans, answers)
      const retries = await settleKeyed(target, owner, plans, answers)
      const after = await audit(target, owner, plans, answers)
      const state = await money(target, owner.id)
      report(`terminations ${name}`, {
        requests: plans.length,
        kills,
        first: first.statuses,
        slowest: first.slowest,
        unknown: first.unknown,
        retries,
        final: after.statuses,
        state,
      })
      expectClean(first)
      expectClean(after)
      expect(retries.neverSettled).toEqual([])
      await expectMoneyConsistent(target, owner)
    }, 90_000)
  }
})
