import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { Signature, errorResponses, publicApi } from '@letters/contracts'
import { notFound } from '../../../common/errors.js'
import { findIfUuid } from '../../../common/ids.js'
import { artworkPreview, listEntries } from '../../designs/index.js'
import { findSignature } from '../signatures.js'

const readErrors = errorResponses(401, 429, 500, 503)
/** Reads of one thing by its id: an id holding a character no id has (a NUL) is refused with a 400 before the route. */
const byIdErrors = errorResponses(400, 401, 404, 429, 500, 503)
const headers = publicApi.ApiKeyHeaders
const tags = ['Catalog']
const params = Type.Object({ id: Type.String() })

const senders: FastifyPluginAsyncTypebox = async (app) => {
  for (const kind of ['signatures', 'senders'] as const) {
    app.get(`/${kind}`, { schema: { summary: `Your ${kind}`, tags, headers, response: { 200: publicApi.NamedList, ...readErrors } } }, async (request) => ({
      data: await listEntries(app.db, kind, request.caller!.accountId),
    }))
  }

  app.get(
    '/signatures/:id/preview',
    {
      schema: {
        summary: "A PNG of a signature's drawing, at most 1,000 px wide",
        tags,
        headers,
        params,
        response: { 200: publicApi.Png, ...byIdErrors },
      },
    },
    async (request, reply) => {
      const png = await findIfUuid(request.params.id, () => artworkPreview(app.db, request.caller!.accountId, 'signatures', request.params.id))
      if (!png) throw notFound('La firma no existe o no tiene dibujo')
      return reply.type('image/png').header('cache-control', 'private, max-age=60').send(png)
    },
  )

  app.get(
    '/signatures/:id',
    {
      schema: {
        summary: 'One of your signatures: its name, and its drawing when it has one',
        tags,
        headers,
        params,
        response: { 200: Signature, ...byIdErrors },
      },
    },
    async (request) =>
      (await findIfUuid(request.params.id, () => findSignature(app.db, request.caller!.accountId, request.params.id))) ??
      Promise.reject(notFound('La firma no existe')),
  )
}

export default senders
