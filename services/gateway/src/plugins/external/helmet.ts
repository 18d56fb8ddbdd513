import fp from 'fastify-plugin'
import { SECURITY_HEADERS } from '../../common/security-headers.js'

/** Sets the security headers (see common/security-headers.ts) on every response. */
export default fp(
  async (app) => {
    app.addHook('onRequest', (_request, reply, done) => {
      reply.headers(SECURITY_HEADERS)
      done()
    })
  },
  { name: 'helmet' },
)
