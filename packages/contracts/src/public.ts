import { Type, type Static, type TInteger } from 'typebox'
import { COUNTRY_CODES, type CountryCode } from './countries.js'
import { Label, Literals, NON_BLANK, NamedEntry, Page, Recipient, Uuid, VerifiedAddress, pageQueryFields, strict } from './common.js'
import { CampaignVariable } from './campaign-variables.js'
import { FontNameField, InkColorField, inkColors } from './fonts.js'
import { letterStatuses, type LetterStatus } from './letter-statuses.js'
import { ledgerKinds } from './ledger.js'
import { IgnoreSuppressionField, ReturnReasonField, Tracking, TrackingUrlField } from './tracking.js'

const OptionalText = (maxLength: number) => Type.Optional(Type.Union([Type.String({ maxLength }), Type.Null()]))

export const MESSAGE_MAX_CHARACTERS = 1000

/** How far ahead a letter may be scheduled: at least a minute, at most 180 days. */
export const SEND_AT_MIN_LEAD_MS = 60_000
export const SEND_AT_MAX_LEAD_DAYS = 180
export const SEND_AT_MAX_LEAD_MS = SEND_AT_MAX_LEAD_DAYS * 86_400_000
const minLeadMinutes = SEND_AT_MIN_LEAD_MS / 60_000
/** The bounds as the Spanish messages say them: "1 minuto", "180 días". */
export const SEND_AT_MIN_LEAD_TEXT = `${minLeadMinutes} ${minLeadMinutes === 1 ? 'minuto' : 'minutos'}`
export const SEND_AT_MAX_LEAD_TEXT = `${SEND_AT_MAX_LEAD_DAYS} días`
export const SEND_AT_RULE = `'sendAt' debe ser una fecha y hora ISO 8601 con zona horaria (por ejemplo 2026-12-24T09:00:00+01:00) entre ${SEND_AT_MIN_LEAD_TEXT} y ${SEND_AT_MAX_LEAD_TEXT} a partir de ahora`

/** When the letter should enter production; absent or null: at once. */
export const SendAtField = Type.Optional(
  Type.Union([Type.String({ maxLength: 64 }), Type.Null()], {
    errorMessage: SEND_AT_RULE,
    description: `Schedule the letter: an ISO 8601 date-time with an offset, from ${minLeadMinutes} minute${minLeadMinutes === 1 ? '' : 's'} to ${SEND_AT_MAX_LEAD_DAYS} days ahead. It is charged now, waits as 'scheduled' (cancellable, refunded) and enters production at that time.`,
    examples: ['2026-12-24T09:00:00+01:00'],
  }),
)

/** Where a letter goes (or returns to): the request rules of a recipient's postal fields, shared by a sender's return address. */
export const postalFields = {
  address: Label(200),
  zip: Type.String({
    minLength: 1,
    maxLength: 16,
    pattern: NON_BLANK,
    errorMessage: "El campo 'zip' debe ser un texto no vacío (el código postal, entre comillas)",
  }),
  city: Label(100),
  province: OptionalText(100),
  // Upper or lower case, as clients write them; stored upper case.
  country: Literals([...COUNTRY_CODES, ...COUNTRY_CODES.map((code) => code.toLowerCase() as Lowercase<CountryCode>)], {
    errorMessage: "'country' debe ser un código ISO 3166-1 alfa-2 asignado, como ES o FR",
    description: 'An assigned ISO 3166-1 alpha-2 code (and XK), upper or lower case; the letter keeps it upper case.',
  }),
}

const recipient = { name: Label(100), surname: Label(100), ...postalFields }

/** One of the account's signatures, drawn under the message; absent or null: signed with the sender's name (or, on POST /card, the campaign's signature). */
export const SignatureIdField = Type.Optional(
  Type.Union([Uuid(), Type.Null()], { errorMessage: "El campo 'signatureId' debe ser el id (UUID) de una de tus firmas, o null" }),
)

export const SingleLetterBody = Type.Object(
  {
    cardDesignId: Uuid(),
    envelopeDesignId: Uuid(),
    senderId: Uuid(),
    signatureId: SignatureIdField,
    fontName: FontNameField,
    inkColor: InkColorField,
    message: Type.Optional(Type.Union([Type.String({ maxLength: MESSAGE_MAX_CHARACTERS }), Type.Null()])),
    company: OptionalText(100),
    ...recipient,
    sendAt: SendAtField,
    trackingUrl: TrackingUrlField,
    ignoreSuppression: IgnoreSuppressionField,
  },
  {
    ...strict,
    examples: [
      {
        cardDesignId: '6f1c2b7e-3d4a-4c5b-9e8f-1a2b3c4d5e6f',
        envelopeDesignId: '7a2d3c8f-4e5b-4d6c-8f9a-2b3c4d5e6f70',
        senderId: '8b3e4d9a-5f6c-4e7d-9a0b-3c4d5e6f7081',
        fontName: 'caveat',
        inkColor: 'blue',
        message: 'Querida Lucía, gracias por confiar en nosotros este año. ¡Felices fiestas!',
        name: 'Lucía',
        surname: 'García Pérez',
        address: 'Calle Mayor 1, 3º B',
        zip: '28013',
        city: 'Madrid',
        province: 'Madrid',
        country: 'ES',
      },
    ],
  },
)
export type SingleLetterBody = Static<typeof SingleLetterBody>

/** A recipient of a campaign's letter with the values of its variables: POST /card's fields but the campaign and sendAt, and each recipient of a bulk request. */
const campaignRecipient = {
  ...recipient,
  company: OptionalText(100),
  inkColor: InkColorField,
  variables: Type.Optional(
    Type.Record(Type.String(), Type.String(), {
      errorMessage: "El campo 'variables' debe ser un objeto cuyos valores sean textos",
    }),
  ),
  trackingUrl: Type.Optional(
    Type.With(TrackingUrlField, {
      description:
        "The QR code's destination for this letter, over the request's and the campaign's (see POST /single); the campaign's may hold {{variable}} placeholders, filled per letter.",
    }),
  ),
  ignoreSuppression: IgnoreSuppressionField,
}

/** A campaign letter's recipient, as the documentation shows one (POST /card, POST /cards/bulk). */
const exampleCampaignRecipient = {
  name: 'Javier',
  surname: 'Martín',
  company: 'Ferretería Martín S.L.',
  address: 'Avenida de la Constitución 25',
  zip: '41004',
  city: 'Sevilla',
  province: 'Sevilla',
  country: 'ES',
  variables: { nombre: 'Javier', cupon: 'OTONO10' },
}

export const CampaignLetterBody = Type.Object(
  {
    campaignId: Uuid(),
    ...campaignRecipient,
    signatureId: SignatureIdField,
    sendAt: SendAtField,
  },
  {
    ...strict,
    examples: [
      {
        campaignId: '9c4f5e0b-6a7d-4f8e-8b1c-4d5e6f708192',
        ...exampleCampaignRecipient,
      },
    ],
  },
)
export type CampaignLetterBody = Static<typeof CampaignLetterBody>

/** How long an Idempotency-Key is remembered, per account: a retry within it gets the first answer. */
export const IDEMPOTENCY_TTL_HOURS = 24

export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      // A key of blanks would be one key for every request that sends blanks.
      pattern: NON_BLANK,
      errorMessage: "La cabecera 'Idempotency-Key' debe tener entre 1 y 255 caracteres y no puede estar en blanco",
      description:
        'A key of your own (a UUID is best) for this creation: a retry with the same key and body returns the first answer and charges once; the same key with another body is a 422, and while the first request is in flight a 409.',
      examples: ['4b0c7a52-5d1e-4c3b-9f0a-8e2d6c1b7a90'],
    }),
  ),
})

export const ApiKeyHeaders = Type.Object({ 'x-api-key': Type.Optional(Type.String()) })

export const LetterCreated = Type.Object({ success: Type.Boolean(), cardId: Type.String({ format: 'uuid' }) })
export type LetterCreated = Static<typeof LetterCreated>

/** Recipients of one bulk request at most: more is a 413. */
export const BULK_MAX_RECIPIENTS = 1000

export const BulkRecipient = Type.Object(campaignRecipient, {
  ...strict,
  examples: [
    {
      ...exampleCampaignRecipient,
    },
  ],
})
export type BulkRecipient = Static<typeof BulkRecipient>

export const BulkLetterBody = Type.Object(
  {
    campaignId: Uuid(),
    sendAt: SendAtField,
    signatureId: SignatureIdField,
    inkColor: InkColorField,
    trackingUrl: Type.Optional(
      Type.With(TrackingUrlField, { description: "Every letter's QR code destination, unless a recipient's own says otherwise; absent: the campaign's." }),
    ),
    ignoreSuppression: Type.Optional(
      Type.With(IgnoreSuppressionField, { description: 'true: every recipient is sent to even if its address is on the suppression list.' }),
    ),
    recipients: Type.Array(BulkRecipient, {
      minItems: 1,
      maxItems: BULK_MAX_RECIPIENTS,
      description: `1 to ${BULK_MAX_RECIPIENTS} recipients, each checked as a POST /card would check it; more than ${BULK_MAX_RECIPIENTS} is a 413.`,
    }),
  },
  {
    ...strict,
    examples: [
      {
        campaignId: '9c4f5e0b-6a7d-4f8e-8b1c-4d5e6f708192',
        recipients: [
          {
            name: 'Javier',
            surname: 'Martín',
            address: 'Avenida de la Constitución 25',
            zip: '41004',
            city: 'Sevilla',
            province: 'Sevilla',
            country: 'ES',
            variables: { nombre: 'Javier', cupon: 'OTONO10' },
          },
          {
            name: 'Lucía',
            surname: 'García Pérez',
            company: 'Papelería Luna',
            address: 'Calle Mayor 1, 3º B',
            zip: '28013',
            city: 'Madrid',
            country: 'ES',
            variables: { cupon: 'OTONO10' },
          },
        ],
      },
    ],
  },
)
export type BulkLetterBody = Static<typeof BulkLetterBody>

/** The same recipients as a spreadsheet: the body of a bulk request sent as `text/csv`. */
export const BulkLetterCsv = Type.String({
  contentMediaType: 'text/csv',
  description:
    'UTF-8 (with or without BOM), separated by commas or semicolons (as a Spanish Excel writes it), fields quoted where they hold a separator, a quote or a line break. ' +
    'A header row names the columns: the recipient fields (name, surname, address, zip, city and country required; company, province, inkColor and trackingUrl optional) and one column per campaign variable, named as the variable. ' +
    "An empty cell of a variable's column leaves the variable to its default; an empty company or province is none. Then 1 to 1000 rows, one per recipient.",
  examples: [
    'name;surname;company;address;zip;city;province;country;nombre;cupon\r\nJavier;Martín;;Avenida de la Constitución 25;41004;Sevilla;Sevilla;ES;Javier;OTONO10\r\n',
  ],
})

/** What each query parameter of POST /cards/bulk but dryRun says first: a JSON body names it in the body instead. */
const CSV_ONLY =
  "With a text/csv body, and only then: a JSON body gives it in the body, and a JSON request that sends it in the URL is refused with 400 ('Con un cuerpo JSON, … va en el cuerpo, no en la URL')."

export const BulkLetterQuery = Type.Object(
  {
    campaignId: Type.Optional(Type.With(Uuid(), { description: `${CSV_ONLY} The campaign of its letters; required with a CSV.` })),
    sendAt: Type.Optional(
      Type.Union([Type.String({ maxLength: 64 }), Type.Null()], {
        errorMessage: SEND_AT_RULE,
        description: `${CSV_ONLY} When its letters are sent, as \`sendAt\` of a JSON body: an ISO 8601 date-time with an offset.`,
      }),
    ),
    signatureId: Type.Optional(
      Type.With(Uuid("El parámetro 'signatureId' debe ser el id (UUID) de una de tus firmas"), {
        description: `${CSV_ONLY} The signature of its letters; absent: the campaign's.`,
      }),
    ),
    inkColor: Type.Optional(
      Type.With(Literals(inkColors, { errorMessage: `El parámetro 'inkColor' debe ser uno de: ${inkColors.join(', ')}` }), {
        description: `${CSV_ONLY} The ink of its letters, unless a row's own inkColor column says otherwise; absent: the campaign's, then blue.`,
      }),
    ),
    ignoreSuppression: Type.Optional(
      Type.With(Literals(['true', 'false'] as const, { errorMessage: "El parámetro 'ignoreSuppression' debe ser true o false" }), {
        description: `${CSV_ONLY} true sends to addresses on the suppression list too.`,
      }),
    ),
    dryRun: Type.Optional(
      Type.With(Literals(['true', 'false'] as const, { errorMessage: "El parámetro 'dryRun' debe ser true o false" }), {
        description:
          'The one parameter for a JSON body as for a CSV. true: check the request as it would be sent and answer what it would create and cost (`created`, `cost`, every card id null, `errors`), charging, storing and keeping nothing, not even under an Idempotency-Key.',
      }),
    ),
  },
  strict,
)
export type BulkLetterQuery = Static<typeof BulkLetterQuery>

export const BulkLettersCreated = Type.Object({
  created: Type.Integer({ description: 'Letters created (and charged): one per valid recipient. In a dry run, the letters it would create.' }),
  cost: Type.Optional(
    Type.Integer({
      description:
        "The credits the letters cost: charged (a test key's letters show it, uncharged), or in a dry run what they would cost. Absent from answers kept before it was given.",
    }),
  ),
  cardIds: Type.Array(Type.Union([Type.String({ format: 'uuid' }), Type.Null()]), {
    description: "One per recipient, in the request's order: the new letter's id, or null for a recipient listed in errors.",
  }),
  errors: Type.Array(
    Type.Object({
      index: Type.Integer({ description: "The recipient's position, from 0: in JSON, in `recipients`; in CSV, among the rows after the header." }),
      error: Type.String(),
      message: Type.String({ description: 'The Spanish message a POST /card with this recipient would get.' }),
    }),
  ),
})
export type BulkLettersCreated = Static<typeof BulkLettersCreated>

export const NamedList = Type.Object({ data: Type.Array(NamedEntry) })

export const CompanyData = Type.Object({
  data: Type.Object({
    cardDesigns: Type.Array(NamedEntry),
    envelopeDesigns: Type.Array(NamedEntry),
    senders: Type.Array(NamedEntry),
    signatures: Type.Array(NamedEntry),
  }),
})

export const CampaignList = Type.Object({
  campaigns: Type.Array(
    Type.Object({
      id: Type.String({ format: 'uuid' }),
      name: Type.String(),
      variables: Type.Array(CampaignVariable),
    }),
  ),
})

/** A letter's status, one of letterStatuses. */
export const letterStatus = Type.Union(letterStatuses.map((status) => Type.Literal(status)))

const cardFields = {
  id: Type.String({ format: 'uuid' }),
  code: Type.String({
    pattern: '^[0-9A-HJKMNP-TV-Z]{10}$',
    description: "The letter's short code, printed and barcoded on its envelope and listed in the floor's manifest: 10 characters of Crockford's base32.",
    examples: ['7KQ2M9XRTB'],
  }),
  livemode: Type.Boolean({ description: 'False for a letter made with a test key: never charged, never printed nor posted.' }),
  type: Type.Union([Type.Literal('single'), Type.Literal('campaign')]),
  status: letterStatus,
  sendAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When a scheduled letter enters production; null for a letter sent at once.',
  }),
  campaignId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  cardDesignId: Type.String({ format: 'uuid' }),
  envelopeDesignId: Type.String({ format: 'uuid' }),
  senderId: Type.String({ format: 'uuid' }),
  signatureId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
    description: "The signature drawn under the message; null: signed with the sender's name.",
  }),
  fontName: Type.String(),
  inkColor: Literals(inkColors, {
    description: 'The ink the letter is written in (black for letters accepted before inks could be chosen, which were printed in black).',
  }),
  message: Type.String(),
  recipient: Recipient,
  address: Type.Union([VerifiedAddress, Type.Null()], {
    description: 'The address as verified and normalized for the post; null until the address stage has seen the letter.',
  }),
  addressLines: Type.Union([Type.Array(Type.String()), Type.Null()], {
    description:
      'The recipient block exactly as it is printed on the envelope, line by line, laid out for the destination country; null until the address is verified.',
    examples: [['Lucía García Pérez', 'Calle Mayor 1, 3º B', '28013 Madrid']],
  }),
  cost: Type.Integer(),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
  tracking: Type.Union([Tracking, Type.Null()], {
    description: 'The QR code’s destination and its counted scans; null for a letter sent without a trackingUrl.',
  }),
  returnedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When the post brought the letter back (status `returned`); null otherwise.',
  }),
  returnReason: Type.Union([ReturnReasonField, Type.Null()], {
    description: 'Why it came back: unknown_recipient, bad_address, refused, moved, deceased or other; null unless returned.',
  }),
  personalDataErasedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description:
      "When the recipient (all but its country), the message and the address check were erased, with the letter's files: on request (DELETE /cards/{cardId}/personal-data) or once the retention period had passed since it was printed, mailed, cancelled, rejected or failed. From then on those fields are empty, `address` keeps only its country and verdict, `addressLines` is null, and its proof is gone (410). Null until then.",
  }),
}

export const CardSummary = Type.Object(cardFields)
export type CardSummary = Static<typeof CardSummary>

export const Card = Type.Object({
  ...cardFields,
  events: Type.Array(Type.Object({ status: letterStatus, at: Type.String({ format: 'date-time' }), detail: Type.Union([Type.String(), Type.Null()]) })),
})
export type Card = Static<typeof Card>

export const CardParams = Type.Object({ cardId: Type.String() })

const CreatedBound = (name: string, meaning: string) =>
  Type.Optional(
    Type.With(Type.String({ maxLength: 64, errorMessage: `El parámetro '${name}' debe ser una fecha y hora ISO 8601 con zona horaria` }), {
      description: `${meaning} (an ISO 8601 date-time with an offset, e.g. 2026-11-01T00:00:00+01:00).`,
    }),
  )

export const CardListQuery = Type.Object(
  {
    status: Type.Optional(letterStatus),
    campaignId: Type.Optional(Uuid()),
    from: CreatedBound('from', 'Letters created at or after this instant'),
    to: CreatedBound('to', 'Letters created before this instant'),
    search: Type.Optional(
      Type.With(Type.String({ minLength: 1, maxLength: 100, errorMessage: "El parámetro 'search' debe tener de 1 a 100 caracteres" }), {
        description:
          "Letters whose recipient's name, surname or city contains this text, whatever its case (an erased letter's recipient is no longer searched).",
      }),
    ),
    ...pageQueryFields,
  },
  strict,
)
export type CardListQuery = Static<typeof CardListQuery>

export const CardList = Page(CardSummary)

/** GET /cards/stats: the letters created in a span (the last 30 days unless told), counted by status. */
export const CardStatsQuery = Type.Object(
  {
    from: CreatedBound('from', 'Count letters created at or after this instant; default 30 days ago'),
    to: CreatedBound('to', 'Count letters created before this instant; default now'),
  },
  strict,
)
export type CardStatsQuery = Static<typeof CardStatsQuery>

export const CardStats = Type.Object({
  from: Type.String({ format: 'date-time' }),
  to: Type.String({ format: 'date-time' }),
  total: Type.Integer(),
  /** Every status, 0 for the ones no letter is in. */
  byStatus: Type.Object(Object.fromEntries(letterStatuses.map((status) => [status, Type.Integer()])) as Record<LetterStatus, TInteger>),
})
export type CardStats = Static<typeof CardStats>

/** GET /balance. */
export const AccountBalance = Type.Object({
  balance: Type.Integer(),
  lowBalance: Type.Boolean({ description: 'Fewer credits than ten letters abroad cost' }),
})

/** A movement of the account's credits, newest first: a letter charged or refunded, a top-up, an adjustment. */
export const LedgerMovement = Type.Object({
  id: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  kind: Literals(ledgerKinds),
  amount: Type.Integer({ description: 'Signed: a charge is negative' }),
  balanceAfter: Type.Integer(),
  cardId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  reason: Type.Union([Type.String(), Type.Null()]),
})
export const LedgerMovementList = Page(LedgerMovement)
export const LedgerMovementQuery = Type.Object(pageQueryFields, strict)
export type LedgerMovementQuery = Static<typeof LedgerMovementQuery>

/** The movements as a CSV file, for a spreadsheet. */
export const Csv = Type.Unsafe<Buffer>({ type: 'string', contentMediaType: 'text/csv' })

/** The hands a letter can be written in: the built-in ones, then the account's own (`own`) that have a file. */
export const FontList = Type.Object({
  data: Type.Array(Type.Object({ name: Type.String(), family: Type.String(), default: Type.Boolean(), own: Type.Boolean() })),
})
export type FontList = Static<typeof FontList>

export const FontParams = Type.Object({ name: Type.String({ maxLength: 64 }) })

/** A proof is a PDF of the letter's pages as printed (the front artwork of a `printed` design with artwork, the handwriting, the envelope), sent as bytes. */
export const Proof = Type.Unsafe<Buffer>({ type: 'string', format: 'binary', contentMediaType: 'application/pdf' })

/** A PNG image, sent as bytes (a design's preview, a proof's page). */
export const Png = Type.Unsafe<Buffer>({ type: 'string', format: 'binary', contentMediaType: 'image/png' })

/** GET /cards/{id}/proof.png: which page of the proof, from 1. */
export const ProofPageQuery = Type.Object(
  { page: Type.Optional(Type.Integer({ minimum: 1, maximum: 10, errorMessage: "El parámetro 'page' debe ser un número de página entre 1 y 10" })) },
  strict,
)
export type ProofPageQuery = Static<typeof ProofPageQuery>
