import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { QR_CODE_PATTERN, QR_LINK_PREFIX, QR_SCAN_EVENT_WINDOW_MS, QR_SCANS_COUNTED_PER_MINUTE, errorResponses } from '@letters/contracts'
import { recordQrScan } from '@letters/letters'
import { metrics } from '@letters/observability'
import { NOT_FOUND_PAGE } from '../not-found-page.js'
import { qrRequestKind } from '../request-kind.js'

/** Opened by anyone with the card in hand: no key, no session. */
const security: [] = []

/** The pairs of a query string as sent, `?` left out: each kept byte for byte. */
const pairsOf = (query: string) => query.replace(/^\?/, '').split('&').filter(Boolean)
/** A pair's name, decoded as a form decodes it: `utm_source=x` and `utm%5Fsource=y` name the same parameter. */
const nameOf = (pair: string) => [...new URLSearchParams(pair).keys()][0] ?? ''

/**
 * The letter's URL with the request's own query parameters added, each replacing the URL's of the
 * same name (a campaign's QR link may carry `utm_source`, overriding the URL's). The URL's
 * other parameters keep their bytes; the URL is then written as the URL standard writes it, so
 * that a character a header cannot carry (an accent) is percent-encoded.
 */
export function destination(trackingUrl: string, requestUrl: string): string {
  const target = new URL(trackingUrl)
  const start = requestUrl.indexOf('?')
  const asked = start === -1 ? [] : pairsOf(requestUrl.slice(start + 1))
  if (asked.length > 0) {
    const replaced = new Set(asked.map(nameOf))
    target.search = [...pairsOf(target.search).filter((pair) => !replaced.has(nameOf(pair))), ...asked].join('&')
  }
  return target.href
}

/**
 * The short link a letter's QR code encodes, `/q/{code}`: outside the scope that requires a
 * caller, inside the API's document and its rate limit (per address, as before a key).
 */
const qrRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    `${QR_LINK_PREFIX}:code`,
    {
      // Logged without its code, query or the address it came from: the shell's request log line (requestLogLine).
      schema: {
        summary: 'The short link of a letter’s QR code: counts the scan and redirects to the letter’s trackingUrl',
        description:
          'Opened by whoever scans the card, without a key. Answers 302 to the letter’s `trackingUrl`, with this request’s query parameters added (each replacing the URL’s parameter of the same name), ' +
          'and records the request with its time and what it was taken for, never who sent it: a scan (counted in the letter’s `tracking.scans`), a prefetch (a HEAD, or a `Purpose`, `Sec-Purpose`, `X-Moz` or `X-Purpose` header), ' +
          `a link preview or crawler (by its user agent), or a scan past ${QR_SCANS_COUNTED_PER_MINUTE} counted ones of the code in a minute; all are redirected, only scans are counted. ` +
          `A counted scan writes a \`letter.qr_scanned\` event (webhook and GET /events), one per ${QR_SCAN_EVENT_WINDOW_MS / 60_000} minutes from its first scan, whose count in GET /events goes up with the scans after it. ` +
          'A code no letter has answers 404 with a page in Spanish.',
        tags: ['Letters'],
        security,
        params: Type.Object({ code: Type.String({ description: 'The code printed in the letter’s QR code.' }) }),
        response: {
          302: Type.Null({
            description: 'Sent to the letter’s trackingUrl.',
            headers: { Location: Type.String({ format: 'uri', description: 'The letter’s trackingUrl, with the request’s query parameters.' }) },
          }),
          404: Type.String({ contentMediaType: 'text/html', description: 'No letter has this code: a page in Spanish saying so.' }),
          // A path no QR code holds (a malformed percent escape, a NUL) is refused before the route, as anywhere.
          ...errorResponses(400, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      // Each request is counted: no cache may answer for us, and the client's page is not told where its visitor came from.
      reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer')
      const { code } = request.params
      const scan = QR_CODE_PATTERN.test(code) ? await recordQrScan(app.db, code, qrRequestKind(request.method, request.headers)) : undefined
      if (!scan) return reply.code(404).type('text/html; charset=utf-8').send(NOT_FOUND_PAGE)
      metrics.qrScans.inc({ kind: scan.kind })
      return reply.redirect(destination(scan.url, request.url), 302)
    },
  )
}

export default qrRoutes
