import fp from 'fastify-plugin'
import { closeDb, createDb, type Db } from '@letters/db'

declare module 'fastify' {
  interface FastifyInstance {
    db: Db
  }
}

/** The Postgres pool. A pool handed in (tests, one pool for several apps) is left for its owner to close. */
export default fp<{ db?: Db }>(
  async (app, options) => {
    const db = options.db ?? createDb(app.config.databaseUrl, { max: app.config.databasePoolMax, statementTimeoutMs: app.config.databaseStatementTimeoutMs })
    app.decorate('db', db)
    if (!options.db) app.addHook('onClose', () => closeDb(db))
  },
  { name: 'postgres', dependencies: ['config'] },
)
