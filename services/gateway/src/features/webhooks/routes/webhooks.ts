import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  EVENT_ORDER_NOTE,
  NoBody,
  WebhookCreateBody,
  WebhookCreated,
  WebhookDeliveryList,
  WebhookDeliveryParams,
  WebhookDeliveryQuery,
  WebhookList,
  WebhookParams,
  WebhookRetryQueued,
  WebhookTestQueued,
  errorResponses,
  publicApi,
} from '@letters/contracts'
import { Type } from 'typebox'
import { createWebhook, deleteWebhook, listDeliveries, listWebhooks, retryDelivery, testWebhook } from '../webhooks.js'

/** Where a person signed in to the dashboard changes an endpoint: an owner only (a member sees them). */
const ownerOnly = { access: 'owner' } as const

/** Webhook endpoints (Standard Webhooks): registered, listed, deleted, tested, and their deliveries. */
const webhooks: FastifyPluginAsyncTypebox = async (app) => {
  const headers = publicApi.ApiKeyHeaders

  app.post(
    '/webhooks',
    {
      config: ownerOnly,
      schema: {
        summary: 'Register an endpoint that receives your letter events, signed (Standard Webhooks)',
        description:
          'Each event is POSTed as its body `{ id, type, sequence, occurredAt, timestamp, data }` (the schema of GET /events), signed with the secret shown once in the answer. ' +
          'The URL must be https (http only where the service allows it). ' +
          EVENT_ORDER_NOTE +
          ' Events that happen while no endpoint exists are not sent: GET /events lists them.',
        headers,
        body: WebhookCreateBody,
        response: { 201: WebhookCreated, ...errorResponses(400, 401, 413, 415, 429, 500, 503) },
      },
    },
    async (request, reply) => reply.code(201).send(await createWebhook(app.db, request.caller!, request.body, app.config.webhooks)),
  )

  app.get('/webhooks', { schema: { headers, response: { 200: WebhookList, ...errorResponses(401, 429, 500, 503) } } }, async (request) =>
    listWebhooks(app.db, request.caller!),
  )

  app.delete(
    '/webhooks/:id',
    {
      config: ownerOnly,
      schema: { headers, params: WebhookParams, body: NoBody, response: { 204: Type.Null(), ...errorResponses(400, 401, 404, 429, 500, 503) } },
    },
    async (request, reply) => {
      await deleteWebhook(app.db, request.caller!, request.params.id)
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/webhooks/:id/test',
    {
      config: ownerOnly,
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

  app.post(
    '/webhooks/:id/deliveries/:deliveryId/retry',
    {
      config: ownerOnly,
      schema: {
        summary: 'Send a delivery again: the same webhook-id and body, due now',
        description:
          '`deliveryId` is the `eventId` of the delivery’s attempts in GET /webhooks/{id}/deliveries (and its `webhook-id` header). ' +
          'The delivery is pending again and its next attempt is listed after the ones it had; a delivery waiting for its next attempt is brought forward. ' +
          'A delivery queued or being sent at this moment is a 409 (so is any delivery of a disabled endpoint): wait for its attempt in GET /webhooks/{id}/deliveries, then ask again if you still need to.',
        headers,
        params: WebhookDeliveryParams,
        body: NoBody,
        response: { 202: WebhookRetryQueued, ...errorResponses(400, 401, 404, 409, 415, 429, 500, 503) },
      },
    },
    async (request, reply) => reply.code(202).send(await retryDelivery(app.db, request.caller!, request.params.id, request.params.deliveryId)),
  )
}

export default webhooks
