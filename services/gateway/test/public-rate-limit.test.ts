import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { App } from '../src/app.js'
import { adminAccount, expectError, publicClient, singleLetter, startGateway } from './helpers.js'
import { moneyState } from '@letters/test/support/ledger'

describe('rate limit', () => {
  let replicaA: App
  let replicaB: App
  beforeAll(async () => {
    replicaA = await startGateway({ RATE_LIMIT_MAX: '5', RATE_LIMIT_WINDOW_MS: '60000' })
    replicaB = await startGateway({ RATE_LIMIT_MAX: '5', RATE_LIMIT_WINDOW_MS: '60000' })
  })
  afterAll(async () => {
    await replicaA.close()
    await replicaB.close()
  })

  it('counts an account across replicas and answers 429 with Retry-After past the limit', async () => {
    const account = await adminAccount(replicaA, 100)
    const onA = publicClient(replicaA, account.apiKey)
    const onB = publicClient(replicaB, account.apiKey)
    const remaining = []
    for (let i = 0; i < 5; i++) {
      const response = await (i % 2 ? onB : onA).get('/campaigns')
      expect(response.statusCode).toBe(200)
      expect(response.headers['x-ratelimit-limit']).toBe('5')
      expect(Number(response.headers['x-ratelimit-reset'])).toBeGreaterThan(0)
      remaining.push(Number(response.headers['x-ratelimit-remaining']))
    }
    expect(remaining).toEqual([4, 3, 2, 1, 0])

    const limited = await onB.post('/single', singleLetter(account))
    expectError(limited, 429, 'Too Many Requests', /Se ha superado el límite de 5 peticiones cada 60 segundos/)
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
    expect(limited.headers['x-ratelimit-limit']).toBe('5')
    expect(limited.headers['x-ratelimit-remaining']).toBe('0')
    expect(Number(limited.headers['x-ratelimit-reset'])).toBeGreaterThan(0)
    expect((await moneyState(replicaA.db, account.id)).balance).toBe(100)
  })

  it('stays exact when requests of two replicas arrive at once: each gets its own count, and only the limit passes', async () => {
    const account = await adminAccount(replicaA, 100)
    const quiet = await adminAccount(replicaA, 100)
    // Sent together, the requests of one replica reach the limiter in one turn of the event
    // loop and are counted in one Redis call; the two replicas still count together.
    const responses = await Promise.all([
      ...Array.from({ length: 6 }, (_, i) => publicClient(i % 2 ? replicaB : replicaA, account.apiKey).get('/senders')),
      publicClient(replicaA, quiet.apiKey).get('/senders'),
    ])
    const mine = responses.slice(0, 6)
    expect(mine.map((response) => response.statusCode).sort()).toEqual([200, 200, 200, 200, 200, 429])
    const remaining = mine.filter((response) => response.statusCode === 200).map((response) => Number(response.headers['x-ratelimit-remaining']))
    expect(remaining.sort()).toEqual([0, 1, 2, 3, 4])
    expect(responses[6]!.statusCode).toBe(200)
    expect(responses[6]!.headers['x-ratelimit-remaining']).toBe('4')
  })

  it('limits each account on its own', async () => {
    const busy = await adminAccount(replicaA, 10)
    const quiet = await adminAccount(replicaA, 10)
    for (let i = 0; i < 6; i++) await publicClient(replicaA, busy.apiKey).get('/senders')
    expect((await publicClient(replicaA, busy.apiKey).get('/senders')).statusCode).toBe(429)
    expect((await publicClient(replicaA, quiet.apiKey).get('/senders')).statusCode).toBe(200)
  })

  it('throttles key guessing by client IP', async () => {
    const guess = (n: number) =>
      replicaA.inject({ method: 'GET', url: '/campaigns', remoteAddress: '203.0.113.9', headers: { 'x-api-key': `lk_live_guess_${n}` } })
    for (let i = 0; i < 5; i++) expectError(await guess(i), 401, 'Unauthorized')
    expectError(await guess(99), 429, 'Too Many Requests')
    const otherClient = await replicaA.inject({ method: 'GET', url: '/campaigns', remoteAddress: '198.51.100.7' })
    expectError(otherClient, 401, 'Unauthorized')
  })
})
