import fp from 'fastify-plugin'
import { Redis } from 'ioredis'

declare module 'fastify' {
  interface FastifyInstance {
    /** Commands fail at once while Redis is down, so a request answers 503 instead of hanging. */
    redis: Redis
  }
}

export default fp(
  async (app) => {
    const redis = new Redis(app.config.redisUrl, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectionName: 'gateway',
    })
    redis.on('error', (error) => app.log.warn({ err: error }, 'redis connection error'))
    app.decorate('redis', redis)
    app.addHook('onClose', async () => {
      await redis.quit().catch(() => redis.disconnect())
    })
  },
  { name: 'redis', dependencies: ['config'] },
)
