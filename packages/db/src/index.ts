export * as schema from './schema.js'
export * from './schema.js'
export { createDb, closeDb, type Db, type Tx, type Executor, type DbOptions } from './client.js'
export { prepareDatabase, ensureDatabase, dropDatabase } from './migrate.js'
export { moveLetter, moveLetters, type LetterAtMove, type LetterMove, type LetterMoved, type LettersMove } from './letter-transitions.js'
export { guardProcess, isConnectionError, isDriverError, type GuardLogger, type ShutdownReason } from './process-guard.js'
export { enqueue, outboxTargetSql, type OutboxJob } from './outbox.js'
export { isoInstant, letterEventsQuery, letterJsonSql, recordLetterEvents, webhookBodySql } from './webhook-events.js'
export { readLetterDrawings, type ArtworkPrint } from './letter-drawing.js'
export {
  batchesWithArtifacts,
  dueForErasureSql,
  erasePersonalData,
  lettersWithArtifacts,
  personalDataHeld,
  recordBatchArtifactsRemoved,
  recordLetterArtifactsRemoved,
  reopenArtifactsIfErased,
  sweepBatchesWithArtifacts,
  type EraseLock,
} from './personal-data.js'
