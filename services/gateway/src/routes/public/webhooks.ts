import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  NoBody,
  WebhookCreateBody,
  WebhookCreated,
  WebhookDeliveryList,
  WebhookDeliveryQuery,
  WebhookList,
  WebhookParams,
  WebhookTestQueued,
  errorResponses,
  publicApi,
} from '@letters/contracts'
import { Type } from 'typebox'
import { createWebhook, deleteWebhook, listDeliveries, listWebhooks, testWebhook } from '../../services/webhooks.js'

/** Webhook endpoints (Standard Webhooks): registered, listed, deleted, tested, and their deliveries. */
const webhooks: FastifyPluginAsyncTypebox = async (app) => {
  const headers = publicApi.ApiKeyHeaders

  app.post(
    '/webhooks',
    { schema: { headers, body: WebhookCreateBody, response: { 201: WebhookCreated, ...errorResponses(400, 401, 413, 415, 429, 500, 503) } } },
    async (request, reply) => reply.code(201).send(await createWebhook(app.db, request.caller!, request.body, app.config.webhooks.allowPrivateUrls)),
  )

  app.get('/webhooks', { schema: { headers, response: { 200: WebhookList, ...errorResponses(401, 429, 500, 503) } } }, async (request) =>
    listWebhooks(app.db, request.caller!),
  )

  app.delete(
    '/webhooks/:id',
    { schema: { headers, params: WebhookParams, body: NoBody, response: { 204: Type.Null(), ...errorResponses(400, 401, 404, 429, 500, 503) } } },
    async (request, reply) => {
      await deleteWebhook(app.db, request.caller!, request.params.id)
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/webhooks/:id/test',
    {
      schema: { headers, params: WebhookParams, body: NoBody, response: { 202: WebhookTestQueued, ...errorResponses(400, 401, 404, 409, 415, 429, 500, 503) } },
    },
    async (request, reply) => reply.code(202).send(await testWebhook(app.db, request.caller!, request.params.id)),
  )

  app.get(
    '/webhooks/:id/deliveries',
    {
      schema: {
        headers,
        params: WebhookParams,
        querystring: WebhookDeliveryQuery,
        response: { 200: WebhookDeliveryList, ...errorResponses(400, 401, 404, 429, 500, 503) },
      },
    },
    async (request) => listDeliveries(app.db, request.caller!, request.params.id, request.query),
  )
}

export default webhooks
