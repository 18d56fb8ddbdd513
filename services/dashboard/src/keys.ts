/**
 * A new Idempotency-Key (a UUID v4). crypto.randomUUID exists only in secure contexts (https,
 * localhost); getRandomValues exists everywhere, so a dashboard opened over plain http still works.
 */
export function newIdempotencyKey(): string {
  if (typeof crypto.randomUUID === 'function' && window.isSecureContext) return crypto.randomUUID()
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  bytes[6] = (bytes[6]! & 0x0f) | 0x40
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  const hex = [...bytes].map((byte) => byte.toString(16).padStart(2, '0')).join('')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** Whether an answer means nothing was created, so the same key may go with another body: a 4xx other than 409 ("still in flight"). */
export const nothingCreated = (status: number | undefined) => status !== undefined && status >= 400 && status < 500 && status !== 409
