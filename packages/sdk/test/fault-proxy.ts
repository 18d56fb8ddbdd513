import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export type Fault = 'forward' | '503' | '409-in-flight' | 'drop' | 'late'

/**
 * An HTTP server on 127.0.0.1 in front of a real gateway: each request is forwarded, answered
 * 503 with Retry-After, answered the gateway's 409 for a key still in flight (a state too short
 * to hit on purpose), has its socket destroyed (a network error), or is forwarded and its answer
 * held back for `lateMs` (a gateway that answers after the client gave up), as `plan` says for the nth
 * request; it records the Idempotency-Key of every request it saw.
 */
export async function faultProxy(target: string, plan: (n: number, request: IncomingMessage) => Fault, lateMs = 2000) {
  const seen: Array<{ method: string; url: string; idempotencyKey: string | undefined }> = []
  // A failed forward leaves the client without an answer, which is what the tests look for.
  const server = createServer((request: IncomingMessage, response: ServerResponse) => void handle(request, response))
  async function handle(request: IncomingMessage, response: ServerResponse) {
    const key = request.headers['idempotency-key']
    seen.push({ method: request.method!, url: request.url!, idempotencyKey: Array.isArray(key) ? key[0] : key })
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const fault = plan(seen.length, request)
    if (fault === 'drop') return request.socket.destroy()
    if (fault === '409-in-flight') {
      response.writeHead(409, { 'content-type': 'application/json' })
      return response.end(
        JSON.stringify({ error: 'Conflict', message: 'Una petición con esta Idempotency-Key todavía se está procesando; repítela en unos segundos' }),
      )
    }
    if (fault === '503') {
      response.writeHead(503, { 'content-type': 'application/json', 'retry-after': '0' })
      return response.end(JSON.stringify({ error: 'Service Unavailable', message: 'El servicio está saturado; inténtalo de nuevo' }))
    }
    const headers = Object.fromEntries(
      Object.entries(request.headers).filter(([name]) => name !== 'host' && name !== 'content-length' && name !== 'connection'),
    ) as Record<string, string>
    const answer = await fetch(`${target}${request.url}`, { method: request.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined })
    // Read once: a late answer is read before it is held back.
    const body = Buffer.from(await answer.arrayBuffer())
    if (fault === 'late') await new Promise((resolve) => setTimeout(resolve, lateMs))
    // The client may have given up meanwhile (its socket closed, and the response with it).
    if (response.destroyed || response.writableEnded) return
    response.writeHead(
      answer.status,
      Object.fromEntries([...answer.headers].filter(([name]) => name !== 'content-length' && name !== 'transfer-encoding' && name !== 'content-encoding')),
    )
    response.end(body)
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
