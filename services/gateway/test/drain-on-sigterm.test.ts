// A gateway process stopped (SIGTERM: a deploy, a scale-down) while its creations wait for a held
// account row lets them finish for a grace of 3 s, then answers every one still waiting 503 rather
// than cutting it when it exits; nothing of them is written or charged, and it exits within its
// drain time (the requests, audit and waits in ./support/deadline-faults.ts).
import { describe, expect } from 'vitest'
import { freePort, startGatewayProcess } from '@letters/test/support/processes'
import {
  ENV,
  audit,
  creationsArrived,
  deadlineTest,
  expectClean,
  fire,
  holdAccountRow,
  lockWaiters,
  logLines,
  mixedPlans,
  money,
  newOwner,
  processEnv,
  report,
  settled,
  tally,
  until,
} from './support/deadline-faults.js'
import { CLOSING_GRACE_MS } from '../src/plugins/app/request-deadline.js'

const it = deadlineTest()
it.override({ gatewayOptions: { isolate: 'sigterm', checkContract: false, env: ENV } })

/** The stopped gateway's connections, by the application_name its DATABASE_URL gives them. */
const STOPPED = 'rt-stopped-gateway'

describe('a gateway process stopped (SIGTERM) while its creations wait on a held account row', () => {
  it('answers every waiting creation 503 after its 3 s grace, writes nothing, and exits within its drain time', async ({ target }) => {
    const port = await freePort()
    // Its requests' own deadlines (decideBy 15 s) come long after the grace: only the stop answers them.
    const child = await startGatewayProcess(
      target.app.config,
      port,
      processEnv({ HTTP_REQUEST_TIMEOUT_MS: '20000', DATABASE_URL: `${target.app.config.databaseUrl}?application_name=${STOPPED}` }),
    )
    const url = `http://127.0.0.1:${port}`
    const owner = await newOwner(target, 20_000)
    const plans = mixedPlans('q', { singles: 20, cards: 6, bulks: [1000, 100] })
    const release = await holdAccountRow(target, owner.id)
    try {
      const pending = Promise.all(plans.map((plan) => fire(target, owner, plan, url)))
      await until('every creation to reach the gateway process and wait for the held row', async () =>
        creationsArrived(child).length >= plans.length && (await lockWaiters(target, STOPPED)) > 0 ? true : undefined,
      )
      const stoppedAt = Date.now()
      child.child.kill('SIGTERM')
      const answers = await pending
      await until('the gateway process to exit', () => !child.alive() || undefined)
      const exit = await child.exited
      const exitedAfterMs = Date.now() - stoppedAt
      await release()
      await settled(target)
      const result = await audit(target, owner, plans, answers)
      const retryAfters = tally(answers.map((a) => ({ ...a, status: Number(a.retryAfter ?? -1) })))
      // By the process's own clock (the times of its log lines): when it began to stop, and when
      // it answered each creation, counted from then.
      const log = logLines(child)
      const stopping = log.find((line) => line.msg === 'shutting down')
      const creations = new Set(creationsArrived(child).map((line) => line.reqId))
      const answeredAfterStopMs = log
        .filter((line) => line.msg === 'request completed' && creations.has(line.reqId))
        .map((line) => line.time - (stopping?.time ?? Number.NaN))
      report('SIGTERM', {
        requests: plans.length,
        statuses: result.statuses,
        retryAfters,
        answeredAfterStopMs: [Math.min(...answeredAfterStopMs), Math.max(...answeredAfterStopMs)],
        slowestByClient: result.slowest,
        exit,
        exitedAfterMs,
      })
      expectClean(result)
      expect(await money(target, owner.id)).toMatchObject({ letters: 0, charges: 0, balance: owner.credits })
      expect(stopping, 'the "shutting down" line').toBeDefined()
      expect(answeredAfterStopMs.length, 'creations answered, as the process logged them').toBe(plans.length)
      // The grace is counted by the process from after this line: no creation is answered before it ends.
      expect(Math.min(...answeredAfterStopMs)).toBeGreaterThanOrEqual(CLOSING_GRACE_MS)
      // And each is answered as it ends: 2 s is room for what stops before the grace starts (the
      // letter clock, the eraser, the outbox dispatcher) and for a loaded machine's late timers.
      expect(Math.max(...answeredAfterStopMs)).toBeLessThan(CLOSING_GRACE_MS + 2000)
      // Exit code 0: it closed within its drain time (past it, close-with-grace exits 1).
      expect(exit).toBe(0)
    } finally {
      await release()
      await child.kill()
    }
  }, 180_000)
})
