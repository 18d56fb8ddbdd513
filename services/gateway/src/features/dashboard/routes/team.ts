import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { IdParams, NoBody, dashboard, errorResponses } from '@letters/contracts'
import { notFound } from '../../../common/errors.js'
import { accountApiKeys, issueApiKey, LISTED_PREFIX_LENGTH } from '../../accounts/index.js'
import { inviteAndSend } from '../invitations.js'
import { changeRole, listUsers, removeUser } from '../users.js'

const tags = ['Team']
/** People and keys are managed by an owner signed in to the dashboard, never with an API key. */
const config = { access: 'session-owner' } as const

/** The account's people and API keys, for its owners: the dashboard's "Equipo" and "Desarrolladores". */
const teamRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/users',
    {
      config,
      schema: {
        summary: "The account's dashboard users and their roles",
        tags,
        response: { 200: dashboard.TeamList, ...errorResponses(401, 403, 429, 500, 503) },
      },
    },
    async (request) => listUsers(app.db, request.caller!.accountId),
  )

  app.post(
    '/users',
    {
      config,
      schema: {
        summary: 'Invites a person: a one-time link valid for 72 hours, also emailed when the server has a mail server',
        tags,
        body: dashboard.InviteBody,
        response: { 201: dashboard.Invitation, ...errorResponses(400, 401, 403, 409, 413, 415, 429, 500, 503) },
      },
    },
    async (request, reply) => reply.status(201).send(await inviteAndSend(app, request.caller!.accountId, request.body, request.log)),
  )

  app.patch(
    '/users/:id',
    {
      config,
      schema: {
        summary: "Changes a user's role; the user's sessions end. The account keeps at least one owner",
        tags,
        params: IdParams,
        body: dashboard.ChangeRoleBody,
        response: { 200: dashboard.TeamUser, ...errorResponses(400, 401, 403, 404, 409, 413, 415, 429, 500, 503) },
      },
    },
    async (request) => changeRole(app.db, request.caller!.accountId, request.params.id, request.body.role),
  )

  app.delete(
    '/users/:id',
    {
      config,
      schema: {
        summary: 'Removes a user; their sessions end. The account keeps at least one owner',
        tags,
        params: IdParams,
        body: NoBody,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404, 409, 413, 415, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      await removeUser(app.db, request.caller!.accountId, request.params.id)
      return reply.status(204).send(null)
    },
  )

  app.get(
    '/api-keys',
    {
      config,
      schema: {
        summary: "The account's valid API keys, by their first 12 characters",
        tags,
        response: { 200: dashboard.AccountApiKeyList, ...errorResponses(401, 403, 429, 500, 503) },
      },
    },
    async (request) => accountApiKeys(app.db, request.caller!.accountId),
  )

  app.post(
    '/api-keys',
    {
      config,
      schema: {
        summary: 'Creates an API key, live or test; the key is in this answer only',
        tags,
        body: dashboard.CreateApiKeyBody,
        response: { 201: dashboard.CreatedAccountApiKey, ...errorResponses(400, 401, 403, 413, 415, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      const created = await issueApiKey(app.db, request.caller!.accountId, request.body.mode)
      await app.apiKeyAuth.issued(created.apiKey)
      return reply.status(201).send({ ...created, prefix: created.apiKey.slice(0, LISTED_PREFIX_LENGTH) })
    },
  )

  app.delete(
    '/api-keys/:id',
    {
      config,
      schema: {
        summary: 'Revokes an API key at once, on every replica',
        tags,
        params: IdParams,
        body: NoBody,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404, 413, 415, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      if (!(await app.apiKeyAuth.revoke(request.params.id, request.caller!.accountId))) throw notFound('La API key no existe')
      return reply.status(204).send(null)
    },
  )
}

export default teamRoutes
