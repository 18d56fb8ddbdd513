import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { NoBody, errorResponses, publicApi } from '@letters/contracts'
import { PrintJournal } from '@letters/artifacts'
import { proofRateLimit } from '../proof-rate-limit.js'
import { cardStats, getCard, listCards } from '../cards.js'
import { cancelCard } from '../lifecycle.js'
import { cardProof, cardProofPage, proofPageKept } from '../proofs.js'

const cards: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/cards',
    {
      schema: {
        summary: 'List your letters, newest first (filter by status, campaign, creation dates or a search of the recipient; paginate with cursor)',
        tags: ['Letters'],
        headers: publicApi.ApiKeyHeaders,
        querystring: publicApi.CardListQuery,
        response: { 200: publicApi.CardList, ...errorResponses(400, 401, 429, 500, 503) },
      },
    },
    async (request) => listCards(app.db, request.caller!, request.query),
  )

  app.get(
    '/cards/stats',
    {
      schema: {
        summary: 'How many of your letters are in each status, of those created in a span (the last 30 days unless told)',
        tags: ['Letters'],
        headers: publicApi.ApiKeyHeaders,
        querystring: publicApi.CardStatsQuery,
        response: { 200: publicApi.CardStats, ...errorResponses(400, 401, 429, 500, 503) },
      },
    },
    async (request) => cardStats(app.db, request.caller!, request.query),
  )

  app.get(
    '/cards/:cardId',
    {
      schema: {
        summary: 'A letter with its status history',
        tags: ['Letters'],
        headers: publicApi.ApiKeyHeaders,
        params: publicApi.CardParams,
        response: { 200: publicApi.Card, ...errorResponses(400, 401, 404, 429, 500, 503) },
      },
    },
    async (request) => getCard(app.db, request.caller!, request.params.cardId),
  )

  app.get(
    '/cards/:cardId/proof',
    {
      schema: {
        summary:
          "The letter as it will be printed: a PDF of its pages (the card's front artwork when the floor prints it, the handwritten side, the envelope on its paper's colour)",
        tags: ['Letters'],
        headers: publicApi.ApiKeyHeaders,
        params: publicApi.CardParams,
        response: { 200: publicApi.Proof, ...errorResponses(400, 401, 404, 410, 429, 500, 503) },
      },
      config: { rateLimit: proofRateLimit(app.config) },
    },
    async (request, reply) => {
      const pdf = await cardProof(app, request.log, request.caller!, request.params.cardId)
      return reply
        .type('application/pdf')
        .header('content-disposition', `inline; filename="carta-${request.params.cardId}.pdf"`)
        .header('cache-control', 'private, no-cache')
        .send(pdf)
    },
  )

  app.get(
    '/cards/:cardId/proof.png',
    {
      schema: {
        summary: "One page of the letter's proof as a PNG thumbnail, at most 1,000 px wide (front artwork, handwriting, envelope, in the proof's order)",
        tags: ['Letters'],
        headers: publicApi.ApiKeyHeaders,
        params: publicApi.CardParams,
        querystring: publicApi.ProofPageQuery,
        response: { 200: publicApi.Png, ...errorResponses(400, 401, 404, 410, 429, 500, 503) },
      },
      config: {
        rateLimit: {
          ...proofRateLimit(app.config),
          // A page already kept is served without drawing anything: not counted.
          allowList: (request) => {
            const { params, query } = request as FastifyRequest<{ Params: { cardId: string }; Querystring: { page?: string } }>
            return proofPageKept(app.artifacts, params.cardId, Number(query.page ?? 1))
          },
        },
      },
    },
    async (request, reply) => {
      const png = await cardProofPage(app, request.log, request.caller!, request.params.cardId, request.query.page ?? 1)
      return reply.type('image/png').header('cache-control', 'private, no-cache').send(png)
    },
  )

  // Beyond the spec, as print-and-mail APIs do: a letter can be withdrawn until the floor takes it.
  app.delete(
    '/cards/:cardId',
    {
      schema: {
        summary: 'Cancel a letter the print floor has not taken yet, refunding its credits',
        tags: ['Letters'],
        headers: publicApi.ApiKeyHeaders,
        params: publicApi.CardParams,
        body: NoBody,
        response: { 200: publicApi.Card, ...errorResponses(400, 401, 404, 409, 429, 500, 503) },
      },
    },
    async (request) => cancelCard(app.db, new PrintJournal(app.artifacts), request.caller!, request.params.cardId),
  )
}

export default cards
