import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect } from 'vitest'
import { eq, inArray } from 'drizzle-orm'
import { offlineVerifier } from '@letters/address'
import { normalizeLetter } from '@letters/address-worker/normalize-letter'
import { accounts, ledgerEntries, letters } from '@letters/db'
import type { App } from '@letters/gateway/server'
import { LocalArtifactStore } from '@letters/artifacts'
import { SpoolPrinter } from '@letters/production-worker/printer'
import { produceLetter } from '@letters/production-worker/produce-letter'
import { it as base } from '../support/fixtures.js'
import type { Account } from '../support/gateway.js'
import { silentLog } from '../support/pipeline.js'

const it = base.extend({ gatewayOptions: { checkContract: false }, accountCredits: 300 })

let floorDir: string
beforeAll(async () => {
  floorDir = await mkdtemp(join(tmpdir(), 'letters-races-'))
})
afterAll(async () => {
  await rm(floorDir, { recursive: true, force: true })
})

async function send(app: App, account: Account, address: string) {
  const response = await app.inject({
    method: 'POST',
    url: '/single',
    headers: { 'x-api-key': account.apiKey },
    payload: {
      cardDesignId: account.cardDesignId,
      envelopeDesignId: account.envelopeDesignId,
      senderId: account.senderId,
      message: 'Hola',
      name: 'Ana',
      surname: 'Ruiz',
      address,
      zip: '28013',
      city: 'Madrid',
      country: 'ES',
    },
  })
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ cardId: string }>().cardId
}

const cancel = (app: App, account: Account, id: string) => app.inject({ method: 'DELETE', url: `/cards/${id}`, headers: { 'x-api-key': account.apiKey } })
const balance = async (app: App, account: Account) =>
  (await app.db.select({ balance: accounts.balance }).from(accounts).where(eq(accounts.id, account.id)))[0]!.balance
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Runs both at nearly the same moment, letter i with one side held back by `step` milliseconds
 * more than letter i-1, so that across the batch each side wins some of the races.
 */
async function race<A, B>(i: number, count: number, step: number, first: () => Promise<A>, second: () => Promise<B>): Promise<[A, B]> {
  const offset = (i - count / 2) * step
  return Promise.all([sleep(Math.max(0, -offset)).then(first), sleep(Math.max(0, offset)).then(second)])
}

/**
 * Batches of 15 races until each side has won some: how long each side takes varies with the
 * machine's load, so a batch whose spread was too narrow is run again with a wider one.
 */
async function raceBatches<T>(
  makeLetters: () => Promise<string[]>,
  run: (id: string, i: number, count: number, step: number) => Promise<T>,
  won: (outcome: T) => boolean,
) {
  const all: T[] = []
  const ids: string[] = []
  for (const step of [2, 6, 15, 40]) {
    const batch = await makeLetters()
    ids.push(...batch)
    all.push(...(await Promise.all(batch.map((id, i) => run(id, i, batch.length, step)))))
    if (all.some(won) && !all.every(won)) break
  }
  return { ids, outcomes: all }
}

const refundsOf = async (app: App, ids: string[]) =>
  (await app.db.select().from(ledgerEntries).where(inArray(ledgerEntries.letterId, ids))).filter((entry) => entry.kind === 'refund')

describe('a cancellation racing a worker', () => {
  it('refunds a letter once when the client cancels it as the address worker rejects it', async ({ gateway: app, account }) => {
    const start = await balance(app, account)
    const { ids, outcomes } = await raceBatches(
      () => Promise.all(Array.from({ length: 15 }, () => send(app, account, '...'))),
      async (id, i, count, step) => {
        const [response, normalized] = await race(
          i,
          count,
          step,
          () => cancel(app, account, id),
          () => normalizeLetter(app.db, offlineVerifier, id, 'ES'),
        )
        return { status: response.statusCode, normalized }
      },
      (outcome) => outcome.status === 200,
    )
    // Whoever moved the letter first refunded it; the other found it moved.
    for (const outcome of outcomes) {
      expect([
        [200, 'already_done'],
        [409, 'address_rejected'],
      ]).toContainEqual([outcome.status, outcome.normalized])
    }
    // The spread of start times makes each side win some races.
    expect(outcomes.map((outcome) => outcome.status)).toEqual(expect.arrayContaining([200, 409]))
    const refunds = await refundsOf(app, ids)
    expect(refunds.map((entry) => entry.letterId).sort()).toEqual([...ids].sort())
    expect(await balance(app, account)).toBe(start)
  })

  it('either cancels and refunds a letter or prints it, never both, when the floor claims it at the same moment', async ({ gateway: app, account }) => {
    const floor = {
      db: app.db,
      log: silentLog,
      printTimeoutMs: 10_000,
      floorCountry: 'ES',
      store: new LocalArtifactStore(join(floorDir, 'artifacts')),
      printer: new SpoolPrinter(join(floorDir, 'spool')),
    }
    const start = await balance(app, account)
    const { ids, outcomes } = await raceBatches(
      async () => {
        const batch = await Promise.all(Array.from({ length: 15 }, () => send(app, account, 'Calle Mayor 1')))
        await Promise.all(batch.map((id) => normalizeLetter(app.db, offlineVerifier, id, 'ES')))
        return batch
      },
      async (id, i, count, step) => {
        const [response, produced] = await race(
          i,
          count,
          step,
          () => cancel(app, account, id),
          () => produceLetter(floor, id),
        )
        return { id, status: response.statusCode, produced }
      },
      (outcome) => outcome.status === 200,
    )
    const spool = await readdir(join(floorDir, 'spool')).catch(() => [] as string[])
    for (const outcome of outcomes) {
      const [letter] = await app.db.select({ status: letters.status }).from(letters).where(eq(letters.id, outcome.id))
      if (outcome.status === 200) {
        expect([outcome.produced, letter?.status]).toEqual(['already_done', 'cancelled'])
        expect(spool).not.toContain(`${outcome.id}.card.pdf`)
      } else {
        expect([outcome.status, outcome.produced, letter?.status]).toEqual([409, 'printed', 'printed'])
        expect(spool).toContain(`${outcome.id}.card.pdf`)
      }
    }
    const cancelled = outcomes.filter((outcome) => outcome.status === 200).map((outcome) => outcome.id)
    expect(cancelled.length).toBeGreaterThan(0)
    expect(cancelled.length).toBeLessThan(ids.length)
    expect((await refundsOf(app, ids)).map((entry) => entry.letterId).sort()).toEqual(cancelled.sort())
    expect(await balance(app, account)).toBe(start - 3 * (ids.length - cancelled.length))
  })
})
