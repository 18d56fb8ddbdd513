import { existsSync, readdirSync } from 'node:fs'
import { describe, expect } from 'vitest'
import { it } from '@letters/test/support/fixtures'
import { DASHBOARD_DIST } from '../src/features/dashboard/routes/static.js'
import { expectError } from './helpers.js'

/** The build `npm test` makes before the tests (npm run build): the gateway serves it. */
function builtAssets(): string[] {
  if (!existsSync(`${DASHBOARD_DIST}index.html`)) throw new Error(`no dashboard build in ${DASHBOARD_DIST}: run npm run build -w @letters/dashboard`)
  return readdirSync(`${DASHBOARD_DIST}assets`)
}

describe('the dashboard at /dashboard/', () => {
  it('serves its page, uncached, for every path under it, in Spanish, with a policy that lets the preview show', async ({ gateway }) => {
    for (const url of ['/dashboard/', '/dashboard/cartas', '/dashboard/cartas/4f6b1a1e-1111-4111-8111-111111111111', '/dashboard/invitacion']) {
      const response = await gateway.inject({ method: 'GET', url })
      expect(response.statusCode, url).toBe(200)
      expect(response.headers['content-type']).toBe('text/html; charset=utf-8')
      expect(response.headers['cache-control']).toBe('no-cache')
      expect(response.body).toMatch(/<html lang="es">/)
      const policy = String(response.headers['content-security-policy'])
      expect(policy).toMatch(/img-src 'self' data: blob:/)
      expect(policy).toMatch(/script-src 'self'/)
      expect(policy).toMatch(/frame-ancestors 'none'/)
    }
    const bare = await gateway.inject({ method: 'GET', url: '/dashboard' })
    expect(bare.statusCode).toBe(301)
    expect(bare.headers.location).toBe('/dashboard/')
  })

  it('serves its hashed assets with a year of cache, and a missing one as 404 rather than the page', async ({ gateway }) => {
    const assets = builtAssets()
    const script = assets.find((name) => name.endsWith('.js'))!
    const response = await gateway.inject({ method: 'GET', url: `/dashboard/assets/${script}` })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toMatch(/javascript/)
    expect(response.headers['cache-control']).toBe('public, max-age=31536000, immutable')
    expectError(await gateway.inject({ method: 'GET', url: '/dashboard/assets/nope-123.js' }), 404, 'Not Found')
    expectError(await gateway.inject({ method: 'GET', url: '/dashboard/assets/..%2F..%2Fpackage.json' }), 404, 'Not Found')
    expectError(await gateway.inject({ method: 'POST', url: '/dashboard/cartas', payload: {} }), 404, 'Not Found')
  })

  it('loads in under 200 KB of gzipped JavaScript before the first page shows', async ({ gateway }) => {
    const page = (await gateway.inject({ method: 'GET', url: '/dashboard/' })).body
    const scripts = [...page.matchAll(/<(?:script[^>]+src|link[^>]+rel="modulepreload"[^>]+href)="([^"]+\.js)"/g)].map((match) => match[1]!)
    expect(scripts.length).toBeGreaterThan(0)
    let total = 0
    for (const src of scripts) {
      const response = await gateway.inject({ method: 'GET', url: src, headers: { 'accept-encoding': 'gzip' } })
      expect(response.statusCode, src).toBe(200)
      total += await gzipSize(response.rawPayload)
    }
    expect(total).toBeLessThan(200 * 1024)
  })
})

async function gzipSize(bytes: Buffer): Promise<number> {
  const { gzipSync } = await import('node:zlib')
  return gzipSync(bytes, { level: 9 }).length
}
