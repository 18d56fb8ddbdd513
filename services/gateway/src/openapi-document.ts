import { loadConfig } from '@letters/config'
import { buildGateway } from './server.js'

/**
 * The public contract as /openapi.json serves it, built in-process from the routes' schemas:
 * no server listens and nothing needs to answer (Postgres is reached lazily, never here; Redis
 * may be down: start-up then waits at most 2 s for it and goes on). The SDK's types are generated from it.
 */
export async function openapiDocument(): Promise<Record<string, unknown>> {
  const app = await buildGateway({ config: loadConfig({}), logger: false })
  try {
    await app.ready()
    return structuredClone(app.swagger()) as unknown as Record<string, unknown>
  } finally {
    await app.close()
  }
}
