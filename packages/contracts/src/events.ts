import { Type, type Static } from 'typebox'
import { Page, Uuid, pageQueryFields, strict } from './common.js'
import { CardSummary } from './public.js'
import { EventType, letterEventTypes } from './webhooks.js'

/** How long GET /events keeps an event; then it is deleted. */
export const EVENT_RETENTION_DAYS = 30

/** What a receiver may and may not count on, said wherever events are documented. */
export const EVENT_ORDER_NOTE =
  'Order is not promised: webhooks are sent in parallel and retried, so a letter’s `letter.printed` may arrive before its `letter.printing`, and the same event may arrive more than once. ' +
  'Each event carries its letter’s `sequence` (1, 2, 3… in the order the letter went through its statuses) and `occurredAt`: keep, per letter, the event with the highest sequence, and dedupe by `id`.'

/**
 * A letter event: what a webhook's body carries and GET /events lists. The body is fixed when the
 * letter changes status, so every retry and every listing shows the same bytes.
 */
export const LetterEvent = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'The event’s id, the same in every webhook that carries it and in GET /events.' }),
    type: Type.Union(letterEventTypes.map((type) => Type.Literal(type))),
    sequence: Type.Integer({
      minimum: 1,
      description:
        'The event’s place among its letter’s events: 1 for the letter’s first status, then 2, 3… in the order it went through them. A `letter.qr_scanned` is no change of status: it carries the sequence of the status the letter was in.',
    }),
    occurredAt: Type.String({
      format: 'date-time',
      description: 'When the letter changed to the status the event names; for `letter.qr_scanned`, the first scan its count takes in.',
    }),
    timestamp: Type.String({ format: 'date-time', description: 'When the event was written, in the transaction of the change.' }),
    data: Type.Object(
      {
        // An event's body is kept as it was written: one written before letters had an ink has none.
        ...CardSummary.properties,
        inkColor: Type.Optional(CardSummary.properties.inkColor),
        scans: Type.Optional(Type.Integer({ minimum: 1, description: 'Only in `letter.qr_scanned`: the letter’s counted scans so far, this one included.' })),
        firstScannedAt: Type.Optional(Type.String({ format: 'date-time', description: 'Only in `letter.qr_scanned`: the letter’s first counted scan.' })),
        lastScannedAt: Type.Optional(Type.String({ format: 'date-time', description: 'Only in `letter.qr_scanned`: its latest counted scan.' })),
      },
      {
        description:
          'The letter as GET /cards/{cardId} shows it, without `events`, as it was at that change. In `letter.qr_scanned` (a scan of its QR code, no change of status), also `scans`, `firstScannedAt` and `lastScannedAt`: that event is written at the first scan of a 30-minute window and its body, in GET /events, counts the window’s later scans; its webhook is sent once, at the first.',
      },
    ),
  },
  { description: EVENT_ORDER_NOTE },
)
export type LetterEvent = Static<typeof LetterEvent>

export const EventListQuery = Type.Object(
  {
    type: Type.Optional(EventType),
    cardId: Type.Optional(Uuid("El parámetro 'cardId' debe ser el id de una carta (un UUID)")),
    ...pageQueryFields,
  },
  strict,
)
export type EventListQuery = Static<typeof EventListQuery>

export const EventList = Page(LetterEvent)
