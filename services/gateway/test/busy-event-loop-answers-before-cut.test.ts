// CPU-bound 1,000-recipient bulk requests keep the gateway's event loop busy and delay its deadline
// timers: every request is still answered before its connection is cut, a 503 has written
// nothing, and the ledger matches the balance (the requests, audit and waits in
// ./support/deadline-faults.ts).
import { describe, expect } from 'vitest'
import {
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
  newOwner,
  report,
  settleKeyed,
  settled,
  watchServer,
} from './support/deadline-faults.js'

const it = deadlineTest()
it.override({ gatewayOptions: { isolate: 'busyloop', checkContract: false, env: ENV } })

/** The longest the event loop stood still while `work` ran, sampled every 10 ms. */
async function withLoopLag<R>(work: () => Promise<R>): Promise<{ result: R; maxLagMs: number }> {
  let maxLagMs = 0
  let last = Date.now()
  const timer = setInterval(() => {
    const now = Date.now()
    maxLagMs = Math.max(maxLagMs, now - last - 10)
    last = now
  }, 10)
  try {
    return { result: await work(), maxLagMs }
  } finally {
    clearInterval(timer)
  }
}

describe('event-loop pressure: CPU-bound 1,000-recipient bulk requests delaying the deadline timers', () => {
  for (const [name, holdMs] of [
    ['the account row held past the deadline', 3 * T],
    ['no lock: the CPU alone', 0],
  ] as const) {
    it(`${name}: every request answered before its connection is cut, 503s with nothing written`, async ({ target }) => {
      const owner = await newOwner(target, 50_000)
      const plans = mixedPlans(`e${holdMs}`, { singles: 20, cards: 6, bulks: [1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000] })
      const release = holdMs > 0 ? await holdAccountRow(target, owner.id) : async () => {}
      const server = watchServer(target)
      const releasing = server.after(holdMs).then(release)
      const { result: answers, maxLagMs } = await withLoopLag(() => Promise.all(plans.map((plan) => fire(target, owner, plan))))
      await releasing
      await settled(target)
      const first = await audit(target, owner, plans, answers)
      const retries = await settleKeyed(target, owner, plans, answers)
      const after = await audit(target, owner, plans, answers)
      const bulkMs = plans.flatMap((plan, n) => (plan.kind === 'bulk' ? [answers[n]!.ms] : []))
      const early = plans.flatMap((plan, n) =>
        answers[n]!.status === 503 && answers[n]!.ms < DECIDE - 100
          ? [`${plan.tag} ${answers[n]!.ms}ms retry-after ${answers[n]!.retryAfter}: ${answers[n]!.body.message}`]
          : [],
      )
      if (early.length > 0) console.log(early.join('\n'))
      report(`event loop, ${name}`, {
        requests: plans.length,
        first: first.statuses,
        maxLagMs,
        bulkMs,
        slowest: first.slowest,
        slowestByGateway: server.slowestMs(),
        unknown: first.unknown,
        retries,
        final: after.statuses,
      })
      expectClean(first)
      expectClean(after)
      expect(retries.neverSettled).toEqual([])
      await expectMoneyConsistent(target, owner)
    }, 120_000)
  }
})
