import { Webhook, WebhookVerificationError } from 'standardwebhooks'

export { WebhookVerificationError }

/**
 * Checks that a webhook delivery comes from the API (Standard Webhooks: `webhook-id`,
 * `webhook-timestamp`, `webhook-signature` = `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`
 * with the endpoint's `whsec_…` secret) and is recent (5 minutes of tolerance), and returns
 * the parsed event. Pass the body exactly as received, before any JSON parsing. Throws
 * WebhookVerificationError otherwise. Deliveries may arrive out of order and more than
 * once: dedupe by `webhook-id`.
 */
export function verifyWebhook<Event = unknown>(
  secret: string,
  headers: Headers | Record<string, string | string[] | undefined>,
  rawBody: string | Buffer,
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
  return new Webhook(secret).verify(rawBody, required) as Event
}
