import cookie from '@fastify/cookie'
import fp from 'fastify-plugin'
import { Mailer } from './mailer.js'
import { DashboardSessions } from './sessions.js'

declare module 'fastify' {
  interface FastifyInstance {
    mailer: Mailer
  }
}

/** What the dashboard's people need of the gateway: cookies, the sessions' store and the mailer. */
export default fp(
  async (app) => {
    await app.register(cookie)
    app.decorate('dashboardSessions', new DashboardSessions(app.db, app.config.dashboard.sessionIdleMs))
    const mailer = new Mailer(app.config.smtp)
    app.decorate('mailer', mailer)
    app.addHook('onClose', async () => mailer.close())
    app.decorateRequest('sessionCsrfToken', null)
  },
  { name: 'dashboard-sessions', dependencies: ['postgres', 'config'] },
)
