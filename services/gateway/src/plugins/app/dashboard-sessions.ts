import cookie from '@fastify/cookie'
import fp from 'fastify-plugin'
import { DashboardSessions } from '../../common/sessions.js'

/** What a dashboard session needs of the gateway: cookies, and the sessions' store. */
export default fp(
  async (app) => {
    await app.register(cookie)
    app.decorate('dashboardSessions', new DashboardSessions(app.db, app.config.dashboard.sessionIdleMs))
    app.decorateRequest('sessionCsrfToken', null)
  },
  { name: 'dashboard-sessions', dependencies: ['postgres', 'config'] },
)
