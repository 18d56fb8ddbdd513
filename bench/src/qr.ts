import { randomInt } from 'node:crypto'
import { QR_CODE_ALPHABET, QR_CODE_LENGTH } from '@letters/contracts'
import { withKey, type BenchAccount } from './accounts.js'
import type { BenchEnvironment } from './environment.js'
import type { LoadTarget } from './http-load.js'
import { singleLetter } from './letter.js'

/**
 * Letters the QR row scans: enough that each code is scanned a few times in the row's rounds, so
 * that the scans measured are counted ones (the first of a code writes its letter.qr_scanned
 * event, the next rewrite it), not ones past the per-minute limit.
 */
export const QR_LETTERS = 20_000

export const TRACKING_URL = 'https://tienda.example.com/gracias?utm_source=carta'

function randomCode(): string {
  let code = ''
  for (let i = 0; i < QR_CODE_LENGTH; i++) code += QR_CODE_ALPHABET[randomInt(QR_CODE_ALPHABET.length)]
  return code
}

/**
 * QR_LETTERS letters of `account` with a tracking URL, and their codes: one made through POST
 * /single, the rest copies of it in SQL, each with a code of its own and its first letter_events
 * row (a letter.qr_scanned event carries the sequence of the letter's status).
 */
export async function trackedLetters(env: BenchEnvironment, gateway: string, account: BenchAccount): Promise<string[]> {
  const response = await fetch(`${gateway}/single`, {
    method: 'POST',
    headers: { ...withKey(account), 'content-type': 'application/json' },
    body: JSON.stringify({ ...singleLetter(account), trackingUrl: TRACKING_URL }),
  })
  if (!response.ok) throw new Error(`POST /single answered ${response.status}: ${await response.text()}`)
  const { cardId } = (await response.json()) as { cardId: string }
  const codes = new Set<string>()
  while (codes.size < QR_LETTERS - 1) codes.add(randomCode())
  await env.sql`
    WITH copies AS (
      INSERT INTO letters (account_id, type, campaign_id, card_design_id, envelope_design_id, sender_id, font_name, message, recipient, address, status, cost,
        tracking_url, tracking_code)
      SELECT l.account_id, l.type, l.campaign_id, l.card_design_id, l.envelope_design_id, l.sender_id, l.font_name, l.message, l.recipient, l.address, l.status, l.cost,
        l.tracking_url, c.code
      FROM letters l, unnest(${[...codes]}::text[]) AS c(code) WHERE l.id = ${cardId}
      RETURNING id, status
    )
    INSERT INTO letter_events (letter_id, status) SELECT id, status FROM copies`
  await env.sql`ANALYZE letters`
  const [original] = await env.sql<Array<{ code: string }>>`SELECT tracking_code AS code FROM letters WHERE id = ${cardId}`
  return [original!.code, ...codes]
}

/**
 * GET /q/{code}?utm_source=qr on `gateway`, redirects not followed: connection i scans its share
 * of the codes (one in `connections`), one after another, as a browser with no preview or
 * prefetch header would.
 */
export function qrTarget(gateway: string, codes: string[], connections: number): LoadTarget {
  const shares = Array.from({ length: connections }, (_, i) => codes.filter((_, n) => n % connections === i))
  return {
    url: `${gateway}/q/${codes[0]}`,
    expect: '3xx',
    requests: shares.map((share) => ({ paths: share.map((code) => `/q/${code}?utm_source=qr`) })),
  }
}
