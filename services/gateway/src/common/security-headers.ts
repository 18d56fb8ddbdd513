import type { IncomingMessage, ServerResponse } from 'node:http'
import helmet, { type HelmetOptions } from 'helmet'

/**
 * Security headers on every response, the JSON API's included. Helmet's default policy already
 * fits the queue dashboard (/ops/queues): its scripts, styles, worker and locale files come from
 * this origin (its link to Google Fonts is taken out of its page), its only inline script is a
 * JSON data block (never executed) and its inline styles are allowed by `style-src
 * 'unsafe-inline'`. Two changes:
 * - nothing of ours is meant to be framed: framing is denied everywhere (clickjacking of the
 *   dashboard's retry buttons);
 * - no `upgrade-insecure-requests`: the dashboard is opened over plain HTTP on a private
 *   network, where upgrading its assets to https would break it.
 */
const POLICY: HelmetOptions = {
  frameguard: { action: 'deny' },
  contentSecurityPolicy: { directives: { frameAncestors: ["'none'"], upgradeInsecureRequests: null } },
}

/**
 * The headers helmet sets under POLICY, worked out once. They are the same for every response
 * (no nonces, no per-request directives), while @fastify/helmet builds helmet's middleware
 * again, CSP parsing included, for each request: a tenth of a list read's CPU time.
 */
export function securityHeaders(options: HelmetOptions = POLICY): Record<string, string> {
  const headers: Record<string, string> = {}
  const recorder = {
    setHeader: (name: string, value: string) => (headers[name.toLowerCase()] = value),
    removeHeader: () => {},
  }
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, (error?: unknown) => {
    if (error) throw error instanceof Error ? error : new Error(String(error))
  })
  return headers
}

/** The record every response carries; the error handler also sets it on what Fastify refuses before any hook runs (a malformed URL). */
export const SECURITY_HEADERS = securityHeaders()
