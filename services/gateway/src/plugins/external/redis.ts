import fp from 'fastify-plugin'
import { Redis } from 'ioredis'

declare module 'fastify' {
  interface FastifyInstance {
    /** Commands fail at once while Redis is down (and after 1 s when it stalls): a request never hangs on it. */
    redis: Redis
  }
}

/** QUIT when connected (pending replies arrive first); a client still trying to connect just stops. */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect())
  else redis.disconnect()
}

export default fp(
  async (app) => {
    const redis = new Redis(app.config.redisUrl, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: 1000,
      connectionName: 'gateway',
    })
    redis.on('error', (error) => app.log.warn({ err: error }, 'redis connection error'))
    app.decorate('redis', redis)
    app.addHook('onClose', () => closeRedis(redis))
  },
  { name: 'redis', dependencies: ['config'] },
)
