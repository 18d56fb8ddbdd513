// What an accepted signature does to letters already paid for, on a plotter floor: they stay
// printable. design-changes-keep-letters-printable.test.ts holds the same for a design's format and
// artwork; designs-isolated-and-consistent.test.ts the accounts' isolation and racing uploads.
//
//   npx vitest run services/production-worker/test/paid-letters-stay-printable.test.ts
import { describe, expect } from 'vitest'
import { eq } from 'drizzle-orm'
import { letters } from '@letters/db'
import { ADMIN_TOKEN } from '@letters/test/support/context'
import { it as base } from '@letters/test/support/fixtures'
import type { Pipeline } from '@letters/test/support/pipeline'
import { farControlPointsSignatureSvg, manyStrokesSignatureSvg } from '@letters/test/support/hostile-artwork'

const it = base.extend({ pipelineOptions: { label: 'rtplotsig', env: { PRINTER: 'plotter' } } })

/** The admin API of the pipeline's gateway; a string body is an artwork file (SVG). */
function adminCall(pipeline: Pipeline, method: 'GET' | 'PUT', url: string, payload?: string) {
  const headers: Record<string, string> = { authorization: `Bearer ${ADMIN_TOKEN}` }
  if (payload !== undefined) headers['content-type'] = 'image/svg+xml'
  return pipeline.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) })
}

/** Waits until the letter is printed or failed (or the time is up); its last status. */
async function settle(pipeline: Pipeline, id: string, timeout: number): Promise<string> {
  const deadline = Date.now() + timeout
  let status = (await pipeline.card(id)).status
  while (!['printed', 'failed', 'mailed'].includes(status) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250))
    status = (await pipeline.card(id)).status
  }
  return status
}

describe('a signature of paths the pen plotter cannot draw is refused at upload, and letters already paid for stay printable (PRINTER=plotter)', () => {
  // Measured before the fix, each upload accepted and each letter charged:
  // - 70,000 short strokes (688 KB, a signature pad's raw export): fitInto spread every point into
  //   Math.min(...), RangeError past ~120,000 points; every plotter letter with it failed.
  // - 20,000 strokes (197 KB): orderStrokes, nearest-neighbour over every stroke on the worker's
  //   event loop, held it 19–27 s, close to the job's 30 s lock.
  // - control points at ±1e15 (116 bytes): flattenPath made 10^8 points; the production worker,
  //   heap capped at 768 MB, aborted twice in 57 s and the letter stayed `printing`.
  // Now refused at upload: nothing stored, and letters keep being signed (with the name) and printed.
  it('refuses each at upload, stores nothing, and a letter of that signature still prints', async ({ pipeline }) => {
    const url = `/admin/accounts/${pipeline.account.id}/signatures/${pipeline.account.signatureId}/artwork`
    for (const [label, svg] of [
      ['70,000 strokes', manyStrokesSignatureSvg(70_000)],
      ['20,000 strokes', manyStrokesSignatureSvg(20_000)],
      ['far control points', farControlPointsSignatureSvg('1e15')],
    ] as const) {
      const response = await adminCall(pipeline, 'PUT', url, svg)
      console.log(`### ${label} (${svg.length} bytes): ${response.statusCode} ${response.body.slice(0, 140)}`)
      expect(response.statusCode, label).toBe(400)
    }
    expect((await adminCall(pipeline, 'GET', `/admin/accounts/${pipeline.account.id}`)).statusCode).toBe(200)
    const id = await pipeline.send({ signatureId: pipeline.account.signatureId })
    expect(await settle(pipeline, id, 30_000)).toBe('printed')
    // No drawing was kept: the letter's print spec names no artwork for its signature.
    expect((await pipeline.app.db.select({ spec: letters.printSpec }).from(letters).where(eq(letters.id, id)))[0]?.spec?.signature?.artwork).toBeNull()
  }, 120_000)
})
