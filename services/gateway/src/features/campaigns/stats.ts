import { and, eq, inArray, notInArray, sql } from 'drizzle-orm'
import type { CampaignStats } from '@letters/contracts'
import { campaigns, letters as l, type Executor } from '@letters/db'
import { postedStatuses } from '@letters/letters'
import type { KeyScope } from '../../common/caller.js'
import { campaignNotFound } from './campaigns.js'

/** Letters that never reached the post and never will: they are not counted as sent. */
const unsent = ['cancelled', 'address_rejected', 'failed'] as const

/**
 * How a campaign's letters of the key's mode fared once sent: handed to the post, brought back,
 * carrying a QR code, scanned. One query: the campaign (any of the account's, active or not, so
 * that an old campaign's results can still be read) joined to its letters, counted with FILTER
 * aggregates. The join's condition is letters_campaign_created_idx's leading columns (account,
 * mode, campaign), so a small campaign in an account of many letters reads only its own rows.
 * Another account's campaign is as unknown as one never created.
 */
export async function campaignStats(ex: Executor, scope: KeyScope, campaignId: string): Promise<CampaignStats> {
  const [row] = await campaignStatsQuery(ex, scope, campaignId)
  if (!row) throw campaignNotFound()
  return { campaignId, ...row, scanRate: row.mailed === 0 ? 0 : row.scanned / row.mailed }
}

/** The one query of campaignStats, as a builder (its plan is checked in the tests): no row when the campaign is not the account's. */
export function campaignStatsQuery(ex: Executor, scope: KeyScope, campaignId: string) {
  const posted = inArray(l.status, [...postedStatuses])
  return ex
    .select({
      sent: sql<number>`count(${l.id})::int`,
      mailed: sql<number>`count(${l.id}) FILTER (WHERE ${posted})::int`,
      returned: sql<number>`count(${l.id}) FILTER (WHERE ${l.status} = 'returned')::int`,
      tracked: sql<number>`count(${l.id}) FILTER (WHERE ${l.trackingUrl} IS NOT NULL)::int`,
      // Of the mailed ones: a letter scanned before the floor marked it mailed (its batch handed
      // over, the scan at the door not yet recorded) counts once it is.
      scanned: sql<number>`count(${l.id}) FILTER (WHERE ${l.qrScans} > 0 AND ${posted})::int`,
      // A sum of integers is a bigint, which the driver hands over as a string: a count of scans fits a double.
      scans: sql<number>`COALESCE(sum(${l.qrScans}), 0)::float8`,
    })
    .from(campaigns)
    .leftJoin(l, and(eq(l.accountId, scope.accountId), eq(l.livemode, scope.livemode), eq(l.campaignId, campaigns.id), notInArray(l.status, [...unsent])))
    .where(and(eq(campaigns.id, campaignId), eq(campaigns.accountId, scope.accountId)))
    .groupBy(campaigns.id)
}
