import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import { Type } from 'typebox'
import { errorResponses, publicApi } from '@letters/contracts'
import { createLetter, type CreationResult } from '../../letters/create-letter.js'

/** The headers of every creation: the key, and an optional Idempotency-Key. */
export const creationHeaders = Type.Object({ ...publicApi.ApiKeyHeaders.properties, ...publicApi.IdempotencyHeaders.properties })
const response = { 200: publicApi.LetterCreated, ...errorResponses(400, 401, 402, 409, 413, 415, 422, 429, 500, 503) }

/** A creation's answer, marked when it is the replay of an earlier one. */
export function sendCreation(reply: FastifyReply, result: CreationResult<unknown>) {
  if (result.replayed) reply.header('idempotent-replayed', 'true')
  return reply.status(result.status).send(result.body)
}

const letters: FastifyPluginAsyncTypebox = async (app) => {
  const deps = { db: app.db, intake: app.intake, letterCosts: app.config.letterCosts }

  app.post(
    '/single',
    {
      schema: {
        summary: 'Send a single letter, outside any campaign',
        tags: ['Letters'],
        headers: creationHeaders,
        body: publicApi.SingleLetterBody,
        response,
      },
    },
    async (request, reply) =>
      sendCreation(reply, await createLetter(deps, request.caller!, { kind: 'single', body: request.body }, request.headers['idempotency-key'])),
  )

  app.post(
    '/card',
    {
      schema: {
        summary: 'Send a letter of one of your active campaigns, filling in its variables',
        tags: ['Letters'],
        headers: creationHeaders,
        body: publicApi.CampaignLetterBody,
        response,
      },
    },
    async (request, reply) =>
      sendCreation(reply, await createLetter(deps, request.caller!, { kind: 'campaign', body: request.body }, request.headers['idempotency-key'])),
  )
}

export default letters
