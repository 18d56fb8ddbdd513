import fp from 'fastify-plugin'
import { requestBudget } from '@letters/config'
import { LetterIntake } from '@letters/intake'

declare module 'fastify' {
  interface FastifyInstance {
    /** Charges and stores the letters of every creation request, together (group commit). */
    intake: LetterIntake
  }
}

export default fp(
  async (app) => {
    const intake = new LetterIntake(app.db, {
      concurrentBatches: app.config.intakeConcurrentBatches,
      // One bound on a held account: the request's own deadline, which answers it 503 then.
      maxWaitForLockMs: requestBudget(app.config.http.requestTimeoutMs).decideWithinMs,
      log: app.log.child({ component: 'intake' }),
    })
    app.decorate('intake', intake)
    // Requests still waiting for their outcome are answered before the pool closes.
    app.addHook('onClose', () => intake.drained())
  },
  { name: 'intake', dependencies: ['config', 'postgres'] },
)
