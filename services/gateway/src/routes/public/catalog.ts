import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errorResponses, publicApi } from '@letters/contracts'
import { activeCampaigns, companyData } from '../../services/catalog.js'
import { listEntries, type CompanyKind } from '../../services/company-data.js'
import { listFonts } from '../../services/fonts.js'

const readErrors = errorResponses(401, 429, 500, 503)
const headers = publicApi.ApiKeyHeaders
const tags = ['Catalog']

const catalog: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/company-data',
    {
      schema: {
        summary: 'Your card designs, envelope designs, senders and signatures, in one answer',
        tags,
        headers,
        response: { 200: publicApi.CompanyData, ...readErrors },
      },
    },
    async (request) => companyData(app.db, request.caller!.accountId),
  )

  app.get(
    '/campaigns',
    { schema: { summary: 'Your active campaigns and the variables each one takes', tags, headers, response: { 200: publicApi.CampaignList, ...readErrors } } },
    async (request) => activeCampaigns(app.db, request.caller!.accountId),
  )

  app.get(
    '/fonts',
    { schema: { summary: 'The handwriting fonts a letter can use', tags, headers, response: { 200: publicApi.FontList, ...readErrors } } },
    async () => listFonts(),
  )

  for (const kind of ['card-designs', 'envelope-designs', 'signatures', 'senders'] satisfies CompanyKind[]) {
    app.get(
      `/${kind}`,
      { schema: { summary: `Your ${kind.replace('-', ' ')}`, tags, headers, response: { 200: publicApi.NamedList, ...readErrors } } },
      async (request) => ({
        data: await listEntries(app.db, kind, request.caller!.accountId),
      }),
    )
  }
}

export default catalog
