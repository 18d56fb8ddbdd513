import { Type, type Static, type TOptional, type TSchema } from 'typebox'
import { CampaignVariable } from './campaign-variables.js'
import { Label, Literals, Mode, NamedEntry, Nullable, Page, Uuid, pageQueryFields, strict } from './common.js'
import { ARTWORK_MAX_BYTES, CardDesign, EnvelopeDesign, Sender, Signature, artworkContentTypes, cardProductions } from './designs.js'
import { cardFormatNames, envelopeFormatNames } from './formats.js'
import { FontNameField, InkColorField } from './fonts.js'
import { CardListQuery as PublicCardListQuery, CardSummary, Card as PublicCard, SignatureIdField, letterStatus, postalFields } from './public.js'
import { QrPlacement, TrackingUrlField } from './tracking.js'

export const CreateAccountBody = Type.Object({ name: Label(), credits: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000_000 })) }, strict)
export type CreateAccountBody = Static<typeof CreateAccountBody>

export const Account = Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String(), balance: Type.Integer() })
export type Account = Static<typeof Account>

export const CreatedAccount = Type.Object({ ...Account.properties, apiKey: Type.String() })
export type CreatedAccount = Static<typeof CreatedAccount>

/** GET /admin/accounts: newest first, a page at a time. */
export const AccountListQuery = Type.Object(pageQueryFields, strict)
export type AccountListQuery = Static<typeof AccountListQuery>

export const AccountList = Page(Type.Object({ ...Account.properties, createdAt: Type.String({ format: 'date-time' }) }))
export type AccountList = Static<typeof AccountList>

/** The mode of a key being issued: live (the default) or test. */
export const ApiKeyMode = Type.With(Mode, { errorMessage: "El campo 'mode' debe ser 'live' o 'test'" })
export type ApiKeyMode = Static<typeof ApiKeyMode>

/** The body of a key's issue: nothing or `{}` for a live key, `{ "mode": "test" }` for a test key. */
export const IssueApiKeyBody = Type.Union([Type.Null(), Type.Object({ mode: Type.Optional(ApiKeyMode) }, strict)], {
  errorMessage: "El cuerpo admite solo el campo 'mode', con valor 'live' o 'test'",
})
export type IssueApiKeyBody = Static<typeof IssueApiKeyBody>

export const CreatedApiKey = Type.Object({ id: Type.String({ format: 'uuid' }), apiKey: Type.String(), mode: ApiKeyMode })
export type CreatedApiKey = Static<typeof CreatedApiKey>

/**
 * GET /admin/api-keys?prefix=: the keys whose visible start (its first 14 characters, as a list
 * shows them) begins with `prefix`. The CLI sends a leaked key's visible start, never the key.
 */
export const ApiKeySearchQuery = Type.Object(
  {
    // Never the whole key: a URL ends up in access logs. 14 characters are all a list shows.
    prefix: Type.String({
      pattern: '^lk_(live|test)_[A-Za-z0-9_-]{2,6}$',
      errorMessage: "El parámetro 'prefix' debe ser el principio visible de una API key: lk_live_ o lk_test_ y de 2 a 6 caracteres más (nunca la key entera)",
    }),
  },
  strict,
)
export type ApiKeySearchQuery = Static<typeof ApiKeySearchQuery>

export const ApiKeyFound = Type.Object({
  id: Type.String({ format: 'uuid' }),
  accountId: Type.String({ format: 'uuid' }),
  accountName: Type.String(),
  mode: ApiKeyMode,
  displayPrefix: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
})
export type ApiKeyFound = Static<typeof ApiKeyFound>

/** At most 20 keys, newest first. */
export const ApiKeySearch = Type.Object({ data: Type.Array(ApiKeyFound) })
export type ApiKeySearch = Static<typeof ApiKeySearch>

export const CreditsBody = Type.Object(
  {
    amount: Type.Integer({
      minimum: -10_000_000,
      maximum: 10_000_000,
      not: Type.Literal(0),
      errorMessage: "El campo 'amount' debe ser un número entero distinto de 0 (negativo para un ajuste)",
    }),
    reason: Type.Optional(Label(500)),
  },
  strict,
)
export type CreditsBody = Static<typeof CreditsBody>

export const Balance = Type.Object({ balance: Type.Integer() })
export type Balance = Static<typeof Balance>

export const NamedEntryBody = Type.Object({ name: Label() }, strict)
export type NamedEntryBody = Static<typeof NamedEntryBody>
export { NamedEntry }

const CardFormatField = Literals(cardFormatNames, { errorMessage: `El campo 'format' de una tarjeta debe ser uno de: ${cardFormatNames.join(', ')}` })
const EnvelopeFormatField = Literals(envelopeFormatNames, { errorMessage: `El campo 'format' de un sobre debe ser uno de: ${envelopeFormatNames.join(', ')}` })
const ProductionField = Literals(cardProductions, { errorMessage: `El campo 'production' debe ser uno de: ${cardProductions.join(', ')}` })
const StockCodeField = Type.Union([Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$' }), Type.Null()], {
  errorMessage: "El campo 'stockCode' debe ser un código de hasta 64 letras, cifras, puntos, guiones o guiones bajos (o null)",
})
const PaperColorField = Type.Union([Type.String({ pattern: '^#[0-9A-Fa-f]{6}$' }), Type.Null()], {
  errorMessage: "El campo 'paperColor' debe ser un color #RRGGBB (por ejemplo #C8A27A para papel kraft), o null",
})

const cardDesignFields = { format: CardFormatField, production: ProductionField, stockCode: StockCodeField, qrPlacement: Nullable(QrPlacement) }
const envelopeDesignFields = { format: EnvelopeFormatField, stockCode: StockCodeField, paperColor: PaperColorField }
const optional = <T extends Record<string, TSchema>>(fields: T) =>
  Object.fromEntries(Object.entries(fields).map(([key, schema]) => [key, Type.Optional(schema)])) as { [K in keyof T]: TOptional<T[K]> }
const atLeastOne = (fields: string[]) => ({
  ...strict,
  minProperties: 1,
  errorMessage: `Indica al menos uno de los campos ${fields.map((field) => `'${field}'`).join(', ')}`,
})

/** POST /admin/accounts/{id}/card-designs: a name, and the product (every field but the name optional: A6, printed, no stock code). */
export const CreateCardDesignBody = Type.Object({ name: Label(), ...optional(cardDesignFields) }, strict)
export type CreateCardDesignBody = Static<typeof CreateCardDesignBody>
export const UpdateCardDesignBody = Type.Object(
  { name: Type.Optional(Label()), ...optional(cardDesignFields) },
  atLeastOne(['name', ...Object.keys(cardDesignFields)]),
)
export type UpdateCardDesignBody = Static<typeof UpdateCardDesignBody>

export const CreateEnvelopeDesignBody = Type.Object({ name: Label(), ...optional(envelopeDesignFields) }, strict)
export type CreateEnvelopeDesignBody = Static<typeof CreateEnvelopeDesignBody>
export const UpdateEnvelopeDesignBody = Type.Object(
  { name: Type.Optional(Label()), ...optional(envelopeDesignFields) },
  atLeastOne(['name', ...Object.keys(envelopeDesignFields)]),
)
export type UpdateEnvelopeDesignBody = Static<typeof UpdateEnvelopeDesignBody>

/** A sender's return address: checked and normalized by the rules of a recipient's address. */
export const ReturnAddressBody = Type.Object({ name: Label(100), company: Type.Optional(Type.Union([Label(100), Type.Null()])), ...postalFields }, strict)
export type ReturnAddressBody = Static<typeof ReturnAddressBody>
const ReturnAddressField = Type.Union([ReturnAddressBody, Type.Null()])

export const CreateSenderBody = Type.Object({ name: Label(), returnAddress: Type.Optional(ReturnAddressField) }, strict)
export type CreateSenderBody = Static<typeof CreateSenderBody>
export const UpdateSenderBody = Type.Object(
  { name: Type.Optional(Label()), returnAddress: Type.Optional(ReturnAddressField) },
  atLeastOne(['name', 'returnAddress']),
)
export type UpdateSenderBody = Static<typeof UpdateSenderBody>

export const DesignParams = Type.Object({ id: Uuid(), designId: Uuid() })
export const SenderParams = Type.Object({ id: Uuid(), senderId: Uuid() })
export const SignatureParams = Type.Object({ id: Uuid(), signatureId: Uuid() })

/** An artwork upload's body: the file's bytes, as its Content-Type says. */
export const ArtworkUpload = Type.Unsafe<Buffer>({
  type: 'string',
  format: 'binary',
  description: `The file itself (not JSON), at most ${ARTWORK_MAX_BYTES / 1024 / 1024} MB, sent with its Content-Type: ${artworkContentTypes.join(', ')}.`,
})

export { CardDesign, EnvelopeDesign, Sender, Signature }

export const CreateCampaignBody = Type.Object(
  {
    name: Label(),
    active: Type.Optional(Type.Boolean()),
    cardDesignId: Uuid(),
    envelopeDesignId: Uuid(),
    senderId: Uuid(),
    signatureId: SignatureIdField,
    fontName: FontNameField,
    inkColor: InkColorField,
    message: Type.String({ minLength: 1, maxLength: 1000 }),
    variables: Type.Array(CampaignVariable, { maxItems: 50 }),
    trackingUrl: Type.Optional(
      Type.With(TrackingUrlField, {
        description: "Its letters' QR code destination unless a request says otherwise; may hold {{variable}} placeholders, filled per letter (URL-encoded).",
      }),
    ),
  },
  strict,
)
export type CreateCampaignBody = Static<typeof CreateCampaignBody>

export const UpdateCampaignBody = Type.Object(
  { active: Type.Optional(Type.Boolean()), name: Type.Optional(Label()) },
  { ...strict, minProperties: 1, errorMessage: "Indica al menos uno de los campos 'active' o 'name'" },
)
export type UpdateCampaignBody = Static<typeof UpdateCampaignBody>

export const Campaign = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  active: Type.Boolean(),
  variables: Type.Array(CampaignVariable),
  trackingUrl: Nullable(Type.String()),
})
export type Campaign = Static<typeof Campaign>

/** A letter as ops see it: the client's view (GET /cards/{id}) and the account it belongs to. */
export const Card = Type.Object({ accountId: Type.String({ format: 'uuid' }), ...PublicCard.properties })
export type Card = Static<typeof Card>

/** `?mode=`: what ops narrow a list to. */
const ModeQuery = Type.With(Mode, { errorMessage: "El parámetro 'mode' debe ser 'live' o 'test'" })

/**
 * GET /admin/cards: the letters of every account and both modes, newest first, a page at a time;
 * narrowed to one account or mode, and by the filters of the client's own list (GET /cards).
 */
export const CardListQuery = Type.Object(
  {
    accountId: Type.Optional(Uuid("El parámetro 'accountId' debe ser el id (un UUID) de una cuenta")),
    mode: Type.Optional(ModeQuery),
    status: PublicCardListQuery.properties.status,
    campaignId: PublicCardListQuery.properties.campaignId,
    from: PublicCardListQuery.properties.from,
    to: PublicCardListQuery.properties.to,
    ...pageQueryFields,
  },
  strict,
)
export type CardListQuery = Static<typeof CardListQuery>

/** A letter of GET /admin/cards: the client's summary of it (GET /cards) and the account it belongs to. */
export const CardList = Page(Type.Object({ accountId: Type.String({ format: 'uuid' }), ...CardSummary.properties }))
export type CardList = Static<typeof CardList>

/** GET /admin/stuck-letters: the longest stuck first, a page at a time. */
export const StuckLetterListQuery = Type.Object(pageQueryFields, strict)
export type StuckLetterListQuery = Static<typeof StuckLetterListQuery>

export const StuckLetterList = Page(
  Type.Object({
    id: Type.String({ format: 'uuid' }),
    accountId: Type.String({ format: 'uuid' }),
    livemode: Type.Boolean(),
    status: letterStatus,
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time', description: 'The last change of the letter: its age in this status counts from here.' }),
    stuckForSeconds: Type.Integer({ description: 'Seconds since the last change.' }),
  }),
)
export type StuckLetterList = Static<typeof StuckLetterList>

/** POST /admin/reconcile: what a reconciliation after a restore did. */
export const Reconciled = Type.Object({
  resumed: Type.Integer({ description: 'Letters whose job was lost and was queued again, each with an event.' }),
  printedFromJournal: Type.Integer({
    description: 'Letters the print journal had on paper, marked printed with an event instead of being printed again.',
  }),
  stuck: Type.Integer({ description: 'Letters that still need ops afterwards (GET /admin/stuck-letters).' }),
})
export type Reconciled = Static<typeof Reconciled>

/** DELETE /admin/accounts/{id}/personal-data: what became of the account's letters (both modes). */
export const PersonalDataErased = Type.Object({
  erased: Type.Integer({ description: 'Letters whose recipient, message and files were erased by this call.' }),
  left: Type.Integer({
    description:
      'Letters left as they are because they are not printed yet (or wait in a print batch not handed over): cancel them, or call again once printed.',
  }),
  remaining: Type.Integer({
    description: 'Letters that could be erased but were not reached before this call had to answer: call again (what was erased stays erased).',
  }),
})
export type PersonalDataErased = Static<typeof PersonalDataErased>

/** A return, as ops and the floor record it: the letter as it is now, and its address's entry in the suppression list (null for `refused`, or an erased letter). */
export const ReturnedLetter = Type.Object({
  card: Card,
  suppressionId: Nullable(Type.String({ format: 'uuid' })),
})
export type ReturnedLetter = Static<typeof ReturnedLetter>

/** An account's suppression list as ops read it: the live one unless `mode` says test. */
export const SuppressionListQuery = Type.Object({ mode: Type.Optional(ModeQuery), ...pageQueryFields }, strict)
export type SuppressionListQuery = Static<typeof SuppressionListQuery>
export const SuppressionModeQuery = Type.Object({ mode: Type.Optional(ModeQuery) }, strict)
export const AccountSuppressionParams = Type.Object({ id: Uuid(), suppressionId: Uuid() })
