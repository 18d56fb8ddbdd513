// A gateway process killed (SIGKILL, as the OOM killer or a lost machine would) while its
// creations wait for a held account row or are being written: each keyed request, retried on
// another gateway, is stored once and nothing is charged twice (the requests, audit and waits in
// ./support/deadline-faults.ts).
import { describe, expect } from 'vitest'
import { freePort, startGatewayProcess, type ServiceProcess } from '@letters/test/support/processes'
import {
  DECIDE,
  ENV,
  audit,
  backendsOf,
  creationsArrived,
  deadlineTest,
  expectMoneyConsistent,
  fire,
  holdAccountRow,
  lettersByTag,
  lockWaiters,
  mixedPlans,
  money,
  newOwner,
  processEnv,
  report,
  settleKeyed,
  settled,
  sleep,
  until,
  type Plan,
  type Target,
} from './support/deadline-faults.js'

const it = deadlineTest()
it.override({ gatewayOptions: { isolate: 'killedgw', checkContract: false, env: ENV } })

/** The killed gateway's connections, by the application_name its DATABASE_URL gives them. */
const KILLED = 'rt-killed-gateway'

interface Strike {
  name: string
  label: string
  /** The gateway process's environment beyond processEnv's. */
  env: Record<string, string>
  /** Kills the gateway process (and lets the row go, or not) at the scenario's moment. */
  strike(at: { target: Target; child: ServiceProcess; plans: Plan[]; release: () => Promise<void> }): Promise<void>
}

const strikes: Strike[] = [
  {
    name: 'mid-wait (every creation arrived and waiting, the account row held)',
    label: 'pw',
    // Its requests' deadlines (decideBy 15 s) far beyond the kill: every creation is still waiting
    // when it comes, however long they took to arrive on a loaded machine.
    env: { HTTP_REQUEST_TIMEOUT_MS: '20000' },
    async strike({ target, child, plans }) {
      await until('every creation to reach the gateway process and wait for the held row', async () =>
        creationsArrived(child).length >= plans.length && (await lockWaiters(target, KILLED)) > 0 ? true : undefined,
      )
      await child.kill()
    },
  },
  {
    name: 'while writes end near decideBy (lock released 300 ms before it, killed 100 ms later)',
    label: 'pd',
    env: {},
    async strike({ child, release }) {
      // Counted from the first creation's arrival, by the gateway process's clock (its log's time):
      // its deadline is armed then.
      const first = await until('the first creation to reach the gateway process', () => creationsArrived(child)[0])
      const releasing = sleep(first.time + DECIDE - 300 - Date.now()).then(release)
      await sleep(first.time + DECIDE - 200 - Date.now())
      await child.kill()
      await releasing
    },
  },
]

describe('a gateway process killed (SIGKILL) while its creations wait or are being written', () => {
  for (const { name, label, env, strike } of strikes) {
    it(`${name}: each keyed request, retried on another gateway, is stored once; nothing is charged twice`, async ({ target }) => {
      const port = await freePort()
      const killedUrl = `${target.app.config.databaseUrl}?application_name=${KILLED}`
      const child = await startGatewayProcess(target.app.config, port, processEnv({ ...env, DATABASE_URL: killedUrl }))
      const url = `http://127.0.0.1:${port}`
      const owner = await newOwner(target, 20_000)
      const plans = mixedPlans(label, { singles: 24, cards: 8, bulks: [1000, 300, 100, 10] })
      const release = await holdAccountRow(target, owner.id)
      try {
        const pending = Promise.all(plans.map((plan) => fire(target, owner, plan, url)))
        await strike({ target, child, plans, release })
        const answers = await pending
        // Postgres finds the dead client within client_connection_check_interval (1 s), even mid
        // lock wait: its locks (the keys' among them) go with its backends.
        const killedAt = Date.now()
        await until("the killed gateway's backends to be gone", async () => ((await backendsOf(target, KILLED)) === 0 ? true : undefined))
        const backendsGoneAfterMs = Date.now() - killedAt
        await release()
        await settled(target)
        const first = await audit(target, owner, plans, answers, true)
        const unkeyedStored = plans.filter((plan, n) => !plan.key && answers[n]!.status === 0).map((plan) => plan.tag)
        const retries = await settleKeyed(target, owner, plans, answers)
        const after = await audit(target, owner, plans, answers, true)
        const byTag = await lettersByTag(target, owner.id)
        const state = await money(target, owner.id)
        report(`SIGKILL ${name}`, {
          requests: plans.length,
          first: first.statuses,
          backendsGoneAfterMs,
          retries,
          final: after.statuses,
          unkeyedCutWithLetters: unkeyedStored.filter((tag) => (byTag.get(tag) ?? []).length > 0).length,
          unkeyedCutWithout: unkeyedStored.filter((tag) => (byTag.get(tag) ?? []).length === 0).length,
          state,
        })
        expect(first.writtenAfterRefusal).toEqual([])
        expect(after.wrong200).toEqual([])
        expect(retries.neverSettled).toEqual([])
        // Every keyed request ends 200 with exactly its letters.
        plans.forEach((plan, n) => {
          if (plan.key) expect(answers[n]!.status, plan.tag).toBe(200)
        })
        await expectMoneyConsistent(target, owner)
      } finally {
        await release()
        await child.kill()
      }
    }, 180_000)
  }
})
