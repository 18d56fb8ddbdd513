/** idempotency_keys: the keys of the last day's requests, not yet cleaned up. */
import { publicApi } from '@letters/contracts'
import { IDEMPOTENCY_KEPT_HOURS } from './plan.js'
import { type Fill, u } from './staging.js'

/** The Idempotency-Keys of the last day's requests, as the cleanup leaves them. */
export function idempotencyKeys({ NOW }: Fill): string {
  return `
    INSERT INTO idempotency_keys (account_id, livemode, key, request_hash, response_status, response_body, created_at, expires_at)
    SELECT ha.id, h.livemode, 'pedido-' || substr(md5('idempotency:' || h.n), 1, 20), encode(sha256(convert_to('request:' || h.n, 'UTF8')), 'hex'), 200,
      jsonb_build_object('success', true, 'cardId', h.id), h.c, h.c + interval '${publicApi.IDEMPOTENCY_TTL_HOURS} hours'
    FROM hl h JOIN ha ON ha.a = h.a
    WHERE h.c >= ${NOW} - interval '${IDEMPOTENCY_KEPT_HOURS} hours' AND ${u('h.n', 30)} < 0.9`
}
