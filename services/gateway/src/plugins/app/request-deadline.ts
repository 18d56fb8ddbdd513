import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { requestBudget } from '@letters/config'
import { OrderDeadline } from '@letters/intake'
import { reasonPhrase } from '../../errors.js'
import { DEADLINE_RETRY_AFTER_SECONDS, deadlinePassedMessage, outcomeUnknownMessage, requestDeadlineMessage } from '../../letters/deadline.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The time this request has to be decided and answered; a creation hands it to the intake with its order. */
    deadline: OrderDeadline
  }
}

interface Watch {
  timers: NodeJS.Timeout[]
  /** An answer is on its way (onSend ran): the timers have nothing more to say. */
  answering: boolean
}

/** How long a stopping gateway lets the requests under way finish before it answers them 503: well within its drain time. */
const CLOSING_GRACE_MS = 3000

const watches = new WeakMap<FastifyRequest, Watch>()

function answer(request: FastifyRequest, reply: FastifyReply, status: 500 | 503, message: string): void {
  if (watches.get(request)?.answering || reply.sent || request.raw.destroyed) return
  if (status === 503) reply.header('retry-after', String(DEADLINE_RETRY_AFTER_SECONDS))
  request.log.warn({ status, writing: request.deadline.writing }, 'request answered at its deadline')
  // Sent from a timer: the reply object (a thenable) is nobody's to await.
  void reply.status(status).send({ error: reasonPhrase(status), message, requestId: request.id })
}

/**
 * Every request gets an answer before its connection, idle while the request is worked on, is
 * cut (HTTP_REQUEST_TIMEOUT_MS after its last byte arrived). By the time it has to be decided, a
 * request still unanswered is abandoned and answered 503 with Retry-After, so a creation not yet
 * being written is never written afterwards (the intake checks its deadline before it writes). A
 * creation being written at that moment gets the commit's outcome; should even that not come by
 * the answer time, the client is told the outcome is unknown and how to retry safely.
 *
 * The clock starts once the body has arrived: a body still on its way is Node's to time out (408).
 */
export default fp(
  async (app) => {
    const budget = requestBudget(app.config.http.requestTimeoutMs)
    app.decorateRequest('deadline', null as unknown as OrderDeadline)
    const live = new Map<FastifyRequest, FastifyReply>()
    app.addHook('preValidation', async (request, reply) => {
      live.set(request, reply)
      const start = Date.now()
      request.deadline = new OrderDeadline(start + budget.decideWithinMs, start + budget.answerWithinMs)
      const watch: Watch = { answering: false, timers: [] }
      watches.set(request, watch)
      watch.timers.push(
        setTimeout(() => {
          if (!watch.answering && request.deadline.abandon())
            answer(request, reply, 503, request.deadline.submitted ? deadlinePassedMessage : requestDeadlineMessage)
        }, budget.decideWithinMs),
        setTimeout(() => answer(request, reply, 500, outcomeUnknownMessage()), budget.answerWithinMs),
      )
    })
    app.addHook('onSend', async (request) => {
      const watch = watches.get(request)
      if (!watch) return
      watch.answering = true
      for (const timer of watch.timers) clearTimeout(timer)
    })
    const forget = async (request: FastifyRequest) => {
      for (const timer of watches.get(request)?.timers ?? []) clearTimeout(timer)
      watches.delete(request)
      live.delete(request)
    }
    app.addHook('onResponse', forget)
    app.addHook('onRequestAbort', forget)
    // Stopping (SIGTERM): the requests under way get a few seconds to finish; those still waiting
    // then are answered 503 rather than cut when the process exits, and the creations among them
    // not being written are never written.
    app.addHook('preClose', async () => {
      const until = Date.now() + CLOSING_GRACE_MS
      while (live.size > 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50))
      for (const [request, reply] of live)
        if (request.deadline.abandon()) answer(request, reply, 503, request.deadline.submitted ? deadlinePassedMessage : requestDeadlineMessage)
    })
  },
  { name: 'request-deadline', dependencies: ['config'] },
)
