// The request deadline's own timers answer what waits (a creation with a body, a bodiless DELETE,
// a creation whose API-key lookup or handler waits for a connection of a pool busy with lock
// waits) before the connection is cut at T, and a creation refused then has written nothing
// (the requests, audit and waits in ./support/deadline-faults.ts).
import { describe, expect } from 'vitest'
import {
  ENV,
  appliedTopUps,
  audit,
  cancelledIds,
  deadlineTest,
  fire,
  holdAccountRow,
  httpCall,
  lettersByTag,
  newOwner,
  poolTaken,
  report,
  saturatePool,
  settled,
  someLetters,
  tally,
  traceIntake,
  type Plan,
} from './support/deadline-faults.js'

const it = deadlineTest()
it.override({ gatewayOptions: { isolate: 'dltimers', checkContract: false, env: ENV } })

describe('the deadline timers and a gateway pool busy with lock waits', () => {
  // A creation held past decideBy by its account's row is answered at decideBy: by the deadline's
  // timer, or by the intake when its wait for the row (cut to the time left) runs out first. Either
  // way the client is told the same: 503 with the deadline's Retry-After, before the cut at T.
  it("answers a creation with a body held past decideBy 503 with the deadline's Retry-After, as a bodiless DELETE beside it is answered", async ({
    target,
  }) => {
    const owner = await newOwner(target, 100)
    const [cardId] = await someLetters(target, owner, 'm', 1)
    const release = await holdAccountRow(target, owner.id)
    try {
      const [created, cancelled] = await Promise.all([
        fire(target, owner, { kind: 'single', tag: 'marker' }),
        httpCall('DELETE', `${target.base}/cards/${cardId}`, { 'x-api-key': owner.apiKey }),
      ])
      report('who answers at decideBy', {
        postWithBody: [created.status, created.ms, created.retryAfter, created.body.message],
        deleteWithoutBody: [cancelled.status, cancelled.ms, cancelled.retryAfter, cancelled.body.message],
      })
      // The bodiless DELETE is answered by a timer (503 at decideBy, or 500 at answerBy where only GETs and creations are 503'd).
      expect(cancelled.status).not.toBe(0)
      expect(created.status).toBe(503)
      expect(created.retryAfter, "the deadline's Retry-After").toBe('2')
    } finally {
      await release()
    }
    // The cancel told 500 may still commit now: it ends before the next test begins.
    await settled(target)
  }, 60_000)

  // Creations waiting for a pooled connection are answered by the deadline, as bodiless DELETEs
  // beside them are, never cut at T.
  it('answers creations waiting for a pooled connection before T, as it answers bodiless DELETEs beside them', async ({ target }) => {
    const held = await newOwner(target, 1000)
    const other = await newOwner(target, 1000)
    const toCancel = await someLetters(target, other, 'd', 4)
    const release = await holdAccountRow(target, held.id)
    // The other account's key is looked up now (cached 1 s): its requests pass the API-key check
    // at once, arm their deadline, and wait for a connection in the handler.
    const warm = await httpCall('GET', `${target.base}/cards?limit=1`, { 'x-api-key': other.apiKey })
    expect(warm.status).toBe(200)
    const trace = traceIntake(target)
    const warmedAt = Date.now()
    const topUps = saturatePool(target, held.id, 'rt-d1')
    await poolTaken(target)
    // Whether the key's lookup was still cached when they were sent (it is, unless the machine
    // took a second to fill the pool; either way each creation waits for a connection).
    const keyCached = target.app.apiKeyAuth.knownCaller(other.apiKey) !== undefined
    const plans = Array.from({ length: 8 }, (_, i): Plan => ({ kind: i < 6 ? 'single' : 'card', tag: `dd${i}`, ...(i % 2 === 0 ? { key: `dd-${i}` } : {}) }))
    const firedAt = Date.now()
    const [answers, deletes] = await Promise.all([
      Promise.all(plans.map((plan) => fire(target, other, plan))),
      Promise.all(toCancel.map((id) => httpCall('DELETE', `${target.base}/cards/${id}`, { 'x-api-key': other.apiKey }))),
    ])
    const topUpAnswers = await topUps
    // Held until every request here has its answer.
    await release()
    await settled(target)
    trace.stop()
    if (process.env.RT_DEBUG) console.log(`creations sent ${firedAt - warmedAt} ms after the key was looked up\n${trace.lines().join('\n')}`)
    const result = await audit(target, other, plans, answers)
    const cancelledNow = await cancelledIds(target, other.id)
    const byTag = await lettersByTag(target, other.id)
    report('deadline timers with bodies', {
      keyCached,
      ordersThatReachedTheIntake: trace.lines().length,
      creations: answers.map((a) => [a.status, a.ms, a.retryAfter]),
      lettersOfCutCreations: plans.filter((plan, n) => answers[n]!.status === 0).reduce((sum, plan) => sum + (byTag.get(plan.tag) ?? []).length, 0),
      deletes: deletes.map((a) => [a.status, a.ms, a.retryAfter]),
      cancelsAppliedAfter503: toCancel.filter((id, n) => deletes[n]!.status === 503 && cancelledNow.has(id)).length,
      topUps: tally(topUpAnswers),
      topUpsApplied: await appliedTopUps(target, held.id, 'rt-d1'),
      topUps200: topUpAnswers.filter((a) => a.status === 200).length,
    })
    expect(result.writtenAfterRefusal).toEqual([])
    // The bodiless DELETEs were answered by a deadline timer before T.
    for (const answer of deletes) expect([500, 503]).toContain(answer.status)
    expect(result.cut, 'creations cut without an answer').toEqual([])
  }, 90_000)

  // Holds since the deadline is armed in onRequest, before the API-key lookup (which waits for a
  // pooled connection like any query): the body is not read yet, so the 503 goes out.
  it('creations of another, unlocked account whose API-key lookup waits for the busy pool are answered before T, not cut', async ({ target }) => {
    const held = await newOwner(target, 1000)
    const other = await newOwner(target, 1000)
    const release = await holdAccountRow(target, held.id)
    const topUps = saturatePool(target, held.id, 'rt-d2')
    // The other account's key was never looked up: its lookup needs a connection, and every one is taken.
    await poolTaken(target)
    const plans = Array.from({ length: 10 }, (_, i): Plan => ({ kind: 'single', tag: `o${i}`, ...(i % 2 === 0 ? { key: `o-${i}` } : {}) }))
    const answers = await Promise.all(plans.map((plan) => fire(target, other, plan)))
    const topUpAnswers = await topUps
    // Held until every request here has its answer.
    await release()
    await settled(target)
    const result = await audit(target, other, plans, answers)
    const applied = await appliedTopUps(target, held.id, 'rt-d2')
    report('API-key lookup behind a busy pool', {
      otherAccount: result.statuses,
      cut: result.cut.slice(0, 2),
      otherMs: answers.map((a) => a.ms),
      topUps: tally(topUpAnswers),
      topUpsApplied: applied,
    })
    expect(result.writtenAfterRefusal).toEqual([])
    expect(result.cut, 'requests of an unlocked account cut without an answer').toEqual([])
  }, 90_000)
})
