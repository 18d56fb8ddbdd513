import { describe, expect } from 'vitest'
import { ADMIN_TOKEN } from '@letters/test/support/context'
import { it as base } from '@letters/test/support/fixtures'
import { openGateway } from '@letters/test/support/gateway'
import type { App } from '../src/app.js'
import { adminClient } from './helpers.js'

const MAX = 5

interface Answer {
  status: number
  retryAfter: string | null
  body: string
}

/** A real request over HTTP: behind an Ingress, every customer reaches the gateway from one address, here 127.0.0.1. */
async function get(baseUrl: string, path: string, headers: Record<string, string>): Promise<Answer> {
  const response = await fetch(`${baseUrl}${path}`, { headers })
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: await response.text() }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A client that sends `request` again and again, `everyMs` apart, `atLeast` times or more. */
interface Client {
  everyMs: number
  atLeast: number
  request: (turn: number) => Promise<Answer>
}

/**
 * Runs the clients side by side until `forMs` has passed and each has sent its `atLeast`
 * requests; each goes on until all are done, so that they overlap from the first request to the
 * last whatever the machine's speed (a slow one takes longer, with as many requests). Returns
 * each client's answers.
 */
async function together<const Clients extends readonly Client[]>(forMs: number, clients: Clients): Promise<{ [K in keyof Clients]: Answer[] }> {
  const until = Date.now() + forMs
  const answers: Answer[][] = clients.map(() => [])
  const done = () => Date.now() >= until && clients.every((client, index) => answers[index]!.length >= client.atLeast)
  await Promise.all(
    clients.map(async ({ everyMs, request }, index) => {
      for (let turn = 0; !done(); turn++) {
        answers[index]!.push(await request(turn))
        await sleep(everyMs)
      }
    }),
  )
  return answers as { [K in keyof Clients]: Answer[] }
}

const statuses = (answers: Answer[]) => answers.map((answer) => answer.status)

async function listen(app: App): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  return `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
}

/**
 * Two replicas on a database and queue prefix of their own (no other file's failures count
 * against 127.0.0.1 here): the file's gateway and a second one on its database and prefix, both
 * listening; `baseUrls` are their addresses.
 */
const it = base.extend('baseUrls', { scope: 'file' }, async ({ gateway: primary }, { onCleanup }) => {
  const secondary = await openGateway({
    env: { AUTH_FAILURES_MAX: String(MAX), DATABASE_URL: primary.config.databaseUrl, QUEUE_PREFIX: primary.config.queuePrefix },
  })
  onCleanup(() => secondary.close())
  return [await listen(primary), await listen(secondary.app)]
})
it.override({ gatewayOptions: { isolate: 'sharedaddress', env: { AUTH_FAILURES_MAX: String(MAX) } }, accountCredits: 0 })

describe('clients sharing one address', () => {
  it('never answers 429 to a valid key, the admin token or /metrics while a revoked key from the same address is throttled', async ({
    gateway: primary,
    account,
    baseUrls,
  }) => {
    const issued = await adminClient(primary).post(`/admin/accounts/${account.id}/api-keys`, {})
    expect(issued.statusCode, issued.body).toBe(201)
    const revokedKey = issued.json<{ id: string; apiKey: string }>()
    expect((await adminClient(primary).delete(`/admin/api-keys/${revokedKey.id}`)).statusCode).toBe(204)
    const forgottenJob = (turn: number) => get(baseUrls[turn % 2]!, '/campaigns', { 'x-api-key': revokedKey.apiKey })

    // The forgotten job with the revoked key uses up the address's budget, on both replicas.
    const first: Answer[] = []
    for (let turn = 0; turn < MAX + 2; turn++) first.push(await forgottenJob(turn))
    expect(statuses(first)).toEqual([...Array(MAX).fill(401), 429, 429])
    expect(JSON.parse(first[MAX]!.body)).toMatchObject({
      error: 'Too Many Requests',
      message: expect.stringMatching(/^Demasiados intentos de autenticación fallidos desde esta dirección; inténtalo de nuevo en \d+ s$/),
    })
    expect(Number(first[MAX]!.retryAfter)).toBeGreaterThanOrEqual(1)

    // It keeps going for longer than a replica caches a key (2.5 s, and 21 requests at least),
    // next to an honest poller whose key was never used before, the admin API and Prometheus,
    // all from the same address, each with requests of its own to both replicas throughout.
    const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` }
    const [job, poller, admin, metrics] = await together(2500, [
      { everyMs: 25, atLeast: 21, request: forgottenJob },
      { everyMs: 100, atLeast: 10, request: (turn) => get(baseUrls[turn % 2]!, '/campaigns', { 'x-api-key': account.apiKey }) },
      { everyMs: 250, atLeast: 5, request: (turn) => get(baseUrls[turn % 2]!, `/admin/accounts/${account.id}`, bearer) },
      { everyMs: 500, atLeast: 3, request: (turn) => get(baseUrls[turn % 2]!, '/metrics', bearer) },
    ])
    expect(job.length).toBeGreaterThan(20)
    expect(new Set(statuses(job))).toEqual(new Set([429]))
    expect(job.every((answer) => Number(answer.retryAfter) >= 1)).toBe(true)
    expect(statuses(poller)).toEqual(Array(poller.length).fill(200))
    expect(statuses(admin)).toEqual(Array(admin.length).fill(200))
    expect(statuses(metrics)).toEqual(Array(metrics.length).fill(200))
  })

  it('still answers 429 to a malformed key from the address its malformed keys locked, 200 to a valid key, and counts the admin token apart', async ({
    account,
    baseUrls,
  }) => {
    const [url] = baseUrls
    for (let turn = 0; turn < MAX; turn++) await get(url!, '/campaigns', { 'x-api-key': `not-a-key-${turn}` })
    const malformed = await get(url!, '/campaigns', { 'x-api-key': 'lk_live_garbage' })
    expect(malformed.status).toBe(429)
    expect(Number(malformed.retryAfter)).toBeGreaterThanOrEqual(1)
    expect((await get(url!, '/campaigns', { 'x-api-key': account.apiKey })).status).toBe(200)
    // API keys' failures do not count against the admin token: a wrong one is its first failure.
    expect((await get(url!, '/admin/accounts', { authorization: 'Bearer not-the-admin-token-0123456789' })).status).toBe(401)
    expect((await get(url!, '/admin/accounts', { authorization: `Bearer ${ADMIN_TOKEN}` })).status).toBe(200)
  })
})
