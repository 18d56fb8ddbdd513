import { expect } from 'vitest'
import type { App } from '@letters/gateway/server'
import { ADMIN_TOKEN } from './admin-token.js'

/** A gateway to scrape: in process (its `inject`), or running at a base URL. */
export type MetricsSource = Pick<App, 'inject'> | string

export interface ScrapeOptions {
  /** The bearer token /metrics opens to: the admin token unless METRICS_TOKEN is set. */
  token?: string
}

/** One GET /metrics, its 200 checked (a refused token fails here, with the answer, not as a missing sample). */
export async function scrapeMetrics(from: MetricsSource, { token = ADMIN_TOKEN }: ScrapeOptions = {}) {
  const headers = { authorization: `Bearer ${token}` }
  const { status, contentType, text } =
    typeof from === 'string'
      ? await fetch(new URL('/metrics', from), { headers }).then(async (response) => ({
          status: response.status,
          contentType: response.headers.get('content-type') ?? '',
          text: await response.text(),
        }))
      : await from.inject({ method: 'GET', url: '/metrics', headers }).then((response) => ({
          status: response.statusCode,
          contentType: String(response.headers['content-type'] ?? ''),
          text: response.body,
        }))
  expect(status, `GET /metrics: ${text}`).toBe(200)
  return { contentType, text }
}

/**
 * The samples in a scrape's text, each value by its name and labels as written there, e.g.
 * `letters_stuck{status="received",mode="live"}`; with `name`, only the samples of that name
 * (with any labels).
 */
export function samplesIn(text: string, name?: string): Record<string, number> {
  const samples: Record<string, number> = {}
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const space = line.lastIndexOf(' ')
    const sample = line.slice(0, space)
    if (name === undefined || sample === name || sample.startsWith(`${name}{`)) samples[sample] = Number(line.slice(space + 1))
  }
  return samples
}

/** What GET /metrics shows now (its 200 checked): the samples of `name` (all of them without one), each value by its name and labels. */
export async function metricSamples(from: MetricsSource, name?: string, options?: ScrapeOptions) {
  return samplesIn((await scrapeMetrics(from, options)).text, name)
}
