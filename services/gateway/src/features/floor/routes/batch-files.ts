import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errorResponses, floor } from '@letters/contracts'
import { batchFile } from '../floor.js'

const batchFiles: FastifyPluginAsyncTypebox = async (app) => {
  // The three files of a batch handed to the printer, to print again or check by hand.
  app.get(
    '/batches/:id/files/:kind',
    { schema: { params: floor.BatchFileParams, response: { 200: floor.BatchFile, ...errorResponses(401, 404, 429, 500) } } },
    async (request, reply) => {
      const file = await batchFile(app.db, app.artifacts, request.params.id, request.params.kind)
      return reply.type(file.mediaType).header('content-disposition', `attachment; filename="${file.name}"`).send(file.data)
    },
  )
}

export default batchFiles
