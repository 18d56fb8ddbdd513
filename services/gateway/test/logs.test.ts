import { Writable } from 'node:stream'
import { describe, expect } from 'vitest'
import { sql } from 'drizzle-orm'
import { closeDb, createDb } from '@letters/db'
import { loggerOptions } from '@letters/observability'
import { isolatedDatabase, testConfig } from '@letters/test/support/context'
import { it as base } from '@letters/test/support/fixtures'
import { buildGateway } from '../src/server.js'
import { adminAccount, adminCampaign, expectError, publicClient, singleLetter, spanishRecipient } from './helpers.js'
import { moneyState } from '@letters/test/support/ledger'

// Data that must never reach a log line, in every field a letter carries.
const secret = {
  name: 'Anacleta',
  surname: 'Villarrubia-Quintanilla',
  company: 'Ferretería Zarandaja',
  address: 'Calle del Cierzo Escondido 77',
  city: 'Villanueva de la Cañada',
  message: 'Felicidades por el aniversario, secreto-del-mensaje',
}
const variableValue = 'valor-secreto-de-variable'

/**
 * A gateway that logs at info level into `lines`, on a database of its own (`url`): the tests add
 * constraints that other files must not meet. The gateway's pool `db` has a short statement
 * timeout, so a statement that waits for a lock fails with its parameters; the test's own reads
 * and changes go through `reader`, without one, so that a slow machine does not fail them.
 */
const it = base.extend('logged', { scope: 'file' }, async ({ databaseLabel }, { onCleanup }) => {
  const database = await isolatedDatabase(databaseLabel)
  const db = createDb(database.url, { statementTimeoutMs: 300 })
  const reader = createDb(database.url)
  const lines: string[] = []
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean))
      done()
    },
  })
  const app = await buildGateway({ config: testConfig({ DATABASE_URL: database.url }), db, logger: { ...loggerOptions('gateway', 'info'), stream: sink } })
  onCleanup(async () => {
    await app.close()
    await closeDb(db)
    await closeDb(reader)
    await database.drop()
  })
  await app.ready()
  return { app, reader, url: database.url, lines }
})

it.override({ databaseLabel: 'logs' })

function expectNoRecipientData(found: string[]) {
  const text = found.join('\n')
  for (const value of [...Object.values(secret), variableValue]) expect(text, `a log line carries "${value}"`).not.toContain(value)
}

describe('logs of failed database statements', () => {
  it('keep the recipient out when a statement times out, and still say what failed', async ({ logged: { app, reader, url, lines } }) => {
    const account = await adminAccount(app, 30)
    lines.length = 0
    // A slow concurrent charge holds the account's row past the statement timeout.
    // Held from before the request is sent until it is answered, however slow the machine.
    const holder = createDb(url)
    let locked!: () => void
    const lockTaken = new Promise<void>((resolve) => (locked = resolve))
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    const held = holder.transaction(async (tx) => {
      await tx.execute(sql`SELECT 1 FROM accounts WHERE id = ${account.id}::uuid FOR NO KEY UPDATE`)
      locked()
      await released
    })
    let response: Awaited<ReturnType<ReturnType<typeof publicClient>['post']>>
    try {
      // A holder that failed before taking the lock ends the wait with its error.
      await Promise.race([lockTaken, held])
      response = await publicClient(app, account.apiKey).post('/single', singleLetter(account, secret))
    } finally {
      release()
      await held.catch(() => undefined)
      await closeDb(holder)
    }
    // A statement that timed out did nothing: the client may retry (503 with Retry-After).
    expectError(response, 503, 'Service Unavailable')
    expect(response.headers['retry-after']).toBe('5')
    expect((await moneyState(reader, account.id)).balance).toBe(30)

    expectNoRecipientData(lines)
    const failed = lines.map((line) => JSON.parse(line) as { msg: string; err?: Record<string, unknown> }).filter((line) => line.msg === 'request failed')
    expect(failed).toHaveLength(1)
    // The error names the failed SQL (placeholders only) and says why.
    expect(failed[0]!.err).toMatchObject({
      type: 'PostgresError',
      query: expect.stringMatching(/FROM accounts[\s\S]*FOR UPDATE/),
      code: '57014',
      message: 'canceling statement due to statement timeout',
    })
  })

  it('keep the recipient and the campaign variables out when a constraint refuses the row', async ({ logged: { app, reader, lines } }) => {
    const account = await adminAccount(app, 30)
    const campaignId = await adminCampaign(app, account)
    // A constraint only this test's letters break, to make Postgres refuse a row it would print in its detail.
    await reader.execute(sql.raw(`ALTER TABLE letters ADD CONSTRAINT logs_test_refused CHECK (message NOT LIKE '%${variableValue}%')`))
    lines.length = 0
    const { message: _message, ...recipient } = secret
    const response = await publicClient(app, account.apiKey).post('/card', {
      campaignId,
      ...spanishRecipient,
      ...recipient,
      variables: { cupon: 'X1', nombre: variableValue },
    })
    await reader.execute(sql`ALTER TABLE letters DROP CONSTRAINT logs_test_refused`)
    expectError(response, 500, 'Internal Server Error')
    expect((await moneyState(reader, account.id)).balance).toBe(30)

    expectNoRecipientData(lines)
    const failed = lines.map((line) => JSON.parse(line) as { msg: string; err?: Record<string, unknown> }).filter((line) => line.msg === 'request failed')
    expect(failed).toHaveLength(1)
    expect(failed[0]!.err).toMatchObject({
      type: 'PostgresError',
      query: expect.stringMatching(/INSERT INTO letters/),
      code: '23514',
      constraint_name: 'logs_test_refused',
      table_name: 'letters',
    })
  })
})

describe('logs of webhook endpoints', () => {
  it('never carry a webhook secret, when the endpoint is created or when its row is refused', async ({ logged: { app, reader, lines } }) => {
    const account = await adminAccount(app, 1)
    lines.length = 0
    const created = await publicClient(app, account.apiKey).post('/webhooks', { url: 'https://93.184.216.34/ok' })
    expect(created.statusCode, created.body).toBe(201)
    expect(lines.join('\n')).not.toContain(created.json<{ secret: string }>().secret)

    await reader.execute(sql.raw(`ALTER TABLE webhook_endpoints ADD CONSTRAINT logs_test_refused CHECK (url NOT LIKE '%refuse-me%')`))
    lines.length = 0
    const refused = await publicClient(app, account.apiKey).post('/webhooks', { url: 'https://93.184.216.34/refuse-me' })
    await reader.execute(sql`ALTER TABLE webhook_endpoints DROP CONSTRAINT logs_test_refused`)
    expectError(refused, 500, 'Internal Server Error')
    const failed = lines.map((line) => JSON.parse(line) as { msg: string; err?: Record<string, unknown> }).filter((line) => line.msg === 'request failed')
    expect(JSON.stringify(failed[0]!.err)).toMatch(/insert into \\"webhook_endpoints\\"[\s\S]*params: \[redacted\]/)
    expect(lines.join('\n')).not.toContain('whsec_')
  })
})

describe('request logs', () => {
  /** The request lines among `lines`: [level, url] of each "incoming request" and "request completed". */
  const requestLines = (lines: string[]) =>
    lines
      .map((line) => JSON.parse(line) as { level: number; msg: string; req?: { url: string }; reqId: string })
      .filter((line) => line.msg === 'incoming request' || line.msg === 'request completed')
      .map((line) => ({ level: line.level, msg: line.msg, reqId: line.reqId, url: line.req?.url }))

  it('leave the probes (/healthz, /readyz, /metrics) out at info, and log every other request', async ({ logged: { app, lines } }) => {
    lines.length = 0
    for (const url of ['/healthz', '/readyz']) expect((await app.inject({ method: 'GET', url })).statusCode).toBe(200)
    const scraped = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${app.config.adminToken}` } })
    expect(scraped.statusCode).toBe(200)
    expect(requestLines(lines)).toEqual([])
    // A client's request is logged, the refused ones too.
    expect((await app.inject({ method: 'GET', url: '/company-data' })).statusCode).toBe(401)
    expect(requestLines(lines)).toEqual([
      expect.objectContaining({ level: 30, msg: 'incoming request', url: '/company-data' }),
      expect.objectContaining({ level: 30, msg: 'request completed' }),
    ])
  })

  it('log the probes at debug, and a probe answered with an error at info', async ({ logged: { app } }) => {
    const lines: string[] = []
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString().split('\n').filter(Boolean))
        done()
      },
    })
    const debug = await buildGateway({ config: app.config, db: app.db, logger: { ...loggerOptions('gateway', 'debug'), stream: sink } })
    try {
      await debug.ready()
      expect((await debug.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200)
      expect(requestLines(lines)).toEqual([
        expect.objectContaining({ level: 20, msg: 'incoming request', url: '/healthz' }),
        expect.objectContaining({ level: 20, msg: 'request completed' }),
      ])
      lines.length = 0
      // Without the token, /metrics is refused: an answer someone should see.
      expect((await debug.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(401)
      expect(requestLines(lines).map(({ level, msg }) => ({ level, msg }))).toEqual([
        { level: 20, msg: 'incoming request' },
        { level: 30, msg: 'request completed' },
      ])
    } finally {
      await debug.close()
    }
  })
})
