/** The admin token of every gateway a test starts (no vitest here: the bench uses it too). */
export const ADMIN_TOKEN = 'test-admin-token-0123456789'
