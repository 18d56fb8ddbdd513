import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { IdParams, admin, errorResponses } from '@letters/contracts'
import { createCampaign, updateCampaign } from '../campaigns.js'

const campaigns: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/accounts/:id/campaigns',
    {
      schema: { params: IdParams, body: admin.CreateCampaignBody, response: { 201: admin.Campaign, ...errorResponses(400, 401, 404, 415, 500) } },
    },
    async (request, reply) => reply.status(201).send(await createCampaign(app.db, request.params.id, request.body)),
  )

  app.patch(
    '/campaigns/:id',
    {
      schema: { params: IdParams, body: admin.UpdateCampaignBody, response: { 200: admin.Campaign, ...errorResponses(400, 401, 404, 415, 500) } },
    },
    async (request) => updateCampaign(app.db, request.params.id, request.body),
  )
}

export default campaigns
