import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { errorResponses, publicApi } from '@letters/contracts'
import { createLetter, type CreationContext, type CreationResult } from '../create-letter.js'
import { singleLetterPreview } from '../preview.js'
import { proofRateLimit } from '../proof-rate-limit.js'

/** The headers of every creation: the key, and an optional Idempotency-Key. */
export const creationHeaders = Type.Object({ ...publicApi.ApiKeyHeaders.properties, ...publicApi.IdempotencyHeaders.properties })
const response = { 200: publicApi.LetterCreated, ...errorResponses(400, 401, 402, 409, 413, 415, 422, 429, 500, 503) }

/** What a creation request brings beside its body: its Idempotency-Key and its deadline. */
export const creationContext = (request: FastifyRequest & { headers: { 'idempotency-key'?: string } }): CreationContext => ({
  idempotencyKey: request.headers['idempotency-key'],
  deadline: request.deadline,
})

/** A creation's answer, marked when it is the replay of an earlier one. */
export function sendCreation(reply: FastifyReply, result: CreationResult<unknown>) {
  // Answered already, at the request's deadline: this outcome came too late to be told.
  if (reply.sent) return reply
  if (result.replayed) reply.header('idempotent-replayed', 'true')
  return reply.status(result.status).send(result.body)
}

const letters: FastifyPluginAsyncTypebox = async (app) => {
  const deps = { db: app.db, intake: app.intake, letterCosts: app.config.letterCosts }

  app.post(
    '/single',
    {
      // The intake never writes an order abandoned at its deadline: a 503 then is true.
      config: { honorsDeadline: true },
      schema: {
        summary: 'Send a single letter, outside any campaign',
        tags: ['Letters'],
        headers: creationHeaders,
        body: publicApi.SingleLetterBody,
        response,
      },
    },
    async (request, reply) => sendCreation(reply, await createLetter(deps, request.caller!, { kind: 'single', body: request.body }, creationContext(request))),
  )

  app.post(
    '/single/preview',
    {
      // Drawn like a proof, and limited like one. Nothing is written: a 503 at the deadline is true.
      config: { honorsDeadline: true, rateLimit: proofRateLimit(app.config) },
      schema: {
        summary:
          "Preview a single letter: the handwritten side of its card as the floor will print it, as a PNG at most 1,000 px wide. Takes POST /single's body and refuses it as POST /single would; charges and stores nothing (an Idempotency-Key is ignored)",
        tags: ['Letters'],
        headers: creationHeaders,
        body: publicApi.SingleLetterBody,
        response: { 200: publicApi.Png, ...errorResponses(400, 401, 413, 415, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      const png = await singleLetterPreview(app, request.caller!, request.body)
      // Answered already, at the request's deadline.
      if (reply.sent) return reply
      return reply.type('image/png').header('cache-control', 'no-store').send(png)
    },
  )

  app.post(
    '/card',
    {
      // The intake never writes an order abandoned at its deadline: a 503 then is true.
      config: { honorsDeadline: true },
      schema: {
        summary: 'Send a letter of one of your active campaigns, filling in its variables',
        tags: ['Letters'],
        headers: creationHeaders,
        body: publicApi.CampaignLetterBody,
        response,
      },
    },
    async (request, reply) =>
      sendCreation(reply, await createLetter(deps, request.caller!, { kind: 'campaign', body: request.body }, creationContext(request))),
  )
}

export default letters
