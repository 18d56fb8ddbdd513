import { publicApi, trackingUrlProblem } from '@letters/contracts'
import type { LetterDraft } from '@letters/intake'
import { ApiError, badRequest, reasonPhrase } from '../../common/errors.js'
import type { KeyScope } from '../../common/caller.js'
import { loadCampaign, type CampaignForLetter } from '../campaigns/index.js'
import { assertOwnedDesigns } from '../designs/index.js'
import { refuseSuppressed, withSuppressionKey } from '../returns/index.js'
import { RequestProblems, spanishValidatorCompiler } from '../../common/validation.js'
import { csvRecipients, parseCsv } from './bulk-csv.js'
import {
  answerOf,
  campaignLetterDraft,
  earlierAnswer,
  submitOrder,
  type CreationContext,
  type CreationDeps,
  type CreationResult,
  type KeyedRequest,
  type RequestChoices,
} from './create-letter.js'
import { requestFingerprint } from './idempotency.js'
import { checkedSendAt, queryDateTime } from './send-at.js'

/** A JSON body as Fastify let it through: its envelope checked, each recipient still to be. */
export type BulkEnvelope = Omit<publicApi.BulkLetterBody, 'recipients'> & { recipients: unknown[] }

export type BulkRequest =
  { kind: 'json'; body: BulkEnvelope; query: publicApi.BulkLetterQuery } | { kind: 'csv'; text: string; query: publicApi.BulkLetterQuery }

type BulkCreated = publicApi.BulkLettersCreated

/** The same checks, in the same Spanish, as a POST /card body gets for its recipient fields. */
const recipientValidator = spanishValidatorCompiler({ schema: publicApi.BulkRecipient, httpPart: 'body', method: 'POST', url: '/cards/bulk' })

function checkedInput(input: unknown): publicApi.BulkRecipient {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) throw badRequest('Cada destinatario debe ser un objeto JSON')
  const result = recipientValidator(input) as { value: unknown } | { error: Error }
  if ('error' in result) throw result.error
  return result.value as publicApi.BulkRecipient
}

/** One recipient as a letter, or the 400 a POST /card with it would get. */
function draftOrRefusal(deps: CreationDeps, campaign: CampaignForLetter, shared: RequestChoices, input: unknown): LetterDraft | ApiError {
  try {
    return campaignLetterDraft(deps.letterCosts, campaign, checkedInput(input), shared)
  } catch (error) {
    if (error instanceof ApiError) return error
    throw error
  }
}

/** A request without recipients, as the client wrote it: a JSON body (whose envelope the route checks with this message too) or a CSV. */
export const noRecipients = {
  json: `El campo 'recipients' debe ser una lista de 1 a ${publicApi.BULK_MAX_RECIPIENTS} destinatarios`,
  csv: `El CSV no tiene destinatarios: tras la cabecera debe haber de 1 a ${publicApi.BULK_MAX_RECIPIENTS} filas`,
}

/** `count` undefined: more than the limit, how many more not counted (a CSV is read no further). */
function assertRecipientCount(kind: BulkRequest['kind'], count: number | undefined): void {
  if (count === undefined || count > publicApi.BULK_MAX_RECIPIENTS) {
    const brought = count === undefined ? `más de ${publicApi.BULK_MAX_RECIPIENTS}` : String(count)
    throw new ApiError(
      413,
      `Una petición admite como máximo ${publicApi.BULK_MAX_RECIPIENTS} destinatarios y esta trae ${brought}; repártelos en varias peticiones`,
    )
  }
  if (count === 0) throw badRequest(noRecipients[kind])
}

/**
 * Every recipient of the request as a letter or as its refusal, in the request's order, all
 * with the request's sendAt. What is wrong with the request as a whole (the count, sendAt, the
 * campaign, the CSV or its header) throws one ApiError for all of it.
 */
async function bulkLetters(deps: CreationDeps, accountId: string, request: BulkRequest): Promise<Array<LetterDraft | ApiError>> {
  if (request.kind === 'json') {
    const given = Object.keys(request.query)
      .filter((name) => name !== 'dryRun')
      .map((name) => `'${name}'`)
    if (given.length > 0) throw badRequest(`Con un cuerpo JSON, ${given.join(' y ')} ${given.length === 1 ? 'va' : 'van'} en el cuerpo, no en la URL`)
    assertRecipientCount('json', request.body.recipients.length)
    // The request's own fields, both named at once when both are wrong.
    const problems = new RequestProblems()
    const sharedUrlProblem = request.body.trackingUrl == null ? undefined : trackingUrlProblem("El campo 'trackingUrl'", request.body.trackingUrl)
    if (sharedUrlProblem) problems.add('trackingUrl', sharedUrlProblem)
    const sendAt = problems.check('sendAt', () => checkedSendAt(request.body.sendAt)) ?? null
    problems.throwIfAny()
    const shared = {
      sendAt,
      signatureId: request.body.signatureId,
      inkColor: request.body.inkColor,
      trackingUrl: request.body.trackingUrl,
    }
    const campaign = await loadCampaign(deps.db, accountId, request.body.campaignId)
    return request.body.recipients.map((input) => draftOrRefusal(deps, campaign, shared, input))
  }
  if (request.query.campaignId === undefined) throw badRequest("El parámetro 'campaignId' es obligatorio al enviar un CSV")
  const table = parseCsv(request.text)
  assertRecipientCount('csv', table.overLimit ? undefined : table.rows.length)
  const shared = { sendAt: checkedSendAt(queryDateTime(request.query.sendAt)), signatureId: request.query.signatureId, inkColor: request.query.inkColor }
  const campaign = await loadCampaign(deps.db, accountId, request.query.campaignId)
  return csvRecipients(table, campaign).map((row) => ('error' in row ? row.error : draftOrRefusal(deps, campaign, shared, row.input)))
}

/** Whether each recipient may go to an address on the suppression list: its own say, else the request's. */
function ignoresSuppression(request: BulkRequest, count: number): boolean[] {
  if (request.kind === 'csv') return Array<boolean>(count).fill(request.query.ignoreSuppression === 'true')
  const shared = request.body.ignoreSuppression === true
  return request.body.recipients.map((input) => {
    const own = input !== null && typeof input === 'object' ? (input as { ignoreSuppression?: unknown }).ignoreSuppression : undefined
    return typeof own === 'boolean' ? own : shared
  })
}

/** What an Idempotency-Key binds: the JSON body whatever the order of its keys, or the CSV as sent with its query. */
function fingerprintOf(request: BulkRequest): string {
  return request.kind === 'json' ? requestFingerprint('bulk', request.body) : requestFingerprint('bulk-csv', { query: request.query, csv: request.text })
}

/**
 * POST /cards/bulk: one campaign, up to 1,000 recipients, each checked as a POST /card would
 * check it. The valid ones become letters of ONE order of the intake: charged and stored in one
 * transaction (one ledger entry each), all or nothing; a balance that cannot pay for all of them
 * is a 402 and nothing is created. The invalid ones are listed in `errors`, with a null card id.
 * With an Idempotency-Key, the 200 answer is kept and replayed as for a single letter; a request
 * that creates nothing stores nothing under its key. A test key's letters are checked the same
 * way and stored uncharged.
 */
export async function createBulk(
  deps: CreationDeps,
  requester: KeyScope,
  request: BulkRequest,
  { idempotencyKey, deadline }: CreationContext = {},
): Promise<CreationResult<BulkCreated>> {
  const { accountId } = requester
  // A dry run keeps nothing, and answers nothing kept: its Idempotency-Key, if any, is not read.
  const dryRun = request.query.dryRun === 'true'
  const keyed: KeyedRequest | undefined = idempotencyKey === undefined || dryRun ? undefined : { key: idempotencyKey, fingerprint: fingerprintOf(request) }
  let letters: Array<LetterDraft | ApiError>
  try {
    letters = await bulkLetters(deps, accountId, request)
    const ignores = ignoresSuppression(request, letters.length)
    // Listed here, each as its recipient's refusal; the intake checks the rest again as it stores them.
    letters = await refuseSuppressed(
      deps.db,
      requester,
      letters.map((letter, n) => (letter instanceof ApiError ? letter : withSuppressionKey(accountId, letter, ignores[n]!))),
    )
  } catch (error) {
    const earlier = error instanceof ApiError ? await earlierAnswer(deps.db, requester, keyed) : undefined
    if (earlier) return answerOf(earlier, [])
    throw error
  }

  const drafts = letters.filter((letter): letter is LetterDraft => !(letter instanceof ApiError))
  const body: BulkCreated = {
    created: drafts.length,
    cost: drafts.reduce((sum, draft) => sum + draft.cost, 0),
    cardIds: letters.map((letter) => (letter instanceof ApiError || dryRun ? null : letter.id)),
    errors: letters.flatMap((letter, index) =>
      letter instanceof ApiError ? [{ index, error: reasonPhrase(letter.statusCode), message: letter.message }] : [],
    ),
  }
  if (dryRun) {
    // What the intake would refuse of the whole order, but for the balance: a signature of another account.
    const [first] = drafts
    if (first) await assertOwnedDesigns(deps.db, accountId, first)
    return { status: 200, body, replayed: false }
  }
  if (drafts.length === 0) {
    // Nothing to charge nor to keep under the key; a retry of a request answered before (when
    // its recipients were valid) still gets that answer.
    const earlier = await earlierAnswer(deps.db, requester, keyed)
    if (earlier) return answerOf(earlier, [])
    return { status: 200, body, replayed: false }
  }
  const outcome = await submitOrder(deps.intake, {
    accountId,
    livemode: requester.livemode,
    letters: drafts,
    idempotency: keyed && { ...keyed, response: { status: 200, body } },
    deadline,
  })
  if (outcome.outcome === 'stored') return { status: 200, body, replayed: false }
  return answerOf(outcome, drafts)
}
