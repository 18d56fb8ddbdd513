// A letter: what it is and how it changes. The statuses themselves are listed in
// @letters/contracts, since the API's schemas and the database column are built from them
// and neither may depend on this package; what they mean lives here.
export { erasableStatuses, isErasableStatus, letterStatuses, letterStatusNames, type ErasableStatus, type LetterStatus } from '@letters/contracts'
export {
  canMove,
  cancellableStatuses,
  IllegalLetterMove,
  inFlightStatuses,
  postedStatuses,
  isResumable,
  isSentBackByOps,
  jobOfStatus,
  letterTransitions,
  movesFrom,
  productionStart,
  resumableStatuses,
  statusesInto,
  type CancellableStatus,
  type ResumableStatus,
  type StatusInto,
} from './transitions.js'
export { moveLetter, moveLetters, type LetterAtMove, type LetterMove, type LetterMoved, type LettersMove } from './move.js'
export { resumeLetter, RESUMED_DETAIL, statusListSql, withoutProgressSql } from './resume.js'
export { retryLetter, RETRIED_DETAIL, type RetryOutcome } from './ops-retry.js'
export { firstLetterEventsCtes, isoInstant, letterJsonSql, recordLetterEvents, webhookBodySql } from './events.js'
export { recordQrScan, type QrRequest, type QrScan } from './qr-scans.js'
export { letterFileKey, letterFolder } from './artifacts.js'
export { fontFace, readLetterDrawings, unstoredLetterDrawing, type ArtworkPrint, type UnstoredLetter } from './drawing.js'
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
export { batchPrintedDetail, JOURNAL_PRINTED_DETAIL, onPaperPerJournal } from './on-paper.js'
export { markRestoresReconciled, pendingRestores, recordRestoreByOps, watchForRestore } from './restores.js'
