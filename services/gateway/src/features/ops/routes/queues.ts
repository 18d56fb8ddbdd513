import { createBullBoard } from '@bull-board/api'
import { FastifyAdapter } from '@bull-board/fastify'
import type { FastifyPluginAsync } from 'fastify'
import { TestModeAwareAdapter } from '../test-mode-adapter.js'

export const QUEUES_DASHBOARD_PATH = '/ops/queues'

/**
 * A `<link>` of Bull Board's page to another host: its web fonts (Google Fonts). A stylesheet
 * holds back the page's scripts, so where that host cannot be reached the dashboard stayed on
 * "Loading" until the browser gave up on it. Without it the page's own font stack (system-ui
 * first) draws the text, and the page asks nothing of any host but this one.
 */
const OUTSIDE_LINK = /<link\b[^>]*\bhref="(?:https?:)?\/\/[^"]*"[^>]*>\s*/gi

/**
 * The queue dashboard (Bull Board) for ops: every queue with its waiting, active, delayed,
 * completed and failed jobs, a failed job's reason, and the retry button that runs it again.
 * Test mode's jobs are named apart. The shell puts it behind the admin token (its ops pages).
 */
const queues: FastifyPluginAsync = async (app) => {
  const board = new FastifyAdapter()
  board.setBasePath(QUEUES_DASHBOARD_PATH)
  createBullBoard({
    queues: Object.values(app.queues).map((queue) => new TestModeAwareAdapter(queue, app.db, app.log)),
    serverAdapter: board,
    options: { uiConfig: { boardTitle: 'Cartas: colas' } },
  })
  // Bull Board has no option for its page's links: the page is amended as it is sent, which
  // outlives an upgrade that renames its assets (a patch of node_modules would not).
  app.addHook('onSend', async (_request, reply, payload) =>
    typeof payload === 'string' && String(reply.getHeader('content-type')).startsWith('text/html') ? payload.replace(OUTSIDE_LINK, '') : payload,
  )
  await app.register(board.registerPlugin(), { prefix: QUEUES_DASHBOARD_PATH })
}

export default queues
