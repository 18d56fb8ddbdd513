import { randomUUID } from 'node:crypto'
import type { Config } from '@letters/config'
import { isAssignedCountry, isPostalCodeOf, padPostalCode } from '@letters/address'
import { DEFAULT_INK, publicApi, type InkColor } from '@letters/contracts'
import type { Db, Recipient } from '@letters/db'
import {
  CommitUnknownError,
  DeadlineExceededError,
  KeyTakenMeanwhileError,
  answeredBefore,
  type LetterDraft,
  type LetterIntake,
  type LetterOrder,
  type OrderDeadline,
  type OrderOutcome,
  type UnstoredOutcome,
} from '@letters/intake'
import { ApiError, OutcomeUnknown, Unavailable, badRequest } from '../../common/errors.js'
import { RequestProblems } from '../../common/validation.js'
import { DEADLINE_RETRY_AFTER_SECONDS, deadlinePassedMessage, outcomeUnknownMessage } from '../../common/deadline-messages.js'
import type { KeyScope } from '../../common/caller.js'
import { characterCount, fillTemplate, fillTrackingUrl, loadCampaign, type CampaignForLetter } from '../campaigns/index.js'
import { suppressedAddress, withSuppressionKey } from '../returns/index.js'
import { letterTracking } from './tracking.js'
import { assertSenderWritableIn } from '../senders/index.js'
import { assertWritable, letterHand, notOwned, type LetterHand } from '../designs/index.js'
import { inFlight, keyReused, requestFingerprint } from './idempotency.js'
import { checkedSendAt } from './send-at.js'

export type LetterRequest = { kind: 'single'; body: publicApi.SingleLetterBody } | { kind: 'campaign'; body: publicApi.CampaignLetterBody }

export interface CreationResult<Body = publicApi.LetterCreated> {
  status: number
  body: Body
  /** True when the response is the stored one of an earlier request with the same Idempotency-Key. */
  replayed: boolean
}

export interface CreationDeps {
  db: Db
  intake: LetterIntake
  letterCosts: Config['letterCosts']
}

/** What a creation request brings beside its body: its Idempotency-Key, and the time it has to be decided by. */
export interface CreationContext {
  idempotencyKey?: string
  deadline?: OrderDeadline
}

/** An Idempotency-Key and what it binds (see requestFingerprint). */
export interface KeyedRequest {
  key: string
  fingerprint: string
}

/** The commit's outcome could not be found out: a 500, not a 503, since a blind retry could pay twice. */
const outcomeUnknown = (error: CommitUnknownError, order: LetterOrder) =>
  new OutcomeUnknown(outcomeUnknownMessage(order.idempotency !== undefined, order.letters.length), error)

const paymentRequired = (letters: number, cost: number, balance: number) =>
  new ApiError(
    402,
    `Créditos insuficientes: ${letters === 1 ? `la carta cuesta ${cost} créditos` : `las ${letters} cartas cuestan ${cost} créditos`} y el saldo de la cuenta es ${balance}`,
  )

type RecipientInput = publicApi.SingleLetterBody | publicApi.BulkRecipient

/** The recipient, or undefined once its country or zip is noted among the problems. */
function checkedRecipient(input: RecipientInput, problems: RequestProblems): Recipient | undefined {
  if (!isAssignedCountry(input.country)) {
    problems.add('country', `'country' debe ser un código ISO 3166-1 alfa-2 asignado; '${input.country}' no lo es`)
    return undefined
  }
  const country = input.country.toUpperCase()
  const zip = padPostalCode(input.zip, country)
  if (!isPostalCodeOf(zip, country)) {
    // A code that needed padding had too few digits: most often a spreadsheet ate its leading zero.
    const hint = zip !== input.zip ? `; si empieza por 0, escríbelo entre comillas con sus ${zip.length} cifras` : ''
    problems.add('zip', `El campo 'zip' ('${input.zip}') no es un código postal válido para ${country}${hint}`)
    return undefined
  }
  return {
    name: input.name,
    surname: input.surname,
    company: input.company ?? null,
    address: input.address,
    zip: input.zip,
    city: input.city,
    province: input.province ?? null,
    country,
  }
}

/** The message, or undefined once its length is noted as a problem of `field`. */
function checkedMessage(message: string, field: string, problems: RequestProblems): string | undefined {
  if (characterCount(message) > publicApi.MESSAGE_MAX_CHARACTERS) {
    problems.add(field, `El mensaje no puede tener más de ${publicApi.MESSAGE_MAX_CHARACTERS} caracteres`)
    return undefined
  }
  return message
}

/**
 * The campaign's values for its variables: the client's, or the defaults; undefined once any is
 * noted among the problems (each variable's own). A Map: a variable may be called `__proto__`,
 * which a plain object would take for its prototype instead of keeping it.
 */
function campaignValues(campaign: CampaignForLetter, given: Record<string, string>, problems: RequestProblems): Map<string, string> | undefined {
  const declared = new Set(campaign.variables.map((variable) => variable.name))
  let complete = true
  const refuse = (name: string, message: string) => {
    problems.add(`variables.${name}`, message)
    complete = false
  }
  for (const name of Object.keys(given)) {
    if (!declared.has(name)) {
      const names = campaign.variables.map((variable) => variable.name).join(', ') || 'ninguna'
      refuse(name, `La variable '${name}' no existe en la campaña; sus variables son: ${names}`)
    }
  }
  const values = new Map<string, string>()
  for (const variable of campaign.variables) {
    // Own keys only: a variable called "constructor" must not find Object.prototype's.
    const value = Object.hasOwn(given, variable.name) ? given[variable.name]! : variable.defaultValue
    if (value === null) refuse(variable.name, `Falta la variable '${variable.name}', que no tiene valor por defecto`)
    else if (characterCount(value) > variable.maxSize)
      refuse(variable.name, `La variable '${variable.name}' no puede tener más de ${variable.maxSize} caracteres`)
    else values.set(variable.name, value)
  }
  return complete ? values : undefined
}

function costOf(letterCosts: Config['letterCosts'], country: string): number {
  return letterCosts.byCountry[country] ?? letterCosts.otherwise
}

/** The letter's message as a refusal names it: the field it comes from, and the sentence's subject. */
interface MessageText {
  field: string
  subject: string
  text: string | null | undefined
}

/**
 * Everything the floor writes on the card and the envelope is drawn in the letter's font: text
 * it cannot write is noted among the problems, each field on its own, before anything is charged.
 */
function checkDrawable(hand: LetterHand, message: MessageText, recipient: RecipientInput, problems: RequestProblems): void {
  problems.check(message.field, () => assertWritable(hand, message.subject, message.text))
  for (const field of ['name', 'surname', 'company', 'address', 'zip', 'city', 'province'] as const)
    problems.check(field, () => assertWritable(hand, `El campo '${field}'`, recipient[field]))
}

/** The draft's hand: its font's name, and for an account font the version of its file the letter keeps. */
const handFields = ({ fontName, fontId, fontVersion }: LetterHand) => ({ fontName, fontId, fontVersion })

/** The letter of a POST /single body, or undefined once what is wrong with it is noted among the problems. */
function singleLetterDraft(
  letterCosts: Config['letterCosts'],
  body: publicApi.SingleLetterBody,
  hand: LetterHand | undefined,
  problems: RequestProblems,
): LetterDraft | undefined {
  const recipient = checkedRecipient(body, problems)
  const message = checkedMessage(body.message ?? '', 'message', problems)
  const sendAt = problems.check('sendAt', () => checkedSendAt(body.sendAt))
  const tracking = problems.check('trackingUrl', () => letterTracking(body.trackingUrl))
  if (hand) checkDrawable(hand, { field: 'message', subject: "El campo 'message'", text: body.message }, body, problems)
  if (!hand || !recipient || message === undefined || sendAt === undefined || !tracking) return undefined
  return {
    id: randomUUID(),
    type: 'single',
    campaignId: null,
    cardDesignId: body.cardDesignId,
    envelopeDesignId: body.envelopeDesignId,
    senderId: body.senderId,
    signatureId: body.signatureId ?? null,
    ...handFields(hand),
    inkColor: body.inkColor ?? DEFAULT_INK,
    message,
    recipient,
    cost: costOf(letterCosts, recipient.country),
    sendAt,
    ...tracking,
    suppressionKey: null,
  }
}

/**
 * A POST /single body checked as everything but the intake checks it: its font (a hand the
 * account can use), its recipient, message, sendAt and trackingUrl, text the hand cannot write,
 * and the sender in an account font. Throws one 400 that names every problem found. The creation
 * and the preview (POST /single/preview) go through here, so a preview is refused exactly as its
 * letter would be.
 */
export async function checkedSingleLetter(
  deps: Pick<CreationDeps, 'db' | 'letterCosts'>,
  accountId: string,
  body: publicApi.SingleLetterBody,
): Promise<LetterDraft> {
  const problems = new RequestProblems()
  const hand = await problems.checkAsync('fontName', () => letterHand(deps.db, accountId, body.fontName))
  const draft = singleLetterDraft(deps.letterCosts, body, hand, problems)
  if (hand) await problems.checkAsync('senderId', () => assertSenderWritableIn(deps.db, accountId, body.senderId, hand))
  problems.throwIfAny()
  return draft!
}

/** What a campaign letter's request chooses for all its letters, over the campaign's own choices. */
export interface RequestChoices {
  /** When they enter production (checked: checkedSendAt); null: at once. */
  sendAt: Date | null
  /** Absent or null: the campaign's signature, if it has one. */
  signatureId?: string | null | undefined
  /** Absent or null: a recipient's own, else the campaign's, else blue. */
  inkColor?: InkColor | null | undefined
  /** Absent or null: a recipient's own, else the campaign's (its placeholders filled), else none. */
  trackingUrl?: string | null | undefined
}

/**
 * The one way a campaign and one recipient become a letter, for POST /card and for each recipient
 * of a bulk request: the recipient's address, the campaign's variables filled in, the font able
 * to write it all, the cost; `sendAt` is the request's, checked (checkedSendAt). Throws the one
 * 400 a POST /card with this recipient gets, naming every problem: those of the recipient and
 * any the request's own checks noted before in `problems`.
 */
export function campaignLetterDraft(
  letterCosts: Config['letterCosts'],
  campaign: CampaignForLetter,
  input: publicApi.BulkRecipient,
  request: RequestChoices,
  problems = new RequestProblems(),
): LetterDraft {
  const recipient = checkedRecipient(input, problems)
  const values = campaignValues(campaign, input.variables ?? {}, problems)
  const filled = values && fillTemplate(campaign.message, values)
  const message = filled === undefined ? undefined : checkedMessage(filled, 'variables', problems)
  const given = input.trackingUrl ?? request.trackingUrl
  const tracking =
    given != null
      ? problems.check('trackingUrl', () => letterTracking(given))
      : values &&
        problems.check('trackingUrl', () =>
          letterTracking(
            campaign.trackingUrl === null ? null : fillTrackingUrl(campaign.trackingUrl, values),
            "El 'trackingUrl' de la campaña, con sus variables,",
          ),
        )
  checkDrawable(campaign.hand, { field: 'variables', subject: 'El mensaje de la campaña, con sus variables,', text: filled }, input, problems)
  problems.throwIfAny()
  return {
    id: randomUUID(),
    type: 'campaign',
    campaignId: campaign.id,
    cardDesignId: campaign.cardDesignId,
    envelopeDesignId: campaign.envelopeDesignId,
    senderId: campaign.senderId,
    signatureId: request.signatureId ?? campaign.signatureId,
    ...handFields(campaign.hand),
    inkColor: input.inkColor ?? request.inkColor ?? campaign.inkColor ?? DEFAULT_INK,
    message: message!,
    recipient: recipient!,
    cost: costOf(letterCosts, recipient!.country),
    sendAt: request.sendAt,
    ...tracking!,
    suppressionKey: null,
  }
}

/** The answer of an order the intake did not store, as the client sees it; `letters` are the order's. */
function refusal(outcome: Exclude<UnstoredOutcome, { outcome: 'replay' }>, letters: readonly LetterDraft[]): ApiError {
  switch (outcome.outcome) {
    case 'unpaid':
      return paymentRequired(letters.length, outcome.cost, outcome.balance)
    case 'suppressed': {
      const letter = letters.find((draft) => draft.suppressionKey === outcome.key)
      return suppressedAddress(letter?.recipient, outcome.reason, outcome.since)
    }
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

/** A replay of the stored response, or the refusal of an order of these letters that wrote nothing (thrown). */
export function answerOf<Body>(outcome: UnstoredOutcome, letters: readonly LetterDraft[]): CreationResult<Body> {
  if (outcome.outcome === 'replay') return { status: outcome.status, body: outcome.body as Body, replayed: true }
  throw refusal(outcome, letters)
}

/**
 * The stored answer of the request's Idempotency-Key, read without its lock, for a request the
 * gateway answers without storing anything (a refusal that may depend on data changed since, a
 * campaign deactivated): a retry of a request answered before gets that answer, not a new one.
 */
export async function earlierAnswer(db: Db, requester: KeyScope, keyed: KeyedRequest | undefined): Promise<UnstoredOutcome | undefined> {
  return keyed && answeredBefore(db, requester, keyed.key, keyed.fingerprint)
}

/**
 * Charges and stores an order through the group commit (idempotency, charge, letters, ledger
 * entries and outbox rows, with the letters of the other requests arriving meanwhile), the
 * commit's own failures turned into what the client is told.
 */
export function submitOrder(intake: LetterIntake, order: LetterOrder): Promise<OrderOutcome> {
  return intake.submit(order).catch((error: unknown) => {
    // An older replica claimed the key while this request was being stored: nothing was.
    if (error instanceof KeyTakenMeanwhileError) throw inFlight()
    if (error instanceof CommitUnknownError) throw outcomeUnknown(error, order)
    // Its deadline came first (the deadline's timer, or a wait inside the intake that ran out
    // first on a busy machine): nothing was written, and nothing will be. Told as the timer tells it.
    if (error instanceof DeadlineExceededError) throw new Unavailable(deadlinePassedMessage, DEADLINE_RETRY_AFTER_SECONDS)
    throw error
  })
}

/**
 * The creation path of POST /single and POST /card: checks, then the intake. The only entry
 * point. A request that fails (400, 402, a crash) leaves its Idempotency-Key free for the
 * client's retry. A test key's letter is checked the same way and stored uncharged.
 */
export async function createLetter(
  deps: CreationDeps,
  requester: KeyScope,
  request: LetterRequest,
  { idempotencyKey, deadline }: CreationContext = {},
): Promise<CreationResult> {
  const keyed = idempotencyKey === undefined ? undefined : { key: idempotencyKey, fingerprint: requestFingerprint(request.kind, request.body) }
  const { accountId } = requester
  let draft: LetterDraft
  try {
    if (request.kind === 'single') {
      draft = await checkedSingleLetter(deps, accountId, request.body)
    } else {
      const problems = new RequestProblems()
      const sendAt = problems.check('sendAt', () => checkedSendAt(request.body.sendAt)) ?? null
      const campaign = await loadCampaign(deps.db, accountId, request.body.campaignId)
      draft = campaignLetterDraft(deps.letterCosts, campaign, request.body, { sendAt, signatureId: request.body.signatureId }, problems)
    }
    // The suppression list is read by the intake, with the designs: no round trip of its own.
    draft = withSuppressionKey(accountId, draft, request.body.ignoreSuppression === true)
  } catch (error) {
    // A retry of a request answered before gets that answer, even if what it named changed since.
    const earlier = error instanceof ApiError ? await earlierAnswer(deps.db, requester, keyed) : undefined
    if (earlier) return answerOf(earlier, [])
    throw error
  }
  const body: publicApi.LetterCreated = { success: true, cardId: draft.id }
  const outcome = await submitOrder(deps.intake, {
    accountId,
    livemode: requester.livemode,
    letters: [draft],
    idempotency: keyed && { ...keyed, response: { status: 200, body } },
    deadline,
  })
  if (outcome.outcome === 'stored') return { status: 200, body, replayed: false }
  return answerOf(outcome, [draft])
}
