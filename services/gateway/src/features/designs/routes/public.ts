import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { CardDesign, EnvelopeDesign, errorResponses, publicApi } from '@letters/contracts'
import { notFound } from '../../../common/errors.js'
import { companyData } from '../catalog.js'
import { listEntries, type CompanyKind } from '../company-data.js'
import { artworkPreview, cardDesignPreview, findCardDesign, findEnvelopeDesign } from '../designs.js'
import { fontPreviewPng, listFonts } from '../fonts.js'
import { AnyIdParams, byIdErrors, findIfUuid, readErrors, sendPreview } from '../../../common/route-parts.js'

const headers = publicApi.ApiKeyHeaders
const tags = ['Catalog']

const designs: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/company-data',
    {
      schema: {
        summary: 'Your card designs, envelope designs, senders and signatures, in one answer',
        tags,
        headers,
        response: { 200: publicApi.CompanyData, ...readErrors },
      },
    },
    async (request) => companyData(app.db, request.caller!.accountId),
  )

  app.get(
    '/fonts',
    {
      schema: {
        summary: 'The handwriting fonts a letter can use: the built-in hands, then your own (own: true)',
        tags,
        headers,
        response: { 200: publicApi.FontList, ...readErrors },
      },
    },
    async (request) => listFonts(app.db, request.caller!.accountId),
  )

  app.get(
    '/fonts/:name/preview',
    {
      schema: {
        summary: 'A PNG of a Spanish sample sentence in one of the fonts you can use, at most 1,000 px wide',
        tags,
        headers,
        params: publicApi.FontParams,
        response: { 200: publicApi.Png, ...errorResponses(400, 401, 404, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      const png = await fontPreviewPng(app.db, request.caller!.accountId, request.params.name)
      // Another account's font is one this account cannot use: as unknown as a name never created.
      if (!png) throw notFound(`La fuente '${request.params.name}' no existe o aún no tiene archivo; GET /fonts lista las que puedes usar`)
      return sendPreview(reply, png)
    },
  )

  for (const kind of ['card-designs', 'envelope-designs'] satisfies CompanyKind[]) {
    app.get(
      `/${kind}`,
      { schema: { summary: `Your ${kind.replace('-', ' ')}`, tags, headers, response: { 200: publicApi.NamedList, ...readErrors } } },
      async (request) => ({
        data: await listEntries(app.db, kind, request.caller!.accountId),
      }),
    )
  }

  // An id that is not a UUID names no design: 404, like another account's.
  const designNotFound = () => notFound('El diseño no existe')

  app.get(
    '/card-designs/:id',
    {
      schema: {
        summary: 'One of your card designs: its format and size, how it is produced, its stock and its artwork',
        tags,
        headers,
        params: AnyIdParams,
        response: { 200: CardDesign, ...byIdErrors },
      },
    },
    async (request) =>
      (await findIfUuid(request.params.id, () => findCardDesign(app.db, request.caller!.accountId, request.params.id))) ?? Promise.reject(designNotFound()),
  )

  app.get(
    '/card-designs/:id/preview',
    {
      schema: {
        summary: "A PNG of the design's front, at most 1,000 px wide, to show your users when they pick a design",
        tags,
        headers,
        params: AnyIdParams,
        response: { 200: publicApi.Png, ...byIdErrors },
      },
    },
    async (request, reply) => {
      const png = await findIfUuid(request.params.id, () => cardDesignPreview(app.db, request.caller!.accountId, request.params.id))
      if (!png) throw designNotFound()
      return sendPreview(reply, png)
    },
  )

  app.get(
    '/envelope-designs/:id/preview',
    {
      schema: {
        summary: "A PNG of an envelope design's logo, at most 1,000 px wide",
        tags,
        headers,
        params: AnyIdParams,
        response: { 200: publicApi.Png, ...byIdErrors },
      },
    },
    async (request, reply) => {
      const png = await findIfUuid(request.params.id, () => artworkPreview(app.db, request.caller!.accountId, 'envelope-designs', request.params.id))
      if (!png) throw notFound('El diseño de sobre no existe o no tiene logotipo')
      return sendPreview(reply, png)
    },
  )

  app.get(
    '/envelope-designs/:id',
    {
      schema: {
        summary: 'One of your envelope designs: its format and size, stock, paper colour and logo',
        tags,
        headers,
        params: AnyIdParams,
        response: { 200: EnvelopeDesign, ...byIdErrors },
      },
    },
    async (request) =>
      (await findIfUuid(request.params.id, () => findEnvelopeDesign(app.db, request.caller!.accountId, request.params.id))) ?? Promise.reject(designNotFound()),
  )
}

export default designs
