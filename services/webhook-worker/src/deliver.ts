import { and, eq, sql } from 'drizzle-orm'
import { Webhook } from 'standardwebhooks'
import { metrics } from '@letters/observability'
import { WEBHOOK_DISABLE_AFTER_FAILED_EVENTS } from '@letters/contracts'
import { webhookAttempts, webhookEndpoints, webhookEvents, type Db, type Tx } from '@letters/db'
import { send, type SendResult } from './send.js'

/** An endpoint whose last this many finished events all failed is disabled. */
export const DISABLE_AFTER_FAILED_EVENTS = WEBHOOK_DISABLE_AFTER_FAILED_EVENTS

export interface DeliverySettings {
  timeoutMs: number
  retryScheduleMs: number[]
  allowPrivateUrls: boolean
  /** Whether plain http:// URLs are sent to (WEBHOOK_ALLOW_HTTP), whenever the endpoint was registered. */
  allowHttp: boolean
}

export type DeliveryOutcome =
  | { outcome: 'delivered' | 'failed'; attempt: number }
  | { outcome: 'retrying'; attempt: number; retryAt: Date }
  /**
   * The event was delivered or given up before (a repeated job), its lease went to another job
   * (`superseded`: this one waited too long, or came from an older release), or its endpoint is
   * gone or disabled.
   */
  | { outcome: 'already_done' | 'superseded' | 'gone' | 'dropped' }

/** The admission's lease on a delivery, held by one job: its id is the job's. */
export interface DeliveryLease {
  eventId: string
  leaseId: string
}

/**
 * How long past its timeout a delivery keeps its endpoint's slot: time to record the attempt.
 * A worker killed mid-delivery holds the slot no longer than timeout + this.
 */
export const RECORDING_MARGIN_MS = 15_000

/** The schedule's delay before retry `retry` (1 = the first), with up to ±20% of jitter so retries of many events spread out. */
export function retryDelay(schedule: number[], retry: number, random = Math.random): number | undefined {
  const delay = schedule[retry - 1]
  return delay === undefined ? undefined : Math.round(delay * (0.8 + 0.4 * random()))
}

const succeeded = (result: SendResult) => 'statusCode' in result && result.statusCode >= 200 && result.statusCode < 300

/** The event's row while the lease is still `lease.leaseId`'s, renewed for one attempt, with its endpoint. */
async function takeLease(db: Db, lease: DeliveryLease, timeoutMs: number) {
  const held = and(eq(webhookEvents.id, lease.eventId), eq(webhookEvents.leaseId, lease.leaseId), eq(webhookEvents.state, 'pending'))
  const [renewed] = await db
    .update(webhookEvents)
    .set({ leasedUntil: sql`now() + ${timeoutMs + RECORDING_MARGIN_MS} * interval '1 millisecond'` })
    .where(held)
    .returning({ id: webhookEvents.id })
  if (!renewed) return undefined
  const [row] = await db
    .select({ event: webhookEvents, endpoint: webhookEndpoints })
    .from(webhookEvents)
    .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookEvents.endpointId))
    .where(eq(webhookEvents.id, lease.eventId))
  return row
}

/** Why a job found no lease to take: its event is gone, done, or leased to another job. */
async function noLease(db: Db, eventId: string): Promise<DeliveryOutcome> {
  const [event] = await db.select({ state: webhookEvents.state }).from(webhookEvents).where(eq(webhookEvents.id, eventId))
  if (!event) return { outcome: 'gone' }
  return { outcome: event.state === 'pending' ? 'superseded' : 'already_done' }
}

/**
 * One delivery attempt of one event, by the job holding its lease: signed and sent, then
 * recorded (the attempt, the event's state, its next attempt's time, the lease let go) in one
 * transaction. Returns what became of the event; a retry is admitted again once its time has
 * come. An event's attempt number comes from its row, so a job that runs twice records its
 * attempts in order, never twice under one number.
 */
export async function deliverEvent(db: Db, settings: DeliverySettings, lease: DeliveryLease, now = () => new Date()): Promise<DeliveryOutcome> {
  const row = await takeLease(db, lease, settings.timeoutMs)
  if (!row) return noLease(db, lease.eventId)
  const { event, endpoint } = row
  const leased = and(eq(webhookEvents.id, event.id), eq(webhookEvents.state, 'pending'), eq(webhookEvents.leaseId, lease.leaseId))
  const letGo = { leasedUntil: null, leaseId: null }
  if (endpoint.disabled) {
    await db
      .update(webhookEvents)
      .set({ state: 'dropped', finishedAt: now(), ...letGo })
      .where(leased)
    return { outcome: 'dropped' }
  }

  const attempt = event.attempts + 1
  const sentAt = now()
  const signature = new Webhook(endpoint.secret).sign(event.id, sentAt, event.body)
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'letters-webhooks/1.0',
    'webhook-id': event.id,
    'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
    'webhook-signature': signature,
  }
  const result = await send(new URL(endpoint.url), headers, event.body, {
    timeoutMs: settings.timeoutMs,
    allowPrivate: settings.allowPrivateUrls,
    allowHttp: settings.allowHttp,
  })

  const delay = succeeded(result) ? undefined : retryDelay(settings.retryScheduleMs, attempt)
  const outcome = succeeded(result) ? 'delivered' : delay === undefined ? 'failed' : 'retrying'
  const retryAt = delay === undefined ? undefined : new Date(now().getTime() + delay)
  const recorded = await db.transaction(async (tx) => {
    const updated = await tx
      .update(webhookEvents)
      .set({
        attempts: attempt,
        state: outcome === 'retrying' ? 'pending' : outcome,
        finishedAt: outcome === 'retrying' ? null : now(),
        nextAttemptAt: retryAt ?? null,
        ...letGo,
      })
      .where(and(leased, eq(webhookEvents.attempts, event.attempts)))
      .returning({ id: webhookEvents.id })
    // Another run of the same job recorded this attempt first, or the lease passed to another job: this one changes nothing.
    if (updated.length === 0) return false
    await tx.insert(webhookAttempts).values({
      eventId: event.id,
      endpointId: endpoint.id,
      attempt,
      statusCode: 'statusCode' in result ? result.statusCode : null,
      error: 'error' in result ? result.error : null,
      durationMs: result.durationMs,
      at: sentAt,
      nextAttemptAt: retryAt ?? null,
      outcome,
    })
    if (outcome === 'failed') await disableIfAllFailed(tx, endpoint.id)
    return true
  })
  if (!recorded) return { outcome: 'already_done' }
  metrics.webhookAttempts.inc({ outcome })
  return outcome === 'retrying' ? { outcome, attempt, retryAt: retryAt! } : { outcome, attempt }
}

/** Disables the endpoint when its last DISABLE_AFTER_FAILED_EVENTS finished events all failed. */
export async function disableIfAllFailed(tx: Tx, endpointId: string): Promise<void> {
  // Raw SQL kept: the count of the last N finished events and the UPDATE in one statement (a LIMIT inside a FILTER count).
  // Finished events only, newest first: webhook_events_endpoint_state_idx read backwards, no sort and no row visited,
  // however many events the endpoint has had.
  const disabled = await tx.execute(sql`
    UPDATE webhook_endpoints SET disabled = true
    WHERE id = ${endpointId}::uuid AND NOT disabled
      AND (SELECT count(*) FILTER (WHERE state = 'failed') FROM (
            SELECT state FROM webhook_events
            WHERE endpoint_id = ${endpointId}::uuid AND finished_at IS NOT NULL AND state IN ('delivered', 'failed')
            ORDER BY finished_at DESC LIMIT ${DISABLE_AFTER_FAILED_EVENTS}) last) = ${DISABLE_AFTER_FAILED_EVENTS}
    RETURNING id`)
  if (disabled.length > 0) metrics.webhookEndpointsDisabled.inc()
}
