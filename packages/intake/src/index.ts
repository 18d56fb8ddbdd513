export type { IdempotentAnswer, LetterDraft, LetterOrder, OrderOutcome, OwnedField, UnstoredOutcome } from './orders.js'
export { CommitUnknownError, KeyTakenMeanwhileError, storeOrders } from './store-orders.js'
export { LetterIntake, type IntakeOptions } from './letter-intake.js'
export { IDEMPOTENCY_TTL_HOURS, answeredBefore, idempotencyLockName, purgeExpiredIdempotencyKeys } from './idempotency.js'
