import fp from 'fastify-plugin'
import { closeQueues, openQueues, producerConnection, type Queues } from '@letters/pipeline'

declare module 'fastify' {
  interface FastifyInstance {
    /** BullMQ queues on a producer connection that fails fast while Redis is down. */
    queues: Queues
  }
}

export default fp(
  async (app) => {
    const connection = producerConnection(app.config.redisUrl, 'gateway-queues', app.log)
    const queues = openQueues(connection, app.config.queuePrefix, app.log)
    app.decorate('queues', queues)
    app.addHook('onClose', async () => {
      await closeQueues(queues).catch(() => {})
      connection.disconnect()
    })
  },
  { name: 'queues', dependencies: ['config'] },
)
