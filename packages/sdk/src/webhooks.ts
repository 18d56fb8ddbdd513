import { Webhook, WebhookVerificationError } from 'standardwebhooks'

export { WebhookVerificationError }

/**
 * Checks that a webhook delivery comes from the API (Standard Webhooks: `webhook-id`,
 * `webhook-timestamp`, `webhook-signature` = `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`
 * with the endpoint's `whsec_…` secret) and is recent (5 minutes of tolerance), and returns
 * the parsed event. Pass the body exactly as received, before any JSON parsing: a string, or
 * its bytes (a Node Buffer, a Uint8Array). Throws WebhookVerificationError otherwise.
 * Deliveries may arrive out of order and more than once: dedupe by `webhook-id`.
 */
export function verifyWebhook<Event = unknown>(
  secret: string,
  headers: Headers | Record<string, string | string[] | undefined>,
  rawBody: string | Uint8Array,
): Event {
  const read = (name: string) => {
    const value = headers instanceof Headers ? headers.get(name) : (headers[name] ?? headers[name.toLowerCase()])
    return Array.isArray(value) ? value[0] : (value ?? undefined)
  }
  const required = {
    'webhook-id': read('webhook-id') ?? '',
    'webhook-timestamp': read('webhook-timestamp') ?? '',
    'webhook-signature': read('webhook-signature') ?? '',
  }
  // Decoded here rather than by standardwebhooks, which takes only a string or a Node Buffer: a
  // Uint8Array then verifies in a browser too. The BOM is kept, as Buffer#toString keeps it,
  // since the signature covers the body byte for byte.
  const body = typeof rawBody === 'string' ? rawBody : new TextDecoder('utf-8', { ignoreBOM: true }).decode(rawBody)
  return new Webhook(secret).verify(body, required) as Event
}
