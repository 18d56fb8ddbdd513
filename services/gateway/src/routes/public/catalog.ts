import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errorResponses, publicApi } from '@letters/contracts'
import { activeCampaigns, companyData } from '../../services/catalog.js'
import { listEntries, type CompanyKind } from '../../services/company-data.js'
import { listFonts } from '../../services/fonts.js'

const readErrors = errorResponses(401, 429, 500, 503)
const headers = publicApi.ApiKeyHeaders

const catalog: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/company-data', { schema: { headers, response: { 200: publicApi.CompanyData, ...readErrors } } }, async (request) =>
    companyData(app.db, request.caller!.accountId),
  )

  app.get('/campaigns', { schema: { headers, response: { 200: publicApi.CampaignList, ...readErrors } } }, async (request) =>
    activeCampaigns(app.db, request.caller!.accountId),
  )

  app.get('/fonts', { schema: { headers, response: { 200: publicApi.FontList, ...readErrors } } }, async () => listFonts())

  for (const kind of ['card-designs', 'envelope-designs', 'signatures', 'senders'] satisfies CompanyKind[]) {
    app.get(`/${kind}`, { schema: { headers, response: { 200: publicApi.NamedList, ...readErrors } } }, async (request) => ({
      data: await listEntries(app.db, kind, request.caller!.accountId),
    }))
  }
}

export default catalog
