import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { CampaignStats, Uuid, errorResponses, publicApi } from '@letters/contracts'
import { activeCampaigns } from '../campaigns.js'
import { campaignStats } from '../stats.js'
import { readErrors } from '../../../common/route-parts.js'

const headers = publicApi.ApiKeyHeaders
const tags = ['Catalog']

const campaigns: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/campaigns',
    { schema: { summary: 'Your active campaigns and the variables each one takes', tags, headers, response: { 200: publicApi.CampaignList, ...readErrors } } },
    async (request) => activeCampaigns(app.db, request.caller!.accountId),
  )

  app.get(
    '/campaigns/:campaignId/stats',
    {
      schema: {
        summary: 'How the letters of one of your campaigns fared: sent, handed to the post, returned, with a QR code, scanned',
        description:
          'Counts the campaign’s letters of the key’s mode (a test key, its test letters) that were not cancelled, rejected for their address nor failed. ' +
          '`scanRate` is the share of the letters handed to the post whose QR code was scanned at least once. Any of your campaigns, active or not.',
        tags,
        headers,
        params: Type.Object({ campaignId: Uuid("El parámetro 'campaignId' debe ser el id de una campaña (un UUID)") }),
        response: { 200: CampaignStats, ...errorResponses(400, 401, 404, 429, 500, 503) },
      },
    },
    async (request) => campaignStats(app.db, request.caller!, request.params.campaignId),
  )
}

export default campaigns
