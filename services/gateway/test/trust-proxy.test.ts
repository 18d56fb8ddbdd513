import { afterAll, describe, expect, it } from 'vitest'
import { openGateway, type Gateway } from '@letters/test/support/gateway'

const MAX = 3

const opened: Gateway[] = []
afterAll(() => Promise.all(opened.splice(0).map((gateway) => gateway.close())))

/**
 * A gateway listening on 127.0.0.1, on a database and queue prefix of its own (no other file's
 * failures count against its addresses), with `env` on top of a low failure budget.
 */
async function gateway(label: string, env: Record<string, string> = {}): Promise<string> {
  const started = await openGateway({ isolate: label, env: { AUTH_FAILURES_MAX: String(MAX), ...env } })
  opened.push(started)
  await started.app.listen({ host: '127.0.0.1', port: 0 })
  return `http://127.0.0.1:${(started.app.server.address() as { port: number }).port}`
}

/** A request that arrives with X-Forwarded-For `forwardedFor` (what a proxy in front adds, or what a client makes up). */
async function get(baseUrl: string, path: string, forwardedFor: string | undefined, headers: Record<string, string> = {}) {
  const response = await fetch(`${baseUrl}${path}`, { headers: { ...headers, ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) } })
  await response.arrayBuffer()
  return { status: response.status, retryAfter: response.headers.get('retry-after') }
}

const wrongToken = (turn: number) => ({ authorization: `Bearer wrong-admin-token-${turn}-0123456789` })

/** Spends the failure budget of whoever `forwardedFor` says it is, and checks the next wrong token is refused with 429. */
async function lockOut(baseUrl: string, forwardedFor: string | undefined) {
  for (let turn = 0; turn < MAX; turn++) expect((await get(baseUrl, '/admin/accounts', forwardedFor, wrongToken(turn))).status).toBe(401)
  const refused = await get(baseUrl, '/admin/accounts', forwardedFor, wrongToken(MAX))
  expect(refused.status).toBe(429)
  expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1)
}

describe('TRUST_PROXY listing the proxy in front (127.0.0.1)', () => {
  it('limits failed logins per client named by X-Forwarded-For: one locked out, the other not', async () => {
    const url = await gateway('trustedproxy', { TRUST_PROXY: '127.0.0.1' })
    await lockOut(url, '203.0.113.10')
    expect((await get(url, '/admin/accounts', '203.0.113.11', wrongToken(0))).status).toBe(401)
    // A client that makes up an X-Forwarded-For of its own gets the proxy's real entry appended
    // after it: the rightmost address the trusted proxy did not add is the one counted.
    expect((await get(url, '/admin/accounts', '203.0.113.99, 203.0.113.10', wrongToken(0))).status).toBe(429)
  })

  it('counts requests without a key per client named by X-Forwarded-For', async () => {
    const url = await gateway('trustedlimit', { TRUST_PROXY: '127.0.0.1', RATE_LIMIT_MAX: String(MAX), RATE_LIMIT_WINDOW_MS: '60000' })
    for (let turn = 0; turn < MAX; turn++) expect((await get(url, '/campaigns', '203.0.113.20')).status).toBe(401)
    expect((await get(url, '/campaigns', '203.0.113.20')).status).toBe(429)
    expect((await get(url, '/campaigns', '203.0.113.21')).status).toBe(401)
  })
})

describe('X-Forwarded-For from a peer TRUST_PROXY does not list', () => {
  it.each([
    ['TRUST_PROXY empty (the default)', {}],
    ['TRUST_PROXY listing another proxy', { TRUST_PROXY: '10.244.0.0/16' }],
  ])('%s: a locked-out client cannot escape its limit by sending another X-Forwarded-For', async (_, env) => {
    const url = await gateway('untrustedproxy', env)
    await lockOut(url, '203.0.113.30')
    for (const spoofed of ['203.0.113.31', '198.51.100.7, 203.0.113.32', undefined])
      expect((await get(url, '/admin/accounts', spoofed, wrongToken(0))).status, String(spoofed)).toBe(429)
  })
})
