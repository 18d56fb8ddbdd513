import type { FastifyPluginAsync } from 'fastify'
import swaggerUi from '@fastify/swagger-ui'

/**
 * The contract, open to anyone: `GET /openapi.json` and the reference page at `/docs`, whose
 * scripts and styles come from node_modules (@fastify/swagger-ui), so it works offline.
 */
const docs: FastifyPluginAsync = async (app) => {
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    // No request to validator.swagger.io: the page must not reach the internet.
    uiConfig: { validatorUrl: null, docExpansion: 'list', deepLinking: true, tryItOutEnabled: false },
  })
}

export default docs
