import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { admin, errorResponses, floor, publicApi } from '@letters/contracts'
import { metrics } from '@letters/observability'
import { markMailed, markReturned, NotMailed, NotReturned } from '../../letters/index.js'

/** What the floor's scan counter calls each refusal (a test letter's code is unknown to the floor, so it never shows here). */
const scanOutcome = { unknown: 'unknown', test_letter: 'unknown', not_printed: 'not_printed', already_mailed: 'already_mailed' } as const

const scan: FastifyPluginAsyncTypebox = async (app) => {
  // The envelope leaves the floor: its code marks the letter mailed (markMailed, the one transition), and the letter is the answer.
  // JSON only (the gateway parses nothing else): another site's form cannot post here with the browser's Basic credentials.
  // And, should a form parser ever be added, the floor's guard refuses a change a browser says another site started (403).
  app.post(
    '/scan',
    {
      schema: { body: floor.ScanBody, response: { 200: publicApi.Card, ...errorResponses(400, 401, 403, 404, 409, 415, 429, 500) } },
    },
    async (request) => {
      try {
        const card = await markMailed(app.db, { code: request.body.code })
        metrics.floorScans.inc({ outcome: 'mailed' })
        return card
      } catch (error) {
        if (error instanceof NotMailed) metrics.floorScans.inc({ outcome: scanOutcome[error.refusal] })
        throw error
      }
    },
  )

  // A returned envelope comes back to the floor: its code and the reason marked on it make the letter returned.
  app.post(
    '/returned',
    {
      schema: { body: floor.ReturnScanBody, response: { 200: admin.ReturnedLetter, ...errorResponses(400, 401, 403, 404, 409, 415, 429, 500) } },
    },
    async (request) => {
      try {
        const returned = await markReturned(app.db, { code: request.body.code }, request.body.reason)
        metrics.floorScans.inc({ outcome: 'returned' })
        return returned
      } catch (error) {
        if (error instanceof NotReturned) metrics.floorScans.inc({ outcome: error.refusal })
        throw error
      }
    },
  )
}

export default scan
