import { randomUUID } from 'node:crypto'
import { sql } from 'drizzle-orm'
import type { Config } from '@letters/config'
import { isAssignedCountry, isPostalCodeOf, publicApi, type FontName } from '@letters/contracts'
import { balance, chargeCtes } from '@letters/credits'
import type { Db, Executor, Recipient } from '@letters/db'
import { metrics } from '@letters/observability'
import { ApiError, badRequest } from '../errors.js'
import { assertWritable, checkedFont } from '../services/fonts.js'
import { assertOwnership, ownershipColumns } from '../services/ownership.js'
import { characterCount, fillTemplate } from '../services/templates.js'
import { holdIdempotencyKey, rememberResponse, requestFingerprint } from './idempotency.js'

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
  letterCosts: Config['letterCosts']
}

/** Everything the creation statement writes, once the request has been checked. */
interface LetterDraft {
  id: string
  accountId: string
  type: 'single' | 'campaign'
  campaignId: string | null
  cardDesignId: string
  envelopeDesignId: string
  senderId: string
  fontName: FontName
  message: string
  recipient: Recipient
  cost: number
}

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

async function draftLetter(ex: Executor, deps: CreationDeps, accountId: string, request: LetterRequest, recipient: Recipient): Promise<LetterDraft> {
  const common = { id: randomUUID(), accountId, recipient, cost: costOf(deps.letterCosts, recipient.country) }
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
  const campaign = await loadCampaign(ex, accountId, request.body.campaignId)
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
 * One statement, one round trip: checks that the designs and sender (or the campaign, still
 * active) are the account's, charges, stores the letter with its first event and queues its
 * address job in the outbox. Nothing but the checks happens when a check fails or the balance
 * is short.
 */
async function insertLetter(ex: Executor, draft: LetterDraft): Promise<void> {
  const campaignActive = draft.campaignId
    ? sql`EXISTS (SELECT 1 FROM campaigns WHERE id = ${draft.campaignId}::uuid AND account_id = ${draft.accountId}::uuid AND active)`
    : sql`TRUE`
  const [outcome] = await ex.execute<{ card_ok: boolean; envelope_ok: boolean; sender_ok: boolean; campaign_ok: boolean; letter_id: string | null }>(sql`
    WITH checks AS (
      SELECT ${ownershipColumns(draft.accountId, draft)}, ${campaignActive} AS campaign_ok
    ),
    ${chargeCtes(draft.accountId, draft.cost, draft.id, sql`(SELECT card_ok AND envelope_ok AND sender_ok AND campaign_ok FROM checks)`)},
    letter AS (
      INSERT INTO letters (id, account_id, type, campaign_id, card_design_id, envelope_design_id, sender_id, font_name, message, recipient, status, cost)
      SELECT ${draft.id}::uuid, moved.id, ${draft.type}, ${draft.campaignId}::uuid, ${draft.cardDesignId}::uuid, ${draft.envelopeDesignId}::uuid,
        ${draft.senderId}::uuid, ${draft.fontName}, ${draft.message}, ${JSON.stringify(draft.recipient)}::jsonb, 'received', ${draft.cost}::integer
      FROM moved
      RETURNING id
    ),
    first_event AS (
      INSERT INTO letter_events (letter_id, status, detail) SELECT id, 'received', NULL FROM letter
    ),
    address_job AS (
      INSERT INTO outbox (queue, job_name, payload) SELECT 'address', 'normalize-address', jsonb_build_object('letterId', id) FROM letter
    )
    SELECT checks.*, (SELECT id FROM letter) AS letter_id
    FROM checks`)
  if (!outcome) throw new Error('creation statement returned no row')
  assertOwnership(outcome)
  if (!outcome.campaign_ok) throw badRequest('La campaña no está activa')
  // The statement's snapshot predates the charges it waited for: read the balance afresh.
  if (!outcome.letter_id) throw paymentRequired(draft.cost, await balance(ex, draft.accountId))
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

/** Checks, drafts and stores a letter on `ex`: the pool, or the transaction that holds the Idempotency-Key. */
async function storeLetter(ex: Executor, deps: CreationDeps, accountId: string, request: LetterRequest, recipient: Recipient): Promise<LetterDraft> {
  const draft = await draftLetter(ex, deps, accountId, request, recipient)
  assertDrawable(draft)
  await insertLetter(ex, draft)
  // Counted when written, as refunds are (packages/credits): a rare rollback after it is counted too.
  metrics.lettersCreated.inc({ type: draft.type, country: draft.recipient.country })
  metrics.creditsCharged.inc(draft.cost)
  return draft
}

const created = (draft: LetterDraft): CreationResult => ({ status: 200, body: { success: true, cardId: draft.id }, replayed: false })

/**
 * The creation path of POST /single and POST /card: checks, idempotency, charge, letter,
 * ledger entry and outbox row. The only entry point. With an Idempotency-Key, all of it runs in
 * one transaction that holds the key until it commits, with the response stored; a request that
 * fails (400, 402, a crash) leaves the key free for the client's retry.
 */
export async function createLetter(
  deps: CreationDeps,
  accountId: string,
  request: LetterRequest,
  idempotencyKey?: string,
): Promise<CreationResult> {
  const recipient = checkedRecipient(request.body)
  if (idempotencyKey === undefined) return created(await storeLetter(deps.db, deps, accountId, request, recipient))
  const fingerprint = requestFingerprint(request.kind, request.body)
  const outcome = await deps.db.transaction(async (tx): Promise<{ replay: CreationResult } | { draft: LetterDraft }> => {
    const key = await holdIdempotencyKey(tx, accountId, idempotencyKey, fingerprint)
    if (key.outcome === 'replay') return { replay: { status: key.status, body: key.body as publicApi.LetterCreated, replayed: true } }
    const draft = await storeLetter(tx, deps, accountId, request, recipient)
    await rememberResponse(tx, accountId, idempotencyKey, fingerprint, 200, { success: true, cardId: draft.id })
    return { draft }
  })
  return 'replay' in outcome ? outcome.replay : created(outcome.draft)
}
