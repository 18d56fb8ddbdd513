import { sql, type SQL } from 'drizzle-orm'
import { PgDialect } from 'drizzle-orm/pg-core'
import type { Sql, TransactionSql } from 'postgres'
import type { ReturnReason } from '@letters/contracts'
import type { Executor } from '@letters/db'
import { json } from './json.js'
import type { OrderOutcome, OwnedField } from './orders.js'

/**
 * What a letter names that must be its account's: designs, sender, and the campaign (which must
 * also be active); and the keys of the order's addresses, none of which may be on the account's
 * suppression list (of the order's mode), listed on one choice of the order.
 */
export interface Choice {
  /** The order it belongs to. */
  n: number
  account: string
  livemode: boolean
  addresses: string[]
  card: string
  envelope: string
  sender: string
  signature: string | null
  campaign: string | null
}

export type CheckRow = {
  n: number
  card_ok: boolean
  envelope_ok: boolean
  sender_ok: boolean
  signature_ok: boolean
  campaign_ok: boolean
  /** The first of the choice's addresses found on the suppression list, or null. */
  suppressed: { key: string; reason: ReturnReason; since: string } | null
}

/** Every choice checked in one statement, one row each. */
function checkChoicesSql(choices: Choice[]): SQL {
  return sql`
    SELECT i.n,
      EXISTS (SELECT 1 FROM card_designs WHERE id = i.card AND account_id = i.account) AS card_ok,
      EXISTS (SELECT 1 FROM envelope_designs WHERE id = i.envelope AND account_id = i.account) AS envelope_ok,
      EXISTS (SELECT 1 FROM senders WHERE id = i.sender AND account_id = i.account) AS sender_ok,
      (i.signature IS NULL OR EXISTS (SELECT 1 FROM signatures WHERE id = i.signature AND account_id = i.account)) AS signature_ok,
      (i.campaign IS NULL OR EXISTS (SELECT 1 FROM campaigns WHERE id = i.campaign AND account_id = i.account AND active)) AS campaign_ok,
      (SELECT json_build_object('key', s.address_hash, 'reason', s.reason, 'since', s.created_at) FROM address_suppressions s
        WHERE s.account_id = i.account AND s.livemode = i.livemode AND s.address_hash = ANY(i.addresses) LIMIT 1) AS suppressed
    FROM jsonb_to_recordset(${json(choices)}::jsonb) AS i(n int, account uuid, livemode boolean, addresses text[], card uuid, envelope uuid, sender uuid, signature uuid, campaign uuid)`
}

/**
 * The check on the intake's own postgres.js transaction, where it is pipelined with the batch's
 * other statements (drizzle's transactions cannot pipeline): the same statement, rendered once.
 */
export function checkChoices(client: Sql | TransactionSql, choices: Choice[]) {
  return client.unsafe<CheckRow[]>(CHECK_CHOICES_TEXT, [json(choices)], { prepare: true })
}

/** The check's text, rendered once: its one parameter is the choices' JSON. */
const CHECK_CHOICES_TEXT = (() => {
  const { sql: text, params } = new PgDialect().sqlToQuery(checkChoicesSql([]))
  if (params.length !== 1) throw new Error('the ownership check takes the choices as its one parameter')
  return text
})()

/** The first refusal among an order's checks, in the order a client reads its fields. */
export function refusalOf(rows: CheckRow[] | undefined): OrderOutcome | undefined {
  for (const row of rows ?? []) {
    if (!row.card_ok) return { outcome: 'not-owned', field: 'cardDesignId' }
    if (!row.envelope_ok) return { outcome: 'not-owned', field: 'envelopeDesignId' }
    if (!row.sender_ok) return { outcome: 'not-owned', field: 'senderId' }
    if (!row.signature_ok) return { outcome: 'not-owned', field: 'signatureId' }
    if (!row.campaign_ok) return { outcome: 'campaign-inactive' }
  }
  const suppressed = rows?.find((row) => row.suppressed)?.suppressed
  if (suppressed) return { outcome: 'suppressed', key: suppressed.key, reason: suppressed.reason, since: new Date(suppressed.since) }
  return undefined
}

/** The first of the designs and sender that is not the account's (an unknown id and another account's look the same), for what is not a letter: a campaign. */
export async function unownedField(
  ex: Executor,
  accountId: string,
  choice: { cardDesignId: string; envelopeDesignId: string; senderId: string; signatureId?: string | null | undefined },
): Promise<OwnedField | undefined> {
  const rows = await ex.execute<CheckRow>(
    checkChoicesSql([
      {
        n: 0,
        account: accountId,
        livemode: true,
        addresses: [],
        card: choice.cardDesignId,
        envelope: choice.envelopeDesignId,
        sender: choice.senderId,
        signature: choice.signatureId ?? null,
        campaign: null,
      },
    ]),
  )
  const refused = refusalOf([...rows])
  return refused?.outcome === 'not-owned' ? refused.field : undefined
}
