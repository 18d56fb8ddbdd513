import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Signature, publicApi } from '@letters/contracts'
import { notFound } from '../../../common/errors.js'
import { artworkPreview, listEntries } from '../../designs/index.js'
import { findSignature } from '../signatures.js'
import { AnyIdParams, byIdErrors, findIfUuid, readErrors, sendPreview } from '../../../common/route-parts.js'

const headers = publicApi.ApiKeyHeaders
const tags = ['Catalog']

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
        params: AnyIdParams,
        response: { 200: publicApi.Png, ...byIdErrors },
      },
    },
    async (request, reply) => {
      const png = await findIfUuid(request.params.id, () => artworkPreview(app.db, request.caller!.accountId, 'signatures', request.params.id))
      if (!png) throw notFound('La firma no existe o no tiene dibujo')
      return sendPreview(reply, png)
    },
  )

  app.get(
    '/signatures/:id',
    {
      schema: {
        summary: 'One of your signatures: its name, and its drawing when it has one',
        tags,
        headers,
        params: AnyIdParams,
        response: { 200: Signature, ...byIdErrors },
      },
    },
    async (request) =>
      (await findIfUuid(request.params.id, () => findSignature(app.db, request.caller!.accountId, request.params.id))) ??
      Promise.reject(notFound('La firma no existe')),
  )
}

export default senders
