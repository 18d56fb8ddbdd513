export * as schema from './schema.js'
export * from './schema.js'
export { createDb, closeDb, type Db, type Tx, type Executor, type DbOptions } from './client.js'
export { prepareDatabase, ensureDatabase, dropDatabase } from './migrate.js'
