import { describe, expect } from 'vitest'
import { adminAccount, expectError, publicClient, singleLetter } from './helpers.js'
import { it as base } from '@letters/test/support/fixtures'
import { expectLedgerMatchesLetters } from '@letters/test/support/ledger'

const it = base.extend({ gatewayOptions: { env: { RATE_LIMIT_MAX: '1000' } } })

describe('letters created in parallel', () => {
  it('lets exactly 40 of 100 parallel letters through on credits for 40, and the ledger agrees', async ({ gateway: app }) => {
    const account = await adminAccount(app, 120)
    const client = publicClient(app, account.apiKey)
    const responses = await Promise.all(Array.from({ length: 100 }, () => client.post('/single', singleLetter(account))))
    const created = responses.filter((response) => response.statusCode === 200)
    const refused = responses.filter((response) => response.statusCode !== 200)
    expect(created).toHaveLength(40)
    for (const response of refused) expectError(response, 402, 'Payment Required')
    const state = await expectLedgerMatchesLetters(app.db, account.id)
    expect(state.balance).toBe(0)
    expect(state.letters).toHaveLength(40)
    expect(state.charges).toHaveLength(40)
    expect(new Set(created.map((response) => response.json<{ cardId: string }>().cardId))).toEqual(new Set(state.letters.map((letter) => letter.id)))
  })

  it('lets exactly 50 of 200 parallel creations through on credits for 50, keyed or not, each with its own answer', async ({ gateway: app }) => {
    const account = await adminAccount(app, 150)
    const client = publicClient(app, account.apiKey)
    const responses = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        client.post('/single', singleLetter(account, { name: `Cliente ${i}` }), i % 2 ? { 'idempotency-key': `par-${i}` } : {}),
      ),
    )
    const created = responses.filter((response) => response.statusCode === 200)
    expect(created).toHaveLength(50)
    for (const response of responses.filter((response) => response.statusCode !== 200)) {
      expectError(response, 402, 'Payment Required', /la carta cuesta 3 créditos y el saldo de la cuenta es 0/)
    }
    const state = await expectLedgerMatchesLetters(app.db, account.id)
    expect(state.balance).toBe(0)
    // Each answer names its own letter: the recipient it was created for.
    const names = new Map(state.letters.map((letter) => [letter.id, letter.recipient.name]))
    for (const response of created) {
      const index = responses.indexOf(response)
      expect(names.get(response.json<{ cardId: string }>().cardId)).toBe(`Cliente ${index}`)
    }
    // Keyed creations that succeeded are replayed, not charged again.
    const keyedCreated = created.map((response) => responses.indexOf(response)).filter((i) => i % 2)
    const replays = await Promise.all(
      keyedCreated.map((i) => client.post('/single', singleLetter(account, { name: `Cliente ${i}` }), { 'idempotency-key': `par-${i}` })),
    )
    for (const replay of replays) expect(replay.headers['idempotent-replayed']).toBe('true')
    expect((await expectLedgerMatchesLetters(app.db, account.id)).letters).toHaveLength(50)
  })

  it('keeps two accounts apart while both spend in parallel', async ({ gateway: app }) => {
    const first = await adminAccount(app, 30)
    const second = await adminAccount(app, 15)
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, i) => {
        const owner = i % 2 ? first : second
        return publicClient(app, owner.apiKey).post('/single', singleLetter(owner))
      }),
    )
    expect(responses.filter((response) => response.statusCode === 200)).toHaveLength(15)
    expect((await expectLedgerMatchesLetters(app.db, first.id)).balance).toBe(0)
    expect((await expectLedgerMatchesLetters(app.db, second.id)).balance).toBe(0)
  })
})
