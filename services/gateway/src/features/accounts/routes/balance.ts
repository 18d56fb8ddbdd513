import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { errorResponses, publicApi } from '@letters/contracts'
import { ApiError } from '../../../common/errors.js'
import { accountBalance, listMovements, movementsCsv } from '../balance.js'

const tags = ['Balance']

/** The ledger is the account's live money: a test key, which sees only test letters, does not read it. */
const liveOnly = async (request: FastifyRequest) => {
  if (request.caller && !request.caller.livemode) throw new ApiError(403, 'Una API key de prueba no ve el saldo ni sus movimientos; usa una clave live')
}
const headers = publicApi.ApiKeyHeaders

/** The account's credits: the balance, and every movement of the ledger that made it. */
const balance: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('preHandler', liveOnly)
  app.get(
    '/balance',
    {
      schema: {
        summary: "Your account's credits, and whether they are running low",
        tags,
        headers,
        response: { 200: publicApi.AccountBalance, ...errorResponses(401, 429, 500, 503) },
      },
    },
    async (request) => accountBalance(app.db, request.caller!.accountId, app.config.letterCosts),
  )

  app.get(
    '/balance/movements',
    {
      schema: {
        summary: 'The movements of your credits, newest first: letters charged and refunded, top-ups, adjustments',
        tags,
        headers,
        querystring: publicApi.LedgerMovementQuery,
        response: { 200: publicApi.LedgerMovementList, ...errorResponses(400, 401, 429, 500, 503) },
      },
    },
    async (request) => listMovements(app.db, request.caller!.accountId, request.query),
  )

  app.get(
    '/balance/movements.csv',
    {
      schema: {
        summary: 'The movements as a CSV file for a spreadsheet (UTF-8 with BOM), newest first, at most 100,000',
        tags,
        headers,
        response: { 200: publicApi.Csv, ...errorResponses(401, 429, 500, 503) },
      },
    },
    async (request, reply) =>
      reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', 'attachment; filename="movimientos.csv"')
        .header('cache-control', 'private, no-store')
        .send(await movementsCsv(app.db, request.caller!.accountId)),
  )
}

export default balance
