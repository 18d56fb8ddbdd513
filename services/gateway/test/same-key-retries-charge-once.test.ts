// Retries with the same Idempotency-Key, sent while the original may still be in its transaction
// (a held account row, attempts abandoned client-side, terminated backends), store and charge
// each key once, and no key stays "in progress" (409) once its original is decided (the
// requests, audit and waits in ./support/deadline-faults.ts). A creation still being written
// when its answer is due is answered 500 "outcome unknown" (docs/api-guide.md, Deadlines): on a
// loaded machine that happens, and the client then retries with the same key, as told.
import { describe, expect } from 'vitest'
import { createClient, LettersApiError, LettersConnectionError } from '@letters/sdk'
import { singleLetter } from '@letters/test/support/factories'
import {
  ANSWER,
  DECIDE,
  ENV,
  deadlineTest,
  expectMoneyConsistent,
  fire,
  holdAccountRow,
  idsOf,
  letterCount,
  lettersByTag,
  money,
  newOwner,
  report,
  settled,
  sleep,
  terminator,
  traceIntake,
  watchServer,
  type Answer,
  type Plan,
} from './support/deadline-faults.js'
import { outcomeUnknownMessage } from '../src/common/deadline-messages.js'

const it = deadlineTest()
it.override({ gatewayOptions: { isolate: 'samekey', checkContract: false, env: ENV } })

/** How long a key may take to be answered 200 before it counts as never settled: far above the seconds it takes. */
const SETTLE_WITHIN_MS = 45_000

/**
 * The 500 a creation gets when whether it was stored cannot be told (its write still under way at
 * its answer time, or its commit's outcome lost), with the message that says so and tells the
 * client to retry with the same key; any other 500 is an error.
 */
const outcomeUnknown = (plan: Plan, answer: Answer) =>
  answer.status === 500 && [outcomeUnknownMessage(true), outcomeUnknownMessage(true, letterCount(plan))].includes(answer.body.message ?? '')

describe('retries with the same Idempotency-Key while the original may still be in its transaction', () => {
  for (const holdMs of [DECIDE - 100, DECIDE + 700])
    it(`charges each key once, and no key stays 409 once its original is decided (lock released at ${holdMs} ms)`, async ({ target }) => {
      const owner = await newOwner(target, 20_000)
      const plans: Plan[] = [
        // Retried at once after each 503, 409 or 500 "outcome unknown", ignoring Retry-After.
        ...Array.from({ length: 20 }, (_, i): Plan => ({ kind: 'single', tag: `rs${i}`, key: `r-s${i}` })),
        ...Array.from({ length: 6 }, (_, i): Plan => ({ kind: 'card', tag: `rc${i}`, key: `r-c${i}` })),
        ...[300, 50].map((size, i): Plan => ({ kind: 'bulk', tag: `rb${i}`, key: `r-b${i}`, size })),
        // Impatient: the client gives up on each attempt before the server's decideBy and retries at once.
        ...Array.from({ length: 14 }, (_, i): Plan => ({ kind: 'single', tag: `ri${i}`, key: `r-i${i}`, abortAfterMs: DECIDE - 400 + (i % 7) * 100 })),
        ...[200].map((size, i): Plan => ({ kind: 'bulk', tag: `rib${i}`, key: `r-ib${i}`, size, abortAfterMs: DECIDE - 200 })),
      ]
      const release = await holdAccountRow(target, owner.id)
      const server = watchServer(target)
      let releasedAt = Number.POSITIVE_INFINITY
      const releasing = server.after(holdMs).then(async () => {
        await release()
        releasedAt = Date.now()
      })
      const trace = traceIntake(target)
      const t0 = Date.now()
      const tally = { statuses: {} as Record<number, number>, attempts: 0, neverSettled: [] as string[] }
      /** The attempts answered 409 (their key still in progress). */
      const conflicts: Array<string | undefined> = []
      /** The attempts answered 500 "outcome unknown" (whether they were stored could not be told in time). */
      const unknown: Array<string | undefined> = []
      const finals = await Promise.all(
        plans.map(async (plan): Promise<Answer> => {
          while (Date.now() - t0 < SETTLE_WITHIN_MS) {
            tally.attempts++
            const answer = await fire(target, owner, plan)
            const key = answer.status === 0 ? 'aborted' : String(answer.status)
            tally.statuses[key as unknown as number] = (tally.statuses[key as unknown as number] ?? 0) + 1
            if (answer.status === 200) return answer
            if (answer.status === 409) conflicts.push(answer.attempt)
            // Retried with the same key, as its answer says: the key's replay, or the key stored
            // then, must name exactly its letters (checked below).
            if (outcomeUnknown(plan, answer)) unknown.push(answer.attempt)
            // A cut connection not caused by the client's own abort is an answer missing.
            if (answer.status === 0 && !plan.abortAfterMs) return answer
            // Any other answer ends the key: a 500 other than "outcome unknown" is a fault.
            if (answer.status !== 0 && ![503, 409].includes(answer.status) && !outcomeUnknown(plan, answer)) return answer
            // The client's pace between attempts, not a wait for anything.
            await sleep(plan.abortAfterMs ? 0 : 5)
          }
          tally.neverSettled.push(plan.tag)
          return { status: -1, body: {}, retryAfter: null, ms: 0 }
        }),
      )
      await releasing
      await settled(target)
      trace.stop()
      const byTag = await lettersByTag(target, owner.id)
      const wrong = plans.flatMap((plan, n) => {
        const answer = finals[n]!
        const found = byTag.get(plan.tag) ?? []
        if (answer.status !== 200) return [`${plan.tag}: ended ${answer.status}`]
        const named = idsOf(plan, answer).sort()
        return JSON.stringify(named) === JSON.stringify(found.sort()) && found.length === letterCount(plan)
          ? []
          : [`${plan.tag}: named ${named.length}, found ${found.length}`]
      })
      // A 409 says another attempt of the key is being decided: that attempt's transaction holds
      // the key's lock until it ends. So each 409 the intake gave must overlap, by the gateway's
      // clock, another attempt of its key the intake had not decided yet; one that overlaps none
      // is a key left "in progress" once its original was decided, however soon after the lock
      // went it came.
      const inFlight = trace.orders.filter((order) => order.outcome === 'key-in-flight')
      const conflictsOfDecidedKeys = inFlight
        .filter(
          (conflict) =>
            !trace.orders.some(
              (other) =>
                other.tag === conflict.tag &&
                other.outcome !== 'key-in-flight' &&
                other.submittedAt <= (conflict.settledAt ?? Number.POSITIVE_INFINITY) &&
                (other.settledAt ?? Number.POSITIVE_INFINITY) >= conflict.submittedAt,
            ),
        )
        .map((conflict) => `${conflict.tag} at ${conflict.submittedAt - t0} ms`)
      // Reported: how long after the row was let go an attempt arrived and still found its key in
      // progress, by the gateway's clock (an attempt that arrived before counts as 0).
      const lastConflictAfterReleaseMs = Math.max(0, ...conflicts.map((attempt) => (server.byAttempt(attempt)?.arrivedAt ?? releasedAt) - releasedAt))
      const state = await money(target, owner.id)
      report(`same-key retries, lock released at ${holdMs} ms`, {
        keys: plans.length,
        ...tally,
        conflicts: conflicts.length,
        outcomeUnknown: unknown.length,
        conflictsInTheIntake: inFlight.length,
        lastConflictAfterReleaseMs,
        state,
      })
      expect(tally.neverSettled).toEqual([])
      expect(wrong).toEqual([])
      // No key stays 409 once its original is decided.
      expect(conflictsOfDecidedKeys, '409s while no other attempt of their key was undecided').toEqual([])
      // Every 409 a client got came from the intake, where the check above saw it (the intake may
      // have given more: to attempts their clients had already abandoned).
      expect(inFlight.length).toBeGreaterThanOrEqual(conflicts.length)
      // Once the row is free, no original stays undecided longer than its own request may last
      // (answered by ANSWER after it arrived): a 409 later than that is a key left in progress.
      expect(lastConflictAfterReleaseMs, 'last 409 after the row was let go, by the gateway').toBeLessThan(ANSWER)
      await expectMoneyConsistent(target, owner)
    }, 120_000)
})

describe("the SDK against a held account row and terminated backends, its own attempt timeout shorter than the server's", () => {
  it('stores each call once: attempts abandoned client-side and 503s are retried with the same key, and the key it hands back settles the rest', async ({
    target,
  }) => {
    const owner = await newOwner(target, 1000)
    // Each attempt abandoned after decideBy − 300 ms: the retry arrives while the first may still be in its transaction.
    const client = createClient({ apiKey: owner.apiKey, baseUrl: target.base, retries: 4, retryDelayMs: 100, timeoutMs: DECIDE - 300 })
    const release = await holdAccountRow(target, owner.id)
    const server = watchServer(target)
    const releasing = server.after(DECIDE + 1500).then(release)
    const kill = server.after(DECIDE - 600).then(() => terminator(target, () => 50 + Math.random() * 200))
    const bodies = Array.from({ length: 16 }, (_, i) => singleLetter(owner, { surname: `sdk${i}`, message: `Hola sdk${i}` }))
    const calls = await Promise.all(
      bodies.map((body) =>
        client.POST('/single', { body }).then(
          (result) => ({ ok: true as const, key: result.idempotencyKey, cardId: result.data!.cardId }),
          (error: unknown) => ({
            ok: false as const,
            kind: error instanceof LettersApiError ? `api ${error.status}` : error instanceof LettersConnectionError ? 'connection' : String(error),
            key: (error as LettersApiError | LettersConnectionError).idempotencyKey,
          }),
        ),
      ),
    )
    await releasing
    await (await kill).stop()
    await settled(target)
    const failures = calls.filter((call) => !call.ok)
    const settledIds = await Promise.all(
      calls.map(async (call, i) => {
        if (call.ok) return call.cardId
        expect(call.key, 'the failed call hands back its key').toEqual(expect.any(String))
        const again = await client.POST('/single', { body: bodies[i]!, idempotencyKey: call.key! })
        return again.data!.cardId
      }),
    )
    const byTag = await lettersByTag(target, owner.id)
    report('SDK', {
      calls: calls.length,
      storedWithinRetries: calls.filter((call) => call.ok).length,
      failures: failures.map((call) => (call.ok ? '' : call.kind)),
    })
    bodies.forEach((_, i) => expect(byTag.get(`sdk${i}`), `sdk${i}`).toEqual([settledIds[i]]))
    await expectMoneyConsistent(target, owner)
  }, 90_000)
})
