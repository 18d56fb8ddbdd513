import fp from 'fastify-plugin'
import type { Config } from '@letters/config'

declare module 'fastify' {
  interface FastifyInstance {
    config: Config
  }
}

export default fp<{ config: Config }>(
  async (app, options) => {
    app.decorate('config', options.config)
  },
  { name: 'config' },
)
