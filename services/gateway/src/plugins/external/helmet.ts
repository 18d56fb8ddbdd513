import helmet from '@fastify/helmet'
import fp from 'fastify-plugin'

/**
 * Security headers on every response, the JSON API's included. Helmet's default policy already
 * fits the queue dashboard (/ops/queues): its scripts, styles, worker and locale files come from
 * this origin, its only inline script is a JSON data block (never executed), its inline styles
 * are allowed by `style-src 'unsafe-inline'` and its Google fonts by `https:`. Two changes:
 * - nothing of ours is meant to be framed: framing is denied everywhere (clickjacking of the
 *   dashboard's retry buttons);
 * - no `upgrade-insecure-requests`: the dashboard is opened over plain HTTP on a private
 *   network, where upgrading its assets to https would break it.
 */
export default fp(
  async (app) => {
    await app.register(helmet, {
      global: true,
      frameguard: { action: 'deny' },
      contentSecurityPolicy: { directives: { frameAncestors: ["'none'"], upgradeInsecureRequests: null } },
    })
  },
  { name: 'helmet' },
)
