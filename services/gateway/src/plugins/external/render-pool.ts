import fp from 'fastify-plugin'
import { RenderPool } from '@letters/render'

declare module 'fastify' {
  interface FastifyInstance {
    /** Worker threads that draw PDFs, so that a render never holds up the event loop. */
    renderPool: RenderPool
  }
}

export default fp(
  async (app) => {
    const { renderThreads, renderQueueMax, renderWarmUp, renderPriority } = app.config.proofs
    const pool = new RenderPool({ threads: renderThreads, queueMax: renderQueueMax, warmUp: renderWarmUp, belowNormal: renderPriority === 'below-normal' })
    app.decorate('renderPool', pool)
    app.addHook('onClose', () => pool.close())
  },
  { name: 'render-pool', dependencies: ['config'] },
)
