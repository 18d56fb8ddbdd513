import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import postgres from 'postgres'
import type { ProcessName } from '@letters/config'
import { adminAccount, overHttp } from '../support/accounts.js'
import { ADMIN_TOKEN, isolatedDatabase, testConfig } from '../support/context.js'
import { singleLetter } from '../support/factories.js'
import { checkoutPreviousRelease, PREVIOUS_RELEASE } from '../support/previous-release.js'
import { freePort, startServiceProcess, type ServiceProcess } from '../support/processes.js'
import { startWebhookReceiver } from '../support/webhook-receiver.js'

type Account = Awaited<ReturnType<typeof adminAccount>>

/** A pino line at error level or worse. */
const ERROR_LINE = /"level":(50|60)/

async function post(base: string, account: Account, key?: string) {
  const response = await fetch(`${base}/single`, {
    method: 'POST',
    headers: { 'x-api-key': account.apiKey, 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
    body: JSON.stringify(singleLetter(account)),
  })
  const body = await response.text()
  expect(response.status, body).toBe(200)
  return (JSON.parse(body) as { cardId: string }).cardId
}

/** Keyed (each twice: the replay answers the same letter) and unkeyed creations through one gateway. */
async function sendThrough(base: string, account: Account, label: string): Promise<string[]> {
  const ids: string[] = []
  for (let i = 0; i < 3; i++) {
    const key = `${label}-${i}-${Math.random().toString(36).slice(2)}`
    const id = await post(base, account, key)
    expect(await post(base, account, key), 'the replay of a key answers its letter').toBe(id)
    ids.push(id, await post(base, account))
  }
  return ids
}

async function statusOf(base: string, account: Account, id: string): Promise<string> {
  const response = await fetch(`${base}/cards/${id}`, { headers: { 'x-api-key': account.apiKey } })
  return ((await response.json()) as { status: string }).status
}

describe('a rolling upgrade: the previous release’s processes beside this one’s, on this one’s schema', () => {
  it(`serves keyed and unkeyed POST /single from both, the old dispatcher and webhook worker included: every letter printed once and delivered (previous release ${PREVIOUS_RELEASE.slice(0, 7)})`, async () => {
    const previous = await checkoutPreviousRelease()
    // Migrated by this release: the previous release's processes find every migration they know, and more.
    const database = await isolatedDatabase('rolling')
    const floorDir = await mkdtemp(join(tmpdir(), 'letters-rolling-'))
    const receiver = await startWebhookReceiver()
    const config = testConfig({
      DATABASE_URL: database.url,
      QUEUE_PREFIX: `${testConfig().queuePrefix}-rolling`,
      ARTIFACTS_DIR: join(floorDir, 'artifacts'),
      SPOOL_DIR: join(floorDir, 'spool'),
    })
    const started: Array<{ release: 'previous' | 'this'; name: ProcessName; process: ServiceProcess }> = []
    const start = async (release: 'previous' | 'this', name: ProcessName, env: Record<string, string> = {}) => {
      const process = await startServiceProcess(
        name,
        config,
        // The receiver is on loopback; serviceEnv passes only the test configuration's own variables.
        { LOG_LEVEL: 'info', WEBHOOK_ALLOW_PRIVATE_URLS: 'true', ...env },
        { timeoutMs: 90_000, ...(release === 'previous' ? { cwd: previous.dir } : {}) },
      )
      started.push({ release, name, process })
      return process
    }
    try {
      // Mid-upgrade: the old gateway (with its dispatcher) and the old webhook worker still run,
      // and this release's address and production workers have replaced theirs.
      const oldPort = await freePort()
      const oldBase = `http://127.0.0.1:${oldPort}`
      await start('previous', 'gateway', { PORT: String(oldPort), ADMIN_TOKEN })
      await start('previous', 'webhook-worker')
      await start('this', 'address-worker')
      await start('this', 'production-worker')

      const account = await adminAccount(overHttp(oldBase), 200)
      const registered = await fetch(`${oldBase}/webhooks`, {
        method: 'POST',
        headers: { 'x-api-key': account.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ url: receiver.url, events: ['letter.printed'] }),
      })
      expect(registered.status, await registered.clone().text()).toBe(201)

      // Only the old dispatcher runs: these letters reach the new workers through it.
      const throughOld = await sendThrough(oldBase, account, 'old')
      for (const id of throughOld) await expect.poll(() => statusOf(oldBase, account, id), { timeout: 60_000, interval: 250 }).toBe('printed')
      await expect.poll(() => new Set(receiver.received.map((hook) => hook.json.data.id)).size, { timeout: 60_000, interval: 250 }).toBe(throughOld.length)

      // Then this release's gateway and webhook worker join, and both gateways take letters.
      const newPort = await freePort()
      const newBase = `http://127.0.0.1:${newPort}`
      await start('this', 'gateway', { PORT: String(newPort), ADMIN_TOKEN })
      await start('this', 'webhook-worker')
      const throughBoth = [...(await sendThrough(newBase, account, 'new')), ...(await sendThrough(oldBase, account, 'old-again'))]
      const all = [...throughOld, ...throughBoth]
      for (const id of all) await expect.poll(() => statusOf(newBase, account, id), { timeout: 60_000, interval: 250 }).toBe('printed')
      await expect.poll(() => new Set(receiver.received.map((hook) => hook.json.data.id)).size, { timeout: 60_000, interval: 250 }).toBe(all.length)

      // Each letter printed and charged once: 18 letters, 18 distinct ids, the balance down by 18 letters' cost.
      expect(new Set(all).size).toBe(18)
      const balance = (await (await fetch(`${newBase}/admin/accounts/${account.id}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json()) as {
        balance: number
      }
      expect(balance.balance).toBe(200 - 18 * 3)
      // Printed once: each letter's card and envelope handed to the printer once, whichever release's dispatcher sent its job.
      const observer = postgres(database.url, { max: 1, onnotice: () => {} })
      const handoffs = await observer<Array<{ file: string; n: number }>>`SELECT file, count(*)::int AS n FROM print_handoffs GROUP BY file`
      await observer.end()
      expect(handoffs).toHaveLength(all.length * 2)
      expect(handoffs.filter((handoff) => handoff.n !== 1)).toEqual([])
      for (const { release, name, process } of started) {
        const errors = process
          .output()
          .split('\n')
          .filter((line) => ERROR_LINE.test(line))
        expect(errors, `${release} ${name} logged errors`).toEqual([])
      }
    } finally {
      for (const { process } of started.reverse()) await process.kill()
      await receiver.close()
      await previous.remove()
      await database.drop()
      await rm(floorDir, { recursive: true, force: true })
    }
  }, 420_000)
})
