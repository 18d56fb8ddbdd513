import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { IdParams, NoBody, admin, errorResponses } from '@letters/contracts'
import { notFound } from '../../../common/errors.js'
import { accountNotFound, addCredits, createAccount, findAccount, getAccount, listAccounts } from '../accounts.js'
import { findApiKeys, issueApiKey } from '../api-keys.js'

const accounts: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/accounts',
    { schema: { body: admin.CreateAccountBody, response: { 201: admin.CreatedAccount, ...errorResponses(400, 401, 404, 415, 500) } } },
    async (request, reply) => {
      const account = await createAccount(app.db, request.body)
      await app.apiKeyAuth.issued(account.apiKey)
      return reply.status(201).send(account)
    },
  )

  app.get(
    '/accounts',
    { schema: { querystring: admin.AccountListQuery, response: { 200: admin.AccountList, ...errorResponses(400, 401, 404, 500) } } },
    async (request) => listAccounts(app.db, request.query),
  )

  app.get('/accounts/:id', { schema: { params: IdParams, response: { 200: admin.Account, ...errorResponses(400, 401, 404, 500) } } }, async (request) =>
    getAccount(app.db, request.params.id),
  )

  app.post(
    '/accounts/:id/api-keys',
    { schema: { params: IdParams, body: admin.IssueApiKeyBody, response: { 201: admin.CreatedApiKey, ...errorResponses(400, 401, 404, 415, 500) } } },
    async (request, reply) => {
      if (!(await findAccount(app.db, request.params.id))) throw accountNotFound()
      const created = await issueApiKey(app.db, request.params.id, request.body?.mode)
      await app.apiKeyAuth.issued(created.apiKey)
      return reply.status(201).send(created)
    },
  )

  app.get(
    '/api-keys',
    { schema: { querystring: admin.ApiKeySearchQuery, response: { 200: admin.ApiKeySearch, ...errorResponses(400, 401, 404, 500) } } },
    async (request) => findApiKeys(app.db, request.query.prefix),
  )

  app.delete(
    '/api-keys/:id',
    { schema: { params: IdParams, body: NoBody, response: { 204: Type.Null(), ...errorResponses(400, 401, 404, 500) } } },
    async (request, reply) => {
      const revoked = await app.apiKeyAuth.revoke(request.params.id)
      if (!revoked) throw notFound('La API key no existe')
      return reply.status(204).send(null)
    },
  )

  app.post(
    '/accounts/:id/credits',
    { schema: { params: IdParams, body: admin.CreditsBody, response: { 200: admin.Balance, ...errorResponses(400, 401, 404, 409, 415, 500) } } },
    async (request) => addCredits(app.db, request.params.id, request.body.amount, request.body.reason),
  )
}

export default accounts
