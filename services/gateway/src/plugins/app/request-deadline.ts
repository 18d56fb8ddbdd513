import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { requestBudget } from '@letters/config'
import { OrderDeadline } from '@letters/intake'
import { OutcomeUnknown, Unavailable } from '../../common/errors.js'
import { DEADLINE_RETRY_AFTER_SECONDS, deadlinePassedMessage, outcomeUnknownMessage, requestDeadlineMessage } from '../../common/deadline-messages.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The time this request has to be decided and answered; a creation hands it to the intake with its order, an upload to writeByDeadline. */
    deadline: OrderDeadline
  }
  interface FastifyContextConfig {
    /**
     * The route's handler gives up on its work once `request.deadline` is abandoned (a creation:
     * the intake never writes an abandoned order; an upload: writeByDeadline never stores its
     * version), so a 503 at the deadline tells the truth.
     */
    honorsDeadline?: boolean
  }
}

interface Watch {
  /** One timer at a time: the time to decide, then the answer time (most requests end before the first). */
  timer: NodeJS.Timeout
  /** An answer is on its way (onSend ran): the timers have nothing more to say. */
  answering: boolean
}

/** How long a stopping gateway lets the requests under way finish before it answers them: well within its drain time. */
export const CLOSING_GRACE_MS = 3000

const watches = new WeakMap<FastifyRequest, Watch>()

/**
 * Whether a 503 ("nothing was done, retry") is true of a request given up on at its deadline:
 * a read, or a route whose work stops with its deadline. Any other write (an admin's credit
 * grant, a cancellation) may still commit after the answer: it is only told the outcome is
 * unknown, and only when the answer cannot wait any longer.
 */
const safeToRetry = (request: FastifyRequest) => request.method === 'GET' || request.method === 'HEAD' || request.routeOptions.config?.honorsDeadline === true

function answer(request: FastifyRequest, reply: FastifyReply, error: Unavailable | OutcomeUnknown): void {
  const watch = watches.get(request)
  // The response's own state: the request's stream is done (destroyed) as soon as its body was read.
  if (!watch || watch.answering || reply.sent || reply.raw.destroyed || reply.raw.writableEnded) return
  // A body still on its way: the server's request timeout answers it (408) and closes the connection.
  if (!request.raw.complete) return
  watch.answering = true
  request.log.warn({ status: error.statusCode, writing: request.deadline.writing }, 'request answered at its deadline')
  // Through the one error handler; sent from a timer, the reply (a thenable) is nobody's to await.
  void reply.send(error)
}

/** At the time to decide: a request safe to retry is abandoned and answered 503. */
function decide(request: FastifyRequest, reply: FastifyReply): void {
  if (!safeToRetry(request) || !request.deadline.abandon()) return
  answer(request, reply, new Unavailable(request.deadline.submitted ? deadlinePassedMessage : requestDeadlineMessage, DEADLINE_RETRY_AFTER_SECONDS))
}

/** Whether the request brought an Idempotency-Key to a route whose headers take one (a creation, which keeps its answer by it). */
function keyed(request: FastifyRequest): boolean {
  const headers = request.routeOptions.schema?.headers as { properties?: Record<string, unknown> } | undefined
  return headers?.properties?.['idempotency-key'] !== undefined && typeof request.headers['idempotency-key'] === 'string'
}

/** At the answer time: whatever is still unanswered is told its outcome is unknown. */
function giveUp(request: FastifyRequest, reply: FastifyReply): void {
  decide(request, reply)
  answer(request, reply, new OutcomeUnknown(outcomeUnknownMessage(keyed(request)), new Error('request unanswered at its answer time')))
}

/**
 * Every request gets an answer before its connection is cut (HTTP_REQUEST_TIMEOUT_MS, the
 * longest a request may take to arrive and the longest its socket may stay silent). The clock
 * starts when the request does, before authentication, whose lookups count too.
 *
 * By the time it has to be decided, a request that is safe to retry (a read, a creation, an
 * upload) and still unanswered is abandoned and answered 503 with Retry-After; one not yet being
 * written then is never written afterwards (its deadline is checked just before the write).
 * By the answer time, anything still unanswered (a write whose commit has not answered, a
 * write of another kind) is told its outcome is unknown, with how to find out. A client that
 * goes away abandons its request too.
 */
export default fp(
  async (app) => {
    const budget = requestBudget(app.config.http.requestTimeoutMs)
    app.decorateRequest('deadline', null as unknown as OrderDeadline)
    // A route that gives up on its work at the deadline fails once it finds out (its write
    // refused, its font read stopped): expected, after its 503, so logged as such, not as a fault.
    app.addHook('onRoute', (route) => {
      if (route.config?.honorsDeadline !== true) return
      const handler = route.handler
      route.handler = async function (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
        try {
          return await handler.call(this, request, reply)
        } catch (error) {
          if (!reply.sent) throw error
          request.log.info({ name: (error as Error).name }, 'request failed after its deadline answer')
          return reply
        }
      }
    })
    const live = new Map<FastifyRequest, FastifyReply>()
    app.addHook('onRequest', async (request, reply) => {
      const start = Date.now()
      request.deadline = new OrderDeadline(start + budget.decideWithinMs, start + budget.answerWithinMs)
      live.set(request, reply)
      // The connection closed before the answer was written: nobody is left to tell, so a
      // creation not yet being written is not written. (Fastify's onRequestAbort covers only a
      // request whose body had not arrived whole.)
      reply.raw.once('close', () => {
        if (!reply.raw.writableFinished) request.deadline.abandon()
      })
      const watch: Watch = {
        answering: false,
        timer: setTimeout(() => {
          decide(request, reply)
          // At the answer time itself, however late this one ran (an event loop stalled meanwhile).
          if (!watch.answering) watch.timer = setTimeout(() => giveUp(request, reply), Math.max(0, start + budget.answerWithinMs - Date.now()))
        }, budget.decideWithinMs),
      }
      watches.set(request, watch)
    })
    app.addHook('onSend', async (request) => {
      const watch = watches.get(request)
      if (!watch) return
      watch.answering = true
      clearTimeout(watch.timer)
    })
    const forget = (request: FastifyRequest) => {
      const watch = watches.get(request)
      if (watch) clearTimeout(watch.timer)
      watches.delete(request)
      live.delete(request)
    }
    app.addHook('onResponse', async (request) => forget(request))
    app.addHook('onRequestAbort', async (request) => {
      request.deadline?.abandon()
      forget(request)
    })
    // Stopping (SIGTERM): the requests under way get a few seconds to finish; those still
    // waiting then are answered now rather than cut when the process exits.
    app.addHook('preClose', async () => {
      const until = Date.now() + CLOSING_GRACE_MS
      while (live.size > 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50))
      for (const [request, reply] of live) giveUp(request, reply)
    })
  },
  { name: 'request-deadline', dependencies: ['config', 'error-handler'] },
)
