// Hostile artwork uploads against an in-process gateway: each is refused (or drawn) within bounds
// of time and memory, without holding the gateway's event loop or the threads other images need.
// What is refused outright, with nothing stored, is in hostile-artwork-refused.test.ts.
//
//   npx vitest run services/gateway/test/artwork-costs-bounded.test.ts
import { afterEach, describe, expect } from 'vitest'
import { eq } from 'drizzle-orm'
import sharp from 'sharp'
import { artworks } from '@letters/db'
import { it as base } from '@letters/test/support/fixtures'
import type { App } from '@letters/gateway/server'
import type { AdminClient } from '@letters/test/support/gateway'
import { morphologyCardSvg, nestedGroupsSvg, objectStreamBombPdf, probeEventLoop } from '@letters/test/support/hostile-artwork'
import { until } from '@letters/test/support/wait'

const it = base.extend({ gatewayOptions: { isolate: 'rt-artwork' } })

/**
 * After a stall the gateway sheds every request (503, @fastify/under-pressure) until its delay
 * is measured again: the next test waits for /readyz rather than failing on its account's set-up.
 */
let lastGateway: App | undefined
afterEach(async () => {
  const gateway = lastGateway
  if (!gateway) return
  await until('the gateway ready again', async () => (await gateway.inject({ method: 'GET', url: '/readyz' })).statusCode === 200, { everyMs: 200 })
})

/**
 * How long a refusal of a hostile file may hold the gateway's event loop: every other client waits
 * that long. It is checked as the CPU time of the loop's thread during the upload, which bounds any
 * stall of the gateway's own making and which a busy machine does not lengthen.
 */
const STALL_BUDGET_MS = 1000

const storedVersions = async (gateway: { db: import('@letters/db').Db }, ownerId: string) =>
  (await gateway.db.select({ version: artworks.version }).from(artworks).where(eq(artworks.ownerId, ownerId))).length

const upload = (admin: AdminClient, accountId: string, path: string, body: Buffer | string, type: string) =>
  admin.put(`/admin/accounts/${accountId}/${path}/artwork`, body, type)

it.beforeEach(({ gateway }) => {
  lastGateway = gateway
})

describe('a PDF whose object stream inflates 1000-fold is read within bounds of time and memory', () => {
  // Measured (inspectArtwork alone): 0.4 MB → 7.6 s stall, +454 MB; 1.5 MB → 33 s stall, +2.6 GB
  // RSS (4.2 GB peak), and the file ACCEPTED. 20 MB would be 20 GB inflated: the gateway dies.
  it('reads a 0.3 MB card front that inflates to 300 MB in a bounded process of its own, without stalling the gateway', async ({ gateway, admin, account }) => {
    const bomb = objectStreamBombPdf(300)
    // Every other request to this gateway (any client's) waits for as long as the loop is held.
    const probe = await probeEventLoop(() => upload(admin, account.id, `card-designs/${account.cardDesignId}`, bomb, 'application/pdf'))
    console.log(
      `### PDF object-stream bomb: ${bomb.length} bytes → ${probe.result.statusCode} in ${probe.ms} ms, event loop stalled ${probe.stallMs} ms, its thread on a CPU ${probe.loopCpuMs} ms, versions stored ${await storedVersions(gateway, account.cardDesignId)}`,
    )
    expect(probe.loopCpuMs).toBeLessThan(STALL_BUDGET_MS)
    // Poppler reads it (under its time and memory limits, in its own process): printed if it can draw it, refused if not.
    expect([200, 400], probe.result.body).toContain(probe.result.statusCode)
    expect(await storedVersions(gateway, account.cardDesignId)).toBe(probe.result.statusCode === 200 ? 1 : 0)
  }, 120_000)
})

describe('deeply nested SVG groups are refused before they are parsed', () => {
  // Measured: 20,000 levels (140 KB) 2.5 s; 40,000 (280 KB) 12.4 s; 100,000 (700 KB) 250 s, all
  // on the event loop. A signature then fails with RangeError (Maximum call stack size exceeded): a 500.
  it('refuses a 30,000-level signature at once, with a 400, without stalling the gateway', async ({ gateway, admin, account }) => {
    const svg = nestedGroupsSvg(30_000)
    const probe = await probeEventLoop(() => upload(admin, account.id, `signatures/${account.signatureId}`, svg, 'image/svg+xml'))
    console.log(
      `### nested <g> ×30,000 signature: ${svg.length} bytes → ${probe.result.statusCode} in ${probe.ms} ms, event loop stalled ${probe.stallMs} ms, its thread on a CPU ${probe.loopCpuMs} ms: ${probe.result.body.slice(0, 120)}`,
    )
    expect(probe.loopCpuMs).toBeLessThan(STALL_BUDGET_MS)
    expect(probe.result.statusCode, probe.result.body).toBe(400)
    expect(await storedVersions(gateway, account.signatureId)).toBe(0)
  }, 120_000)

  it('refuses a 30,000-level envelope logo with a 400, without stalling the gateway', async ({ gateway, admin, account }) => {
    const probe = await probeEventLoop(() =>
      upload(admin, account.id, `envelope-designs/${account.envelopeDesignId}`, nestedGroupsSvg(30_000), 'image/svg+xml'),
    )
    console.log(
      `### nested <g> ×30,000 logo → ${probe.result.statusCode} in ${probe.ms} ms, event loop stalled ${probe.stallMs} ms, its thread on a CPU ${probe.loopCpuMs} ms`,
    )
    expect(probe.loopCpuMs).toBeLessThan(STALL_BUDGET_MS)
    expect(probe.result.statusCode, probe.result.body).toBe(400)
    expect(await storedVersions(gateway, account.envelopeDesignId)).toBe(0)
  }, 120_000)
})

describe('an SVG with filters is refused before it is drawn, leaving the threads the gateway’s other images need', () => {
  // Measured before filters were refused: one 208-byte card front (feMorphology radius 200) took
  // librsvg 10.6 s; a 1,141-byte one (the same filter on 20 rectangles) 194 s, accepted. SVGs and
  // PNGs (sharp) are never killed, as PDFs are after RASTERIZE_TIMEOUT_MS: four at once held every
  // thread sharp runs on, and a client's GET /card-designs/{id}/preview waited behind them.
  it('refuses four 208-byte feMorphology card fronts with a 400 before drawing any, and draws a client preview meanwhile', async ({
    gateway,
    admin,
    account,
    client,
  }) => {
    const designs = await Promise.all(
      [0, 1, 2, 3].map(async (n) => {
        const made = await admin.post(`/admin/accounts/${account.id}/card-designs`, { name: `Morfología ${n}` })
        expect(made.statusCode, made.body).toBe(201)
        return made.json<{ id: string }>().id
      }),
    )
    const svg = morphologyCardSvg(100)
    const cpu0 = process.cpuUsage()
    // The account's untouched design, asked for beside the uploads: a blank card, drawn by sharp.
    const [preview, ...uploads] = await Promise.all([
      client.get(`/card-designs/${account.cardDesignId}/preview`),
      ...designs.map((id) => upload(admin, account.id, `card-designs/${id}`, svg, 'image/svg+xml')),
    ])
    const cpu = process.cpuUsage(cpu0)
    // Every thread of this process (the gateway's, sharp's): drawing one of these fronts took seconds of it.
    const cpuMs = Math.round((cpu.user + cpu.system) / 1000)
    console.log(
      `### 4 × ${svg.length}-byte SVG card fronts: ${uploads.map((answer) => answer.statusCode).join(', ')}; a blank preview meanwhile ${preview.statusCode}; ${cpuMs} ms of CPU in all`,
    )
    for (const answer of uploads) {
      expect(answer.statusCode, answer.body).toBe(400)
      expect(answer.json<{ message: string }>().message).toMatch(/filtros/)
    }
    for (const id of designs) expect(await storedVersions(gateway, id)).toBe(0)
    expect(preview.statusCode, preview.body).toBe(200)
    expect(cpuMs).toBeLessThan(2000)
  }, 180_000)
})

describe('a signature must print something', () => {
  it('refuses a PNG signature whose every pixel is transparent (the card would go out unsigned, without even the name)', async ({
    gateway,
    admin,
    account,
  }) => {
    const blank = await sharp({ create: { width: 600, height: 200, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
      .png()
      .toBuffer()
    const response = await upload(admin, account.id, `signatures/${account.signatureId}`, blank, 'image/png')
    console.log(`### fully transparent 600×200 PNG signature → ${response.statusCode}, versions stored ${await storedVersions(gateway, account.signatureId)}`)
    expect(response.statusCode, response.body).toBe(400)
    expect(await storedVersions(gateway, account.signatureId)).toBe(0)
  })
})

describe('a client’s mistake in artwork is refused with a 400', () => {
  it('refuses a signature whose viewBox rounds to zero with a 400, not a 500', async ({ gateway, admin, account }) => {
    const tiny = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 0.0001 0.0001"><path d="M0 0 L0.0001 0.0001"/></svg>'
    const response = await upload(admin, account.id, `signatures/${account.signatureId}`, tiny, 'image/svg+xml')
    console.log(`### signature viewBox 0.0001 → ${response.statusCode}: ${response.body.slice(0, 120)}`)
    expect(response.statusCode, response.body).toBe(400)
    expect(await storedVersions(gateway, account.signatureId)).toBe(0)
  })
})
