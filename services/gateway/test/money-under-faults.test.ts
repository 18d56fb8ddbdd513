// Money under faults: attacks that held (parallel mixed-mode bulk, one Idempotency-Key across modes/routes/formats, Postgres terminations under 1,000-recipient bulks).
import { describe, expect } from 'vitest'
import postgres from 'postgres'
import { expectLedgerMatchesLetters } from '@letters/test/support/ledger'
import { christmasCampaign, spanishRecipient as recipient } from '@letters/test/support/factories'
import { it as base } from '@letters/test/support/fixtures'

const it = base.extend({ gatewayOptions: { isolate: 'rt-money' }, campaignOverrides: christmasCampaign })

const r = (n: number) => ({ ...recipient, name: `Ana${n}`, variables: { cupon: 'A1' } })
const bulk = (campaignId: string, count: number) => ({ campaignId, recipients: Array.from({ length: count }, (_, n) => r(n)) })

describe('120 parallel bulk requests mixing live and test keys on one small balance', () => {
  it.override({ accountCredits: 30 })
  it('never overspends, charges no test letter, and every request is all or nothing', async ({
    gateway,
    account,
    campaign: campaignId,
    client,
    testClient,
  }) => {
    // 60 live requests of 2 letters (6 credits each) and 60 test requests of 3 letters (9 credits each).
    const answers = await Promise.all(
      Array.from({ length: 120 }, (_, n) =>
        n % 2 === 0 ? client.post('/cards/bulk', bulk(campaignId, 2)) : testClient.post('/cards/bulk', bulk(campaignId, 3)),
      ),
    )
    const statuses = answers.map((a) => a.statusCode)
    expect(
      statuses.every((s) => s === 200 || s === 402),
      JSON.stringify(answers.filter((a) => a.statusCode !== 200 && a.statusCode !== 402).map((a) => a.body)),
    ).toBe(true)
    const liveOk = answers.filter((a, n) => n % 2 === 0 && a.statusCode === 200).length
    const testOk = answers.filter((a, n) => n % 2 === 1 && a.statusCode === 200).length
    expect(liveOk).toBe(5)
    const state = await expectLedgerMatchesLetters(gateway.db, account.id)
    expect(state.balance).toBe(0)
    expect(state.letters.filter((l) => l.livemode)).toHaveLength(10)
    expect(state.letters.filter((l) => !l.livemode)).toHaveLength(testOk * 3)
    console.log(`### mixed parallel: live 200=${liveOk}, test 200=${testOk}`)
  }, 60_000)
})

describe('one Idempotency-Key across modes and routes', () => {
  it('keeps modes apart, and refuses the key on another route or in the other format with 422', async ({
    gateway,
    account,
    campaign: campaignId,
    client,
    testClient,
  }) => {
    const key = { 'idempotency-key': 'same-key-everywhere' }
    const liveBulk = await client.post('/cards/bulk', bulk(campaignId, 2), key)
    const testBulk = await testClient.post('/cards/bulk', bulk(campaignId, 2), key)
    expect([liveBulk.statusCode, testBulk.statusCode]).toEqual([200, 200])
    expect(liveBulk.json().cardIds).not.toEqual(testBulk.json().cardIds)
    const csv = `name,surname,address,zip,city,province,country,cupon\nAna0,García,Calle Mayor 1,28013,Madrid,Madrid,ES,A1\nAna1,García,Calle Mayor 1,28013,Madrid,Madrid,ES,A1\n`
    const asCsv = await client.post(`/cards/bulk?campaignId=${campaignId}`, csv, { ...key, 'content-type': 'text/csv' })
    const asCard = await client.post('/card', { campaignId, ...r(0) }, key)
    expect([asCsv.statusCode, asCard.statusCode]).toEqual([422, 422])
    const replay = await testClient.post('/cards/bulk', bulk(campaignId, 2), key)
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect(replay.json().cardIds).toEqual(testBulk.json().cardIds)
    const state = await expectLedgerMatchesLetters(gateway.db, account.id)
    expect(state.balance).toBe(94)
    expect(state.letters).toHaveLength(4)
  })
})

describe('Postgres backends of the gateway terminated while 1,000-recipient bulk requests are stored', () => {
  it.override({ accountCredits: 3 * 1000 * 8 })
  it('creates each keyed request once, charged once, whatever the clients saw', async ({ gateway, account, campaign: campaignId, client }) => {
    const admin = postgres(gateway.config.databaseUrl, { max: 1, onnotice: () => {} })
    // The bulk requests not yet answered: a termination counts as one under load only if some
    // request was in flight from before it was asked until after it was done.
    const inFlight = new Set<number>()
    let requests = 0
    let killing = true
    let kills = 0
    let killsInFlight = 0
    // Ten seconds of terminations, then none: a bulk that takes longer than the pause between
    // two terminations (a loaded machine) could otherwise never finish, and the claim is about
    // what was stored, not about progress under a storm without end.
    const killUntil = Date.now() + 10_000
    const killer = (async () => {
      while (killing && Date.now() < killUntil) {
        const before = new Set(inFlight)
        // pg_terminate_backend is false for a backend that was already gone: only true is a kill.
        const [row] = await admin<Array<{ n: number }>>`SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`
        const killed = row?.n ?? 0
        kills += killed
        if ([...before].some((request) => inFlight.has(request))) killsInFlight += killed
        await new Promise((resolve) => setTimeout(resolve, 150 + Math.random() * 400))
      }
    })()
    const seen: Record<number, number> = {}
    const body = (k: number) => ({ campaignId, recipients: Array.from({ length: 1000 }, (_, n) => ({ ...r(n), surname: `K${k}` })) })
    const tries = await Promise.all(
      Array.from({ length: 8 }, async (_, k) => {
        for (let attempt = 0; attempt < 60; attempt++) {
          const request = requests++
          inFlight.add(request)
          const answer = await client.post('/cards/bulk', body(k), { 'idempotency-key': `bulk-${k}` })
          inFlight.delete(request)
          seen[answer.statusCode] = (seen[answer.statusCode] ?? 0) + 1
          if (answer.statusCode === 200) return answer.json<{ cardIds: string[] }>().cardIds
          expect(answer.json()).toMatchObject({ error: expect.any(String), message: expect.any(String) })
          await new Promise((resolve) => setTimeout(resolve, 100))
        }
        return undefined
      }),
    )
    killing = false
    await killer
    await admin.end()
    console.log(`### bulk under terminations: statuses ${JSON.stringify(seen)}, backends killed ${kills}, of them while a bulk was in flight ${killsInFlight}`)
    // The attack took place: the gateway lost at least one connection while it was storing a bulk.
    expect(killsInFlight).toBeGreaterThan(0)
    expect(tries.every((ids) => ids !== undefined)).toBe(true)
    const state = await expectLedgerMatchesLetters(gateway.db, account.id)
    expect(state.letters).toHaveLength(8000)
    expect(new Set(tries.flat()).size).toBe(8000)
    expect(state.balance).toBe(0)
  }, 180_000)
})
