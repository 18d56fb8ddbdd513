import { Type, type Static } from 'typebox'
import { pageQueryFields, strict } from './common.js'
import { letterStatuses, type LetterStatus } from './letter-statuses.js'

/** The letter events: one per status a letter can reach, and a scan of its QR code (no change of status). */
export const letterEventType = (status: LetterStatus) => `letter.${status}` as const
export const QR_SCANNED_EVENT = 'letter.qr_scanned'
export const letterEventTypes = [...letterStatuses.map(letterEventType), QR_SCANNED_EVENT] as const
export type LetterEventType = (typeof letterEventTypes)[number]

/** What an endpoint may subscribe to; `webhook.test` is sent on request to any endpoint, never subscribed. */
export const webhookEventTypes = letterEventTypes
export type WebhookEventType = LetterEventType | 'webhook.test'

export const WEBHOOK_URL_MAX_CHARACTERS = 2000
/** Endpoints an account may have in each mode: its live ones and its test ones are counted apart. */
export const WEBHOOK_ENDPOINTS_PER_ACCOUNT = 10
/** An endpoint whose last this many finished events all failed is disabled (the webhook worker), until created again. */
export const WEBHOOK_DISABLE_AFTER_FAILED_EVENTS = 50

/** A letter event's type as a request names it (an endpoint's subscription, GET /events?type=). */
export const EventType = Type.Union(
  letterEventTypes.map((type) => Type.Literal(type)),
  { errorMessage: `Tipo de evento desconocido: los tipos válidos son ${letterEventTypes.join(', ')}` },
)

export const WebhookCreateBody = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: WEBHOOK_URL_MAX_CHARACTERS,
      // An IRI: a URL with non-ASCII characters is taken, and stored percent-encoded.
      format: 'iri',
      errorMessage: `El campo 'url' no es una URL válida: debe ser una URL http o https de como mucho ${WEBHOOK_URL_MAX_CHARACTERS} caracteres`,
      description:
        `Where the events are POSTed: an https URL of at most ${WEBHOOK_URL_MAX_CHARACTERS} characters once percent-encoded (non-ASCII characters are taken and stored encoded), with no user or password. ` +
        'Plain http only where the operator allows it, never by default in production. Its host must resolve only to public addresses (not loopback, private, link-local, unique-local or cloud metadata ones) unless the operator allows private ones (local development). ' +
        'A URL that breaks a rule is refused with 400.',
    }),
    events: Type.Optional(
      Type.Array(EventType, {
        minItems: 1,
        uniqueItems: true,
        errorMessage: "El campo 'events' debe ser una lista no vacía y sin repeticiones de tipos de evento",
      }),
    ),
  },
  strict,
)
export type WebhookCreateBody = Static<typeof WebhookCreateBody>

const endpointFields = {
  id: Type.String({ format: 'uuid' }),
  url: Type.String(),
  events: Type.Array(Type.String()),
  livemode: Type.Boolean({
    description: "False for an endpoint registered with a test key: it receives only test letters' events; a live one only live letters' events.",
  }),
  createdAt: Type.String({ format: 'date-time' }),
}

/** The answer to a creation: the only time the secret is shown. */
export const WebhookCreated = Type.Object({ ...endpointFields, secret: Type.String({ pattern: '^whsec_' }) })
export type WebhookCreated = Static<typeof WebhookCreated>

export const WebhookEndpoint = Type.Object({ ...endpointFields, disabled: Type.Boolean() })
export type WebhookEndpoint = Static<typeof WebhookEndpoint>

export const WebhookList = Type.Object({ data: Type.Array(WebhookEndpoint) })

export const WebhookParams = Type.Object({ id: Type.String() })

export const WebhookTestQueued = Type.Object({ eventId: Type.String({ format: 'uuid' }), type: Type.Literal('webhook.test') })

export const WebhookDeliveryQuery = Type.Object(pageQueryFields, strict)
export type WebhookDeliveryQuery = Static<typeof WebhookDeliveryQuery>

/** One delivery attempt: an HTTP status, or the kind of error that left none. */
export const WebhookAttempt = Type.Object({
  eventId: Type.String({ format: 'uuid' }),
  type: Type.String(),
  attempt: Type.Integer({ minimum: 1 }),
  statusCode: Type.Union([Type.Integer(), Type.Null()]),
  error: Type.Union([Type.Literal('timeout'), Type.Literal('connection'), Type.Literal('refused_address'), Type.Null()]),
  durationMs: Type.Integer(),
  at: Type.String({ format: 'date-time' }),
  /** When it is tried again; null after a success or the last attempt. */
  nextAttemptAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  /** The event's state after this attempt. */
  outcome: Type.Union([Type.Literal('delivered'), Type.Literal('retrying'), Type.Literal('failed')]),
})
export type WebhookAttempt = Static<typeof WebhookAttempt>

export const WebhookDeliveryList = Type.Object({ data: Type.Array(WebhookAttempt), nextCursor: Type.Union([Type.String(), Type.Null()]) })

/** A delivery of an endpoint: `deliveryId` is the `eventId` of its attempts in GET /webhooks/{id}/deliveries, and its `webhook-id` header. */
export const WebhookDeliveryParams = Type.Object({ id: Type.String(), deliveryId: Type.String() })

export const WebhookRetryQueued = Type.Object({
  deliveryId: Type.String({ format: 'uuid' }),
  type: Type.String(),
  /** Always `pending`: the delivery waits for its next attempt, which is due now. */
  state: Type.Literal('pending'),
})
export type WebhookRetryQueued = Static<typeof WebhookRetryQueued>
