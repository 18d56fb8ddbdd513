import { and, eq, isNull, sql } from 'drizzle-orm'
import {
  WEBHOOK_DISABLE_AFTER_FAILED_EVENTS,
  WEBHOOK_ENDPOINTS_PER_ACCOUNT,
  WEBHOOK_URL_MAX_CHARACTERS,
  UUID_PATTERN,
  webhookEventTypes,
  type WebhookAttempt,
  type WebhookCreateBody,
  type WebhookCreated,
  type WebhookDeliveryQuery,
  type WebhookEndpoint,
  type WebhookRetryQueued,
} from '@letters/contracts'
import { keysetPage, webhookAttempts, webhookEndpoints, webhookEvents, type Db, type Executor } from '@letters/db'
import { assertPublicHost, hostOf, newWebhookSecret, RefusedAddressError } from '@letters/webhooks'
import { badRequest, conflict, notFound } from '../../common/errors.js'
import type { KeyScope } from '../../common/caller.js'
import { webhookBodySql } from '@letters/letters'

const endpointNotFound = () => notFound('El webhook no existe')
const deliveryNotFound = () => notFound('La entrega no existe en este webhook')
const deliveryBeingSent = () => conflict('La entrega se está enviando ahora; espera a su resultado (GET /webhooks/{id}/deliveries) y vuelve a pedirlo')
const endpointDisabled = () =>
  conflict(`El webhook está desactivado porque sus últimos ${WEBHOOK_DISABLE_AFTER_FAILED_EVENTS} eventos fallaron: vuelve a crearlo`)

/** What the gateway allows of an endpoint's URL (config.webhooks). */
export interface UrlRules {
  allowPrivateUrls: boolean
  allowHttp: boolean
}

/** The URL as the client may register it: https, or http where allowed, and (unless allowed) a host with only public addresses. */
async function checkUrl(text: string, rules: UrlRules): Promise<string> {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw badRequest("El campo 'url' no es una URL válida")
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badRequest('La URL del webhook debe empezar por http:// o https://')
  if (url.protocol === 'http:' && !rules.allowHttp) {
    throw badRequest('La URL del webhook debe empezar por https://: los eventos llevan datos personales y no se envían sin cifrar. Usa una URL https')
  }
  if (url.username || url.password) throw badRequest('La URL del webhook no puede llevar usuario ni contraseña')
  // The limit holds for what is stored: percent-encoding can make a URL several times longer.
  if (url.href.length > WEBHOOK_URL_MAX_CHARACTERS) {
    throw badRequest(`La URL del webhook, codificada, tiene ${url.href.length} caracteres: el máximo es ${WEBHOOK_URL_MAX_CHARACTERS}`)
  }
  if (rules.allowPrivateUrls) return url.href
  try {
    await assertPublicHost(hostOf(url))
  } catch (error) {
    if (error instanceof RefusedAddressError) {
      throw badRequest(`La URL del webhook apunta a una dirección privada, local o de metadatos (${error.host}): solo se admiten direcciones públicas`)
    }
    throw badRequest(`No se puede resolver el nombre '${hostOf(url)}' de la URL del webhook`)
  }
  return url.href
}

const iso = (date: Date) => date.toISOString()

/**
 * The endpoints a key sees: its account's, of its own mode (an endpoint of the other mode does
 * not exist for it), not deleted.
 */
const keyEndpoints = (scope: KeyScope) =>
  and(eq(webhookEndpoints.accountId, scope.accountId), eq(webhookEndpoints.livemode, scope.livemode), isNull(webhookEndpoints.deletedAt))

const modeName = (livemode: boolean) => (livemode ? 'reales' : 'de prueba')

/**
 * Registers an endpoint in the key's mode: a test key's endpoint receives only test letters'
 * events. The limit holds per account and mode, so test endpoints never use up live ones; they
 * are counted under a lock of the account's webhooks, so two creations at once cannot both be
 * the tenth.
 */
export async function createWebhook(db: Db, scope: KeyScope, body: WebhookCreateBody, rules: UrlRules): Promise<WebhookCreated> {
  const url = await checkUrl(body.url, rules)
  const events = body.events ?? [...webhookEventTypes]
  const secret = newWebhookSecret()
  const { accountId, livemode } = scope
  return db.transaction(async (tx) => {
    // Raw SQL kept: an advisory lock (one account's endpoint count checked and written at a time), which drizzle has no builder for.
    await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtextextended(${`webhooks:${accountId}`}, 0))`)
    const [{ count } = { count: 0 }] = await tx
      .select({ count: sql<number>`count(*)::int` })
      .from(webhookEndpoints)
      .where(keyEndpoints(scope))
    if (count >= WEBHOOK_ENDPOINTS_PER_ACCOUNT) {
      throw badRequest(
        `Una cuenta puede tener como mucho ${WEBHOOK_ENDPOINTS_PER_ACCOUNT} webhooks ${modeName(livemode)} (los reales y los de prueba se cuentan aparte): borra alguno antes de crear otro`,
      )
    }
    const [row] = await tx.insert(webhookEndpoints).values({ accountId, livemode, url, events, secret }).returning()
    return { id: row!.id, url: row!.url, events: row!.events, livemode: row!.livemode, secret, createdAt: iso(row!.createdAt) }
  })
}

export async function listWebhooks(ex: Executor, scope: KeyScope): Promise<{ data: WebhookEndpoint[] }> {
  const rows = await ex.select().from(webhookEndpoints).where(keyEndpoints(scope)).orderBy(webhookEndpoints.createdAt, webhookEndpoints.id)
  return {
    data: rows.map((row) => ({ id: row.id, url: row.url, events: row.events, livemode: row.livemode, createdAt: iso(row.createdAt), disabled: row.disabled })),
  }
}

async function ownedEndpoint(ex: Executor, scope: KeyScope, id: string) {
  if (!UUID_PATTERN.test(id)) throw endpointNotFound()
  const [row] = await ex
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.id, id), keyEndpoints(scope)))
  if (!row) throw endpointNotFound()
  return row
}

/**
 * Deletes the endpoint at once, whatever its history: one row marked deleted and disabled, so
 * the API no longer shows it, no new event is written for it and a delivery still queued is
 * dropped. Its events and attempts, which may be hundreds of thousands, are removed afterwards
 * a batch at a time by the history retention, and then the row.
 */
export async function deleteWebhook(ex: Executor, scope: KeyScope, id: string): Promise<void> {
  if (!UUID_PATTERN.test(id)) throw endpointNotFound()
  const deleted = await ex.transaction(async (tx) => {
    // FOR UPDATE, which a letter's change fanning its events out (FOR KEY SHARE) waits for: it
    // then reads the endpoint again, disabled, and writes nothing for it.
    const [held] = await tx
      .select({ id: webhookEndpoints.id })
      .from(webhookEndpoints)
      .where(and(eq(webhookEndpoints.id, id), keyEndpoints(scope)))
      .for('update')
    if (!held) return false
    await tx
      .update(webhookEndpoints)
      .set({ deletedAt: sql`now()`, disabled: true })
      .where(eq(webhookEndpoints.id, id))
    return true
  })
  if (!deleted) throw endpointNotFound()
}

/** Queues a `webhook.test` event for the endpoint: pending, the webhook worker's admission sends it like any other. */
export async function testWebhook(db: Db, scope: KeyScope, id: string): Promise<{ eventId: string; type: 'webhook.test' }> {
  return db.transaction(async (tx) => {
    const endpoint = await ownedEndpoint(tx, scope, id)
    if (endpoint.disabled) throw endpointDisabled()
    const body = webhookBodySql(sql`'webhook.test'`, sql`json_build_object('webhookId', ${endpoint.id}::text)`)
    const [event] = await tx
      .insert(webhookEvents)
      .values({ endpointId: endpoint.id, type: 'webhook.test', body: sql`${body}` })
      .returning({ id: webhookEvents.id })
    return { eventId: event!.id, type: 'webhook.test' as const }
  })
}

/**
 * Sends a delivery of the endpoint again, as it was (same webhook-id, same body): it is pending
 * again, due now, and its next attempt is recorded after the ones it had. One waiting for its next
 * attempt is only brought forward. A delivery of another endpoint, account or mode does not exist here.
 *
 * One leased (queued for a worker, or being sent) is a 409: the attempt under way records its
 * outcome over whatever this would write, so a 202 would promise a send that never comes. Its row
 * is locked first, so the lease checked is the lease until this commits: the admission, and the
 * worker taking or recording its lease, wait for this transaction. A lease that has passed is
 * taken back: a worker still holding it then records nothing over the retry (it may send once
 * more, under the same webhook-id), and the admission leases the delivery again.
 */
export async function retryDelivery(db: Db, scope: KeyScope, id: string, deliveryId: string): Promise<WebhookRetryQueued> {
  return db.transaction(async (tx) => {
    const endpoint = await ownedEndpoint(tx, scope, id)
    if (!UUID_PATTERN.test(deliveryId)) throw deliveryNotFound()
    const [delivery] = await tx
      .select({
        id: webhookEvents.id,
        type: webhookEvents.type,
        leased: sql<boolean>`${webhookEvents.state} = 'pending' AND ${webhookEvents.leasedUntil} > now()`,
      })
      .from(webhookEvents)
      .where(and(eq(webhookEvents.id, deliveryId), eq(webhookEvents.endpointId, endpoint.id)))
      .for('no key update')
    // A delivery that is not there is a 404 whatever the endpoint's state.
    if (!delivery) throw deliveryNotFound()
    if (endpoint.disabled) throw endpointDisabled()
    if (delivery.leased) throw deliveryBeingSent()
    await tx
      .update(webhookEvents)
      .set({ state: 'pending', nextAttemptAt: sql`now()`, finishedAt: null, leasedUntil: null, leaseId: null })
      .where(eq(webhookEvents.id, delivery.id))
    return { deliveryId: delivery.id, type: delivery.type, state: 'pending' as const }
  })
}

const decodeCursor = (cursor: string): number => {
  const text = Buffer.from(cursor, 'base64url').toString('utf8')
  if (!/^[1-9][0-9]{0,15}$/.test(text)) throw badRequest("El parámetro 'cursor' no es válido: usa el 'nextCursor' de la página anterior")
  return Number(text)
}

/** The endpoint's delivery attempts, newest first, a page at a time. */
export async function listDeliveries(
  ex: Executor,
  scope: KeyScope,
  id: string,
  query: WebhookDeliveryQuery,
): Promise<{ data: WebhookAttempt[]; nextCursor: string | null }> {
  // Another account's endpoint, or one of the other mode, is 404 whatever the cursor says.
  const endpoint = await ownedEndpoint(ex, scope, id)
  const limit = query.limit ?? 20
  // Newest first by the serial id, through webhook_attempts_endpoint_idx.
  const page = keysetPage({ id: webhookAttempts.id }, query.cursor === undefined ? undefined : { id: decodeCursor(query.cursor) }, 'newest first', limit)
  const rows = await ex
    .select({ attempt: webhookAttempts, type: webhookEvents.type })
    .from(webhookAttempts)
    .innerJoin(webhookEvents, eq(webhookEvents.id, webhookAttempts.eventId))
    .where(and(eq(webhookAttempts.endpointId, endpoint.id), page.after))
    .orderBy(page.orderBy)
    .limit(page.limit)
  const attempts = rows.slice(0, limit)
  const last = attempts.at(-1)
  return {
    data: attempts.map(({ attempt, type }) => ({
      eventId: attempt.eventId,
      type,
      attempt: attempt.attempt,
      statusCode: attempt.statusCode,
      error: attempt.error as WebhookAttempt['error'],
      durationMs: attempt.durationMs,
      at: iso(attempt.at),
      nextAttemptAt: attempt.nextAttemptAt ? iso(attempt.nextAttemptAt) : null,
      outcome: attempt.outcome,
    })),
    nextCursor: rows.length > limit && last ? Buffer.from(String(last.attempt.id)).toString('base64url') : null,
  }
}
