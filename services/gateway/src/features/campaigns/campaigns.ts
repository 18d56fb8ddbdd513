import { and, asc, eq, inArray, sql } from 'drizzle-orm'
import { trackingUrlProblem, type admin, type CampaignVariable } from '@letters/contracts'
import { campaignVariables, campaigns, type Db, type Executor } from '@letters/db'
import { badRequest, notFound } from '../../common/errors.js'
import { accountNotFound, findAccount } from '../accounts/index.js'
import { assertOwnedDesigns, assertWritable, letterHand, type LetterHand } from '../designs/index.js'
import { assertSenderWritableIn } from '../senders/index.js'
import { characterCount, fillTemplate, literalText, placeholdersOf } from './templates.js'

export const campaignNotFound = () => notFound('La campaña no existe')
const campaignColumns = { id: campaigns.id, name: campaigns.name, active: campaigns.active, trackingUrl: campaigns.trackingUrl }

/** A tracking URL template filled in: its values URL-encoded, so that none adds a path, a parameter or a host. */
export const fillTrackingUrl = (template: string, values: ReadonlyMap<string, string>) => fillTemplate(template, values, encodeURIComponent)

/** What a letter takes from its campaign: designs, sender, font, ink, template and variables. */
export type CampaignForLetter = Pick<
  typeof campaigns.$inferSelect,
  'id' | 'active' | 'cardDesignId' | 'envelopeDesignId' | 'senderId' | 'signatureId' | 'fontName' | 'inkColor' | 'message' | 'trackingUrl'
> & {
  variables: Array<Omit<CampaignVariable, 'example'>>
  /** The hand its letters are written in now: for an account font, the latest version of its file. */
  hand: LetterHand
}

/**
 * The campaign a letter is made in, with its variables, in one round trip; only the account's
 * own, and only an active one (else 400, naming the field).
 */
export async function loadCampaign(ex: Executor, accountId: string, campaignId: string): Promise<CampaignForLetter> {
  const [campaign] = await ex
    .select({
      id: campaigns.id,
      active: campaigns.active,
      cardDesignId: campaigns.cardDesignId,
      envelopeDesignId: campaigns.envelopeDesignId,
      senderId: campaigns.senderId,
      signatureId: campaigns.signatureId,
      fontName: campaigns.fontName,
      inkColor: campaigns.inkColor,
      message: campaigns.message,
      trackingUrl: campaigns.trackingUrl,
      variables: sql<
        CampaignForLetter['variables']
      >`COALESCE(json_agg(json_build_object('name', ${campaignVariables.name}, 'maxSize', ${campaignVariables.maxSize},
        'defaultValue', ${campaignVariables.defaultValue}) ORDER BY ${campaignVariables.position}) FILTER (WHERE ${campaignVariables.name} IS NOT NULL), '[]')`,
    })
    .from(campaigns)
    .leftJoin(campaignVariables, eq(campaignVariables.campaignId, campaigns.id))
    .where(and(eq(campaigns.id, campaignId), eq(campaigns.accountId, accountId)))
    .groupBy(campaigns.id)
  if (!campaign) throw badRequest("El campo 'campaignId' no corresponde a ninguna campaña de la cuenta")
  if (!campaign.active) throw badRequest('La campaña no está activa')
  const hand = await letterHand(ex, accountId, campaign.fontName)
  await assertSenderWritableIn(ex, accountId, campaign.senderId, hand)
  return { ...campaign, hand }
}

/** The rules a campaign's variables and template must follow beyond their JSON shape. */
function assertCoherentTemplate(body: admin.CreateCampaignBody, font: LetterHand): void {
  // Every letter of the campaign would carry the template's text: its font must be able to write it.
  assertWritable(font, "El campo 'message'", literalText(body.message))
  const declared = new Set<string>()
  body.variables.forEach((variable, index) => {
    if (declared.has(variable.name)) throw badRequest(`La variable '${variable.name}' está declarada dos veces`)
    declared.add(variable.name)
    if (variable.defaultValue !== null && characterCount(variable.defaultValue) > variable.maxSize) {
      throw badRequest(`El campo 'variables[${index}].defaultValue' supera el máximo de ${variable.maxSize} caracteres de la variable`)
    }
    if (characterCount(variable.example) > variable.maxSize) {
      throw badRequest(`El campo 'variables[${index}].example' supera el máximo de ${variable.maxSize} caracteres de la variable`)
    }
    assertWritable(font, `El campo 'variables[${index}].defaultValue'`, variable.defaultValue)
  })
  for (const name of placeholdersOf(body.message)) {
    if (!declared.has(name)) throw badRequest(`El mensaje usa la variable '{{${name}}}', que no está declarada en 'variables'`)
  }
  if (body.trackingUrl != null) {
    // A value is URL-encoded, which keeps it inside a path or a parameter, not inside a host: the
    // host must be written out before the first placeholder.
    const first = body.trackingUrl.indexOf('{{')
    if (first !== -1 && !/^https:\/\/[^/?#{}\\]+[/?#]/i.test(body.trackingUrl.slice(0, first))) {
      throw badRequest(
        "El campo 'trackingUrl' solo admite variables después del dominio, en la ruta o en los parámetros (por ejemplo https://tienda.example.com/gracias?cupon={{cupon}})",
      )
    }
    for (const name of placeholdersOf(body.trackingUrl)) {
      if (!declared.has(name)) throw badRequest(`El campo 'trackingUrl' usa la variable '{{${name}}}', que no está declarada en 'variables'`)
    }
    // Filled with the variables' examples, it must be a URL a letter could carry.
    const examples = new Map(body.variables.map((variable) => [variable.name, variable.example]))
    const problem = trackingUrlProblem("El campo 'trackingUrl', con los ejemplos de sus variables,", fillTrackingUrl(body.trackingUrl, examples))
    if (problem) throw badRequest(problem)
  }
}

export async function createCampaign(db: Executor, accountId: string, body: admin.CreateCampaignBody): Promise<admin.Campaign> {
  if (!(await findAccount(db, accountId))) throw accountNotFound()
  const hand = await letterHand(db, accountId, body.fontName)
  assertCoherentTemplate(body, hand)
  // Each of its letters would sign with the sender's name in the campaign's hand.
  await assertSenderWritableIn(db, accountId, body.senderId, hand)
  await assertOwnedDesigns(db, accountId, body)
  return db.transaction(async (tx) => {
    const [campaign] = await tx
      .insert(campaigns)
      .values({
        accountId,
        name: body.name,
        active: body.active ?? true,
        cardDesignId: body.cardDesignId,
        envelopeDesignId: body.envelopeDesignId,
        senderId: body.senderId,
        signatureId: body.signatureId ?? null,
        fontName: body.fontName ?? null,
        inkColor: body.inkColor ?? null,
        message: body.message,
        trackingUrl: body.trackingUrl ?? null,
      })
      .returning(campaignColumns)
    if (!campaign) throw new Error('campaign insert returned nothing')
    if (body.variables.length > 0) {
      await tx.insert(campaignVariables).values(body.variables.map((variable, position) => ({ campaignId: campaign.id, position, ...variable })))
    }
    return { ...campaign, variables: body.variables }
  })
}

export async function updateCampaign(db: Db, id: string, changes: admin.UpdateCampaignBody): Promise<admin.Campaign> {
  const [updated] = await db
    .update(campaigns)
    .set({ ...changes, updatedAt: new Date() })
    .where(eq(campaigns.id, id))
    .returning(campaignColumns)
  if (!updated) throw campaignNotFound()
  const variables = await variablesOf(db, [id])
  return { ...updated, variables: variables.get(id) ?? [] }
}

/** The declared variables of each campaign, in declaration order. */
export async function variablesOf(ex: Executor, campaignIds: string[]): Promise<Map<string, admin.Campaign['variables']>> {
  if (campaignIds.length === 0) return new Map()
  const rows = await ex
    .select()
    .from(campaignVariables)
    .where(inArray(campaignVariables.campaignId, campaignIds))
    .orderBy(asc(campaignVariables.campaignId), asc(campaignVariables.position))
  const byCampaign = new Map<string, admin.Campaign['variables']>(campaignIds.map((id) => [id, []]))
  for (const { campaignId, name, maxSize, defaultValue, example } of rows) {
    byCampaign.get(campaignId)?.push({ name, maxSize, defaultValue, example })
  }
  return byCampaign
}

/** The account's active campaigns with their variables, oldest first. */
export async function activeCampaigns(ex: Executor, accountId: string) {
  const rows = await ex
    .select({ id: campaigns.id, name: campaigns.name })
    .from(campaigns)
    .where(and(eq(campaigns.accountId, accountId), eq(campaigns.active, true)))
    .orderBy(asc(campaigns.createdAt), asc(campaigns.id))
  const variables = await variablesOf(
    ex,
    rows.map((row) => row.id),
  )
  return { campaigns: rows.map((row) => ({ ...row, variables: variables.get(row.id) ?? [] })) }
}
