import { Type, type Static } from 'typebox'
import { CampaignVariable } from './campaign-variables.js'
import { Label, Mode, NamedEntry, Page, Uuid, pageQueryFields, strict } from './common.js'
import { FontNameField } from './fonts.js'
import { Card as PublicCard, letterStatus } from './public.js'

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

export const CreateCampaignBody = Type.Object(
  {
    name: Label(),
    active: Type.Optional(Type.Boolean()),
    cardDesignId: Uuid(),
    envelopeDesignId: Uuid(),
    senderId: Uuid(),
    fontName: FontNameField,
    message: Type.String({ minLength: 1, maxLength: 1000 }),
    variables: Type.Array(CampaignVariable, { maxItems: 50 }),
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
})
export type Campaign = Static<typeof Campaign>

/** A letter as ops see it: the client's view (GET /cards/{id}) and the account it belongs to. */
export const Card = Type.Object({ accountId: Type.String({ format: 'uuid' }), ...PublicCard.properties })
export type Card = Static<typeof Card>

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
