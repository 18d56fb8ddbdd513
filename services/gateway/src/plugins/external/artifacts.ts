import fp from 'fastify-plugin'
import { LocalArtifactStore, type ArtifactStore } from '@letters/artifacts'

declare module 'fastify' {
  interface FastifyInstance {
    /** The floor's artifact store: the gateway keeps each letter's final proof there. */
    artifacts: ArtifactStore
  }
}

export default fp(
  async (app) => {
    app.decorate('artifacts', new LocalArtifactStore(app.config.artifactsDir))
  },
  { name: 'artifacts', dependencies: ['config'] },
)
