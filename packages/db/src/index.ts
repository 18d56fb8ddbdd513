export * as schema from './schema.js'
export * from './schema.js'
export { createDb, closeDb, connectionStatementTimeoutMs, type Db, type Tx, type Executor, type DbOptions } from './client.js'
export {
  prepareDatabase,
  ensureDatabase,
  dropDatabase,
  requireSchema,
  schemaStatus,
  checkSchema,
  knownMigrations,
  requiredMigration,
  SchemaMismatch,
  type SchemaStatus,
  type MigrateOptions,
} from './migrate.js'
export { isConnectionError, isDriverError, sqlState, SQLSTATE } from './errors.js'
export { enqueue, outboxTargetSql, type OutboxJob } from './outbox.js'
export { keyset, keysetPage, type Keyset, type KeysetOrder, type KeysetPosition } from './keyset.js'
export { literalList, literalListSql, literalSql } from './literals.js'
export {
  printBatchStatuses,
  printBatchTransitions,
  printBatchStatus,
  printBatchMove,
  notHandedBatchStatuses,
  type PrintBatchStatus,
} from './print-batch-statuses.js'
