import { afterAll, describe, expect, it } from 'vitest'
import { testConfig } from '@letters/test/support/context'
import { CommitUnknownError } from '@letters/intake'
import { buildGateway, type App } from '../src/server.js'
import { OutcomeUnknown } from '../src/common/errors.js'
import { adminAccount, expectError, publicClient, singleLetter, startGateway } from './helpers.js'
import { moneyState } from '@letters/test/support/ledger'

const opened: App[] = []
afterAll(() => Promise.all(opened.map((app) => app.close())))

describe('error bodies', () => {
  it('answers an unexpected failure with 500 and no stack, SQL or internals', async () => {
    const app = await buildGateway({ config: testConfig(), logger: false })
    opened.push(app)
    app.get('/explode', async () => {
      throw new Error('syntax error at or near "SELECT secret FROM accounts" at /srv/app/src/x.ts:12')
    })
    await app.ready()
    const response = await app.inject({ method: 'GET', url: '/explode' })
    const body = expectError(response, 500, 'Internal Server Error', 'Se ha producido un error inesperado')
    expect(Object.keys(body).sort()).toEqual(['error', 'message', 'requestId'])
    expect(response.body).not.toMatch(/SELECT|secret|\.ts|at /)
  })

  it('answers a creation whose commit could not be confirmed 500 without Retry-After, saying how to retry safely', async () => {
    const app = await buildGateway({ config: testConfig(), logger: false })
    opened.push(app)
    // What the intake throws when the connection died while committing and the outcome stayed unknown.
    const lost = Object.assign(new Error('write CONNECTION_CLOSED 127.0.0.1:5432'), { code: 'CONNECTION_CLOSED' })
    app.get('/unknown-outcome', async () => {
      throw new OutcomeUnknown('No se ha podido confirmar si la carta quedó guardada', new CommitUnknownError(lost))
    })
    await app.ready()
    const response = await app.inject({ method: 'GET', url: '/unknown-outcome' })
    expectError(response, 500, 'Internal Server Error', 'No se ha podido confirmar si la carta quedó guardada')
    expect(response.headers['retry-after']).toBeUndefined()
  })

  it('keeps taking letters while Redis cannot be reached: charged once, the job waiting in the outbox, /readyz 503', async () => {
    const healthy = await startGateway()
    opened.push(healthy)
    const account = await adminAccount(healthy, 10)
    const cutOff = await startGateway({ REDIS_URL: 'redis://127.0.0.1:1' })
    opened.push(cutOff)
    const response = await publicClient(cutOff, account.apiKey).post('/single', singleLetter(account))
    expect(response.statusCode, response.body).toBe(200)
    const state = await moneyState(healthy.db, account.id)
    expect(state.balance).toBe(7)
    expect(state.jobs.map((job) => [job.payload.letterId, job.sentAt])).toEqual([[response.json<{ cardId: string }>().cardId, null]])
    const readiness = await cutOff.inject({ method: 'GET', url: '/readyz' })
    expectError(readiness, 503, 'Service Unavailable', /no está disponible en este momento/)
    expect(readiness.headers['retry-after']).toBe('5')
    expect((await healthy.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({ status: 'ready' })
  })
})
