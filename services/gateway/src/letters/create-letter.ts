import { randomUUID } from 'node:crypto'
import { sql } from 'drizzle-orm'
import type { Config } from '@letters/config'
import { isAssignedCountry, isPostalCodeOf } from '@letters/address'
import { publicApi } from '@letters/contracts'
import type { Db, Executor, Recipient } from '@letters/db'
import { CommitUnknownError, KeyTakenMeanwhileError, answeredBefore, type LetterDraft, type LetterIntake, type UnstoredOutcome } from '@letters/intake'
import { ApiError, OutcomeUnknown, badRequest } from '../errors.js'
import type { KeyScope } from '../plugins/app/api-key-auth.js'
import { assertWritable, checkedFont } from '../services/fonts.js'
import { notOwned } from '../services/ownership.js'
import { characterCount, fillTemplate } from '../services/templates.js'
import { inFlight, keyReused, requestFingerprint } from './idempotency.js'
import { checkedSendAt } from './send-at.js'

export type LetterRequest =
  | { kind: 'single'; body: publicApi.SingleLetterBody }
  | { kind: 'campaign'; body: publicApi.CampaignLetterBody }

export interface CreationResult {
  status: number
  body: publicApi.LetterCreated
  /** True when the response is the stored one of an earlier request with the same Idempotency-Key. */
  replayed: boolean
}

export interface CreationDeps {
  db: Db
  intake: LetterIntake
  letterCosts: Config['letterCosts']
}


/**
 * Whether the letter was stored could not be found out (the database went away while committing
 * it): a 500, not a 503, since a blind retry could pay twice; its message says how to retry safely.
 */
const outcomeUnknown = (error: CommitUnknownError) =>
  new OutcomeUnknown('No se ha podido confirmar si la carta quedó guardada. Repite la petición solo con la misma Idempotency-Key: si se guardó, recibirás la misma respuesta sin nuevo cargo', error)

const paymentRequired = (cost: number, balance: number) =>
  new ApiError(402, `Créditos insuficientes: la carta cuesta ${cost} créditos y el saldo de la cuenta es ${balance}`)

function checkedRecipient(body: publicApi.SingleLetterBody | publicApi.CampaignLetterBody): Recipient {
  if (!isAssignedCountry(body.country)) {
    throw badRequest(`'country' debe ser un código ISO 3166-1 alfa-2 asignado; '${body.country}' no lo es`)
  }
  const country = body.country.toUpperCase()
  if (!isPostalCodeOf(body.zip, country)) {
    throw badRequest(`El campo 'zip' ('${body.zip}') no es un código postal válido para ${country}`)
  }
  return {
    name: body.name,
    surname: body.surname,
    company: body.company ?? null,
    address: body.address,
    zip: body.zip,
    city: body.city,
    province: body.province ?? null,
    country,
  }
}

function checkedMessage(message: string): string {
  if (characterCount(message) > publicApi.MESSAGE_MAX_CHARACTERS) {
    throw badRequest(`El mensaje no puede tener más de ${publicApi.MESSAGE_MAX_CHARACTERS} caracteres`)
  }
  return message
}

type CampaignForLetter = {
  id: string
  active: boolean
  card_design_id: string
  envelope_design_id: string
  sender_id: string
  font_name: string | null
  message: string
  variables: Array<{ name: string; maxSize: number; defaultValue: string | null }>
}

/** The campaign with its variables, in one round trip; only the account's own. */
async function loadCampaign(db: Executor, accountId: string, campaignId: string): Promise<CampaignForLetter> {
  const [campaign] = await db.execute<CampaignForLetter>(sql`
    SELECT c.id, c.active, c.card_design_id, c.envelope_design_id, c.sender_id, c.font_name, c.message,
      COALESCE(json_agg(json_build_object('name', v.name, 'maxSize', v.max_size, 'defaultValue', v.default_value) ORDER BY v.position)
        FILTER (WHERE v.name IS NOT NULL), '[]') AS variables
    FROM campaigns c LEFT JOIN campaign_variables v ON v.campaign_id = c.id
    WHERE c.id = ${campaignId}::uuid AND c.account_id = ${accountId}::uuid
    GROUP BY c.id`)
  if (!campaign) throw badRequest("El campo 'campaignId' no corresponde a ninguna campaña de la cuenta")
  if (!campaign.active) throw badRequest('La campaña no está activa')
  return campaign
}

/** The campaign's values for its variables: the client's, or the defaults. */
function campaignValues(campaign: CampaignForLetter, given: Record<string, string>): Record<string, string> {
  const declared = new Map(campaign.variables.map((variable) => [variable.name, variable]))
  for (const name of Object.keys(given)) {
    if (!declared.has(name)) {
      const names = campaign.variables.map((variable) => variable.name).join(', ') || 'ninguna'
      throw badRequest(`La variable '${name}' no existe en la campaña; sus variables son: ${names}`)
    }
  }
  const values: Record<string, string> = {}
  for (const variable of campaign.variables) {
    // Own keys only: a variable called "constructor" must not find Object.prototype's.
    const value = Object.hasOwn(given, variable.name) ? given[variable.name]! : variable.defaultValue
    if (value === null) throw badRequest(`Falta la variable '${variable.name}', que no tiene valor por defecto`)
    if (characterCount(value) > variable.maxSize) {
      throw badRequest(`La variable '${variable.name}' no puede tener más de ${variable.maxSize} caracteres`)
    }
    values[variable.name] = value
  }
  return values
}

function costOf(letterCosts: Config['letterCosts'], country: string): number {
  return letterCosts.byCountry[country] ?? letterCosts.otherwise
}

async function draftLetter(deps: CreationDeps, accountId: string, request: LetterRequest, recipient: Recipient): Promise<LetterDraft> {
  const common = { id: randomUUID(), recipient, cost: costOf(deps.letterCosts, recipient.country), sendAt: checkedSendAt(request.body.sendAt) }
  if (request.kind === 'single') {
    const { body } = request
    return {
      ...common,
      type: 'single',
      campaignId: null,
      cardDesignId: body.cardDesignId,
      envelopeDesignId: body.envelopeDesignId,
      senderId: body.senderId,
      fontName: checkedFont(body.fontName),
      message: checkedMessage(body.message ?? ''),
    }
  }
  const campaign = await loadCampaign(deps.db, accountId, request.body.campaignId)
  const message = fillTemplate(campaign.message, campaignValues(campaign, request.body.variables ?? {}))
  return {
    ...common,
    type: 'campaign',
    campaignId: campaign.id,
    cardDesignId: campaign.card_design_id,
    envelopeDesignId: campaign.envelope_design_id,
    senderId: campaign.sender_id,
    fontName: checkedFont(campaign.font_name),
    message: checkedMessage(message),
  }
}

/**
 * Everything the floor writes on the card and the envelope is drawn in the letter's font: text
 * it cannot write is refused before anything is charged.
 */
function assertDrawable(draft: LetterDraft): void {
  const { recipient } = draft
  assertWritable(draft.fontName, draft.type === 'campaign' ? 'El mensaje de la campaña, con sus variables,' : "El campo 'message'", draft.message)
  for (const field of ['name', 'surname', 'company', 'address', 'zip', 'city', 'province'] as const) assertWritable(draft.fontName, `El campo '${field}'`, recipient[field])
}

/** The answer of an order the intake did not store, as the client sees it. */
function refusal(outcome: Exclude<UnstoredOutcome, { outcome: 'replay' }>): ApiError {
  switch (outcome.outcome) {
    case 'unpaid':
      return paymentRequired(outcome.cost, outcome.balance)
    case 'not-owned':
      return notOwned(outcome.field)
    case 'campaign-inactive':
      return badRequest('La campaña no está activa')
    case 'key-in-flight':
      return inFlight()
    case 'key-reused':
      return keyReused()
    case 'no-account':
      return new ApiError(401, 'La API key no corresponde a ninguna cuenta')
  }
}

/**
 * The creation path of POST /single and POST /card: checks, then the intake (idempotency,
 * charge, letter, ledger entry and outbox row, stored together with the letters of the other
 * requests arriving meanwhile). The only entry point. A request that fails (400, 402, a crash)
 * leaves its Idempotency-Key free for the client's retry. A test key's letter is checked the
 * same way and stored uncharged.
 */
export async function createLetter(
  deps: CreationDeps,
  requester: KeyScope,
  request: LetterRequest,
  idempotencyKey?: string,
): Promise<CreationResult> {
  const { accountId } = requester
  const recipient = checkedRecipient(request.body)
  const fingerprint = idempotencyKey === undefined ? undefined : requestFingerprint(request.kind, request.body)
  let draft: LetterDraft
  try {
    draft = await draftLetter(deps, accountId, request, recipient)
    assertDrawable(draft)
  } catch (error) {
    // A retry of a request answered before gets that answer, even if what it named changed since.
    const earlier = fingerprint === undefined || !(error instanceof ApiError) ? undefined : await answeredBefore(deps.db, requester, idempotencyKey!, fingerprint)
    if (earlier) return answerOf(earlier)
    throw error
  }
  const body: publicApi.LetterCreated = { success: true, cardId: draft.id }
  const outcome = await deps.intake
    .submit({
      accountId,
      livemode: requester.livemode,
      letters: [draft],
      idempotency: fingerprint === undefined ? undefined : { key: idempotencyKey!, fingerprint, response: { status: 200, body } },
    })
    .catch((error: unknown) => {
      // An older replica claimed the key while this request was being stored: nothing was.
      if (error instanceof KeyTakenMeanwhileError) throw inFlight()
      if (error instanceof CommitUnknownError) throw outcomeUnknown(error)
      throw error
    })
  if (outcome.outcome === 'stored') return { status: 200, body, replayed: false }
  return answerOf(outcome)
}

function answerOf(outcome: UnstoredOutcome): CreationResult {
  if (outcome.outcome === 'replay') return { status: outcome.status, body: outcome.body as publicApi.LetterCreated, replayed: true }
  throw refusal(outcome)
}
