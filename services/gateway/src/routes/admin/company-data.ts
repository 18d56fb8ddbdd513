import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { IdParams, admin, errorResponses } from '@letters/contracts'
import { companyTables, createEntry, type CompanyKind } from '../../services/company-data.js'

/** POST /admin/accounts/{id}/card-designs, …/envelope-designs, …/senders, …/signatures. */
const companyData: FastifyPluginAsyncTypebox = async (app) => {
  for (const kind of Object.keys(companyTables) as CompanyKind[]) {
    app.post(
      `/accounts/:id/${kind}`,
      {
        schema: {
          params: IdParams,
          body: admin.NamedEntryBody,
          response: { 201: admin.NamedEntry, ...errorResponses(400, 401, 404, 415, 500) },
        },
      },
      async (request, reply) => reply.status(201).send(await createEntry(app.db, kind, request.params.id, request.body.name)),
    )
  }
}

export default companyData
