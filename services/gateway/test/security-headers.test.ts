import { describe, expect } from 'vitest'
import { ADMIN_TOKEN } from '@letters/test/support/context'
import { it } from '@letters/test/support/fixtures'

const asOps = { authorization: `Basic ${Buffer.from(`ops:${ADMIN_TOKEN}`).toString('base64')}` }

/** `default-src 'self'; img-src 'self' data:` → { 'default-src': ["'self'"], 'img-src': ["'self'", 'data:'] } */
function directives(policy: string | undefined): Record<string, string[]> {
  expect(policy, 'no Content-Security-Policy header').toEqual(expect.any(String))
  return Object.fromEntries(
    policy!
      .split(';')
      .map((part) => part.trim().split(/\s+/))
      .filter(([name]) => name)
      .map(([name, ...sources]) => [name!, sources]),
  )
}

function expectFramingDenied(headers: Record<string, unknown>) {
  expect(headers['x-frame-options']).toBe('DENY')
  expect(directives(headers['content-security-policy'] as string)['frame-ancestors']).toEqual(["'none'"])
  expect(headers['x-content-type-options']).toBe('nosniff')
}

describe('security headers', () => {
  it.for<[string, { method: 'GET'; url: string }]>([
    ['the health check', { method: 'GET' as const, url: '/healthz' }],
    ['a public route refused without a key', { method: 'GET' as const, url: '/campaigns' }],
    ['an admin route refused without a token', { method: 'GET' as const, url: '/admin/accounts/00000000-0000-4000-8000-000000000000' }],
    ['an unknown route', { method: 'GET' as const, url: '/nada' }],
    ['a URL the router cannot read (broken percent-encoding)', { method: 'GET' as const, url: '/cards/%E0%A4%A' }],
  ])('are on %s', async ([, request], { gateway }) => {
    const response = await gateway.inject(request)
    expectFramingDenied(response.headers)
    expect(response.headers['strict-transport-security']).toMatch(/max-age=\d+/)
  })

  it('deny framing of the queue dashboard, its refusals included', async ({ gateway: app }) => {
    expectFramingDenied((await app.inject({ method: 'GET', url: '/ops/queues' })).headers)
    expectFramingDenied((await app.inject({ method: 'GET', url: '/ops/queues', headers: asOps })).headers)
  })

  it('let the dashboard load everything its page asks for under the policy it is served with', async ({ gateway: app }) => {
    const page = await app.inject({ method: 'GET', url: '/ops/queues', headers: asOps })
    expect(page.statusCode).toBe(200)
    const policy = directives(page.headers['content-security-policy'])
    // Plain HTTP on a private network: asset requests must not be upgraded to https.
    expect(policy).not.toHaveProperty('upgrade-insecure-requests')
    const scriptSources = policy['script-src'] ?? policy['default-src']!
    const styleSources = policy['style-src'] ?? policy['default-src']!
    const html = page.body

    // Every inline <script> is a data block the browser never runs; executable ones are files.
    const scripts = [...html.matchAll(/<script\b([^>]*)>/g)].map((match) => match[1]!)
    expect(scripts.length).toBeGreaterThan(0)
    for (const attributes of scripts.filter((a) => !/\bsrc=/.test(a))) expect(attributes).toMatch(/type="application\/json"/)
    const base = new URL(html.match(/<base href="([^"]+)"/)![1]!, 'http://gateway.test')
    const scriptFiles = scripts.flatMap((a) => a.match(/\bsrc="([^"]+)"/)?.[1] ?? []).map((src) => new URL(src, base))
    expect(scriptFiles.length).toBeGreaterThan(0)
    expect(scriptSources).toContain("'self'")
    expect(scriptSources).not.toContain("'unsafe-eval'")

    const stylesheets = [...html.matchAll(/<link\b[^>]*rel="stylesheet"[^>]*>/g)].map((match) => new URL(match[0].match(/href="([^"]+)"/)![1]!, base))
    expect(stylesheets.length).toBeGreaterThan(0)
    for (const sheet of stylesheets)
      expect(sheet.origin === base.origin ? "'self'" : `${sheet.protocol}`, sheet.href).toSatisfy((source: string) => styleSources.includes(source))
    if (/<style\b|\sstyle="/.test(html)) expect(styleSources).toContain("'unsafe-inline'")

    // The same-origin files are served (with the same headers), and none needs eval.
    for (const file of [...scriptFiles, ...stylesheets].filter((url) => url.origin === base.origin)) {
      const asset = await app.inject({ method: 'GET', url: file.pathname, headers: asOps })
      expect(asset.statusCode, file.pathname).toBe(200)
      expect(asset.headers['x-frame-options']).toBe('DENY')
      if (file.pathname.endsWith('.js')) expect(asset.body, file.pathname).not.toMatch(/\beval\(|new Function\(/)
    }
  })
})
