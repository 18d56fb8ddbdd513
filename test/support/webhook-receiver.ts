import { once } from 'node:events'
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import { createServer as createTcpServer, type Socket } from 'node:net'
import { eq } from 'drizzle-orm'
import { Webhook } from 'standardwebhooks'
import { SQLSTATE, sqlState, webhookEndpoints, type Db } from '@letters/db'

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders
  body: string
  /** When it arrived (ms since the epoch). */
  at: number
  /** The body parsed, for assertions. */
  json: {
    type: string
    timestamp: string
    data: Record<string, unknown> & { id?: string; status?: string }
    /** A letter event's own (absent from a webhook.test). */
    id?: string
    sequence?: number
    occurredAt?: string
  }
}

/**
 * What the receiver does with the n-th request (0-based) it gets: answer with a status, or
 * never answer (a dead receiver, until the sender gives up).
 */
export type Answer = (request: number, received: ReceivedWebhook) => number | 'hang'

/** A real HTTP webhook receiver on 127.0.0.1, recording every request it gets. */
export async function startWebhookReceiver(answer: Answer = () => 204) {
  const received: ReceivedWebhook[] = []
  const hanging: ServerResponse[] = []
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const webhook = { headers: request.headers, body, at: Date.now(), json: JSON.parse(body) as ReceivedWebhook['json'] }
      const n = received.push(webhook) - 1
      const status = receiver.answer(n, webhook)
      if (status === 'hang') hanging.push(response)
      else response.writeHead(status, { 'content-type': 'text/plain' }).end('ok')
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  const receiver = {
    url: `http://127.0.0.1:${port}/webhooks`,
    received,
    answer,
    /** Checks a request's signature with the standardwebhooks package; returns the verified payload. */
    verify(secret: string, webhook: ReceivedWebhook) {
      return new Webhook(secret).verify(webhook.body, webhook.headers as Record<string, string>) as ReceivedWebhook['json']
    },
    async close() {
      for (const response of hanging) response.destroy()
      server.closeAllConnections()
      server.close()
      await once(server, 'close')
    },
  }
  return receiver
}

export type WebhookReceiver = Awaited<ReturnType<typeof startWebhookReceiver>>

/**
 * Removes the endpoints (every one, or an account's), and with them their events, once a test is
 * done with them. A worker may still be updating those events: its row locks and the cascade's
 * meet in the other order, and Postgres cancels one side as a deadlock, so the removal is tried again.
 */
export async function removeEndpoints(db: Db, accountId?: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await db.delete(webhookEndpoints).where(accountId === undefined ? undefined : eq(webhookEndpoints.accountId, accountId))
      return
    } catch (error) {
      if (sqlState(error) !== SQLSTATE.deadlockDetected || attempt >= 5) throw error
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt))
    }
  }
}

/**
 * Accepts every TCP connection and never answers on any: a receiver that hangs until the sender
 * gives up. `most`: the most connections it held at once; `accepted`: all it took.
 */
export async function startDeadReceiver() {
  let held = 0
  let most = 0
  let accepted = 0
  const sockets = new Set<Socket>()
  const server = createTcpServer((socket) => {
    sockets.add(socket)
    accepted++
    most = Math.max(most, ++held)
    socket.on('close', () => {
      sockets.delete(socket)
      held--
    })
    socket.on('error', () => {})
    // Read and drop what comes, or the socket would never see the sender hang up.
    socket.resume()
  }).listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`,
    get most() {
      return most
    },
    get accepted() {
      return accepted
    },
    close: async () => {
      for (const socket of sockets) socket.destroy()
      server.close()
      await once(server, 'close')
    },
  }
}
