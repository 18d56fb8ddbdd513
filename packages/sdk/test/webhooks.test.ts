import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { Webhook } from 'standardwebhooks'
import { verifyWebhook, WebhookVerificationError } from '../src/index.js'

const secret = `whsec_${randomBytes(32).toString('base64')}`
const body = JSON.stringify({
  type: 'letter.printed',
  timestamp: '2026-11-22T04:00:00.000Z',
  data: { id: '6f1c2b7e-3d4a-4c5b-9e8f-1a2b3c4d5e6f', status: 'printed' },
})

/** Headers as the API sends them, signed by the reference implementation of Standard Webhooks. */
function signed(id = 'msg_1', at = new Date(), payload = body) {
  return { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign(id, at, payload) }
}

describe('verifyWebhook', () => {
  it('returns the event of a delivery signed with the endpoint secret, its body a string, a Buffer or, as in a browser, a Uint8Array', () => {
    expect(verifyWebhook<{ type: string }>(secret, signed(), body).type).toBe('letter.printed')
    expect(verifyWebhook(secret, new Headers(signed()), Buffer.from(body))).toMatchObject({ type: 'letter.printed' })
    expect(verifyWebhook(secret, new Headers(signed()), new TextEncoder().encode(body))).toMatchObject({ type: 'letter.printed' })
  })

  it('signs "id.timestamp.body" with HMAC-SHA256 of the decoded secret, as v1,<base64>', async () => {
    const { createHmac } = await import('node:crypto')
    const headers = signed('msg_2')
    const expected = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
      .update(`msg_2.${headers['webhook-timestamp']}.${body}`)
      .digest('base64')
    expect(headers['webhook-signature']).toBe(`v1,${expected}`)
    expect(verifyWebhook(secret, headers, body)).toBeTruthy()
  })

  it('refuses a changed body, another secret, a missing header and an old timestamp', () => {
    expect(() => verifyWebhook(secret, signed(), body.replace('printed', 'mailed'))).toThrow(WebhookVerificationError)
    expect(() => verifyWebhook(`whsec_${randomBytes(32).toString('base64')}`, signed(), body)).toThrow(WebhookVerificationError)
    const { 'webhook-signature': _signature, ...unsigned } = signed()
    expect(() => verifyWebhook(secret, unsigned, body)).toThrow(WebhookVerificationError)
    expect(() => verifyWebhook(secret, signed('msg_3', new Date(Date.now() - 10 * 60_000)), body)).toThrow(WebhookVerificationError)
  })
})
