export { createClient, LettersApiError, LettersConnectionError, type ClientOptions, type LettersClient } from './client.js'
export { newIdempotencyKey } from './idempotency-key.js'
export { verifyWebhook, WebhookVerificationError } from './webhooks.js'
export type { components, operations, paths } from './generated/openapi.js'
