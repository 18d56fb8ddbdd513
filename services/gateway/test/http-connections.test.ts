import { connect, type Socket } from 'node:net'
import { describe, expect } from 'vitest'
import { it as base } from '@letters/test/support/fixtures'
import { singleLetter } from './helpers.js'
import { moneyState } from '@letters/test/support/ledger'
import { until } from '@letters/test/support/wait'

const MAX_CONNECTIONS = 50
const HEADERS_TIMEOUT_MS = 1000
const REQUEST_TIMEOUT_MS = 2000
const KEEP_ALIVE_TIMEOUT_MS = 1000

/** The gateway listening on a real port, for raw sockets. */
const it = base.extend('port', { scope: 'file' }, async ({ gateway }) => {
  await gateway.listen({ host: '127.0.0.1', port: 0 })
  return (gateway.server.address() as { port: number }).port
})

it.override({
  gatewayOptions: {
    env: {
      HTTP_MAX_CONNECTIONS: String(MAX_CONNECTIONS),
      HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      HTTP_KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_TIMEOUT_MS),
    },
  },
  accountCredits: 10,
})

/** A raw client socket that remembers what the server sent and when the server closed it. */
interface Watched {
  socket: Socket
  received: string
  closedAt: number | undefined
}

function open(port: number): Promise<Watched> {
  return new Promise((resolve, reject) => {
    const watched: Watched = { socket: connect(port, '127.0.0.1'), received: '', closedAt: undefined }
    watched.socket.setEncoding('utf8')
    watched.socket.on('data', (chunk: string) => (watched.received += chunk))
    watched.socket.on('error', () => {})
    watched.socket.on('close', () => (watched.closedAt = Date.now()))
    watched.socket.once('connect', () => resolve(watched))
    watched.socket.once('error', reject)
  })
}

/** Status line and JSON body of a raw HTTP response. */
function parseResponse(raw: string) {
  const [head = '', body = ''] = raw.split('\r\n\r\n')
  return { statusLine: head.split('\r\n')[0], body: body ? (JSON.parse(body) as Record<string, unknown>) : undefined }
}

describe('HTTP connection limits', () => {
  it('refuses sockets past HTTP_MAX_CONNECTIONS, closes idle ones after the headers timeout with a 408, then serves /readyz again', async ({ port }) => {
    const sockets: Watched[] = []
    try {
      // All at once: their connects go out in one turn of this process's event loop (it is the
      // server's too), so the server finds them all waiting and accepts fifty of them before any
      // can reach the headers timeout. Opened one after another as slowly as a loaded machine
      // opens them, the first ones timed out before the last were opened and freed places for
      // them: eight of the thirty past the maximum were served.
      sockets.push(...(await Promise.all(Array.from({ length: MAX_CONNECTIONS + 30 }, () => open(port)))))

      // The server drops every socket itself: those beyond the maximum at once, the others once
      // they have sent nothing for the headers timeout. The ceiling is for a loaded machine.
      await until('every socket closed', () => sockets.every((s) => s.closedAt !== undefined), { timeoutMs: 60_000, everyMs: 25 })
      expect(sockets.filter((s) => s.closedAt === undefined)).toHaveLength(0)
      const beyond = sockets.filter((s) => s.received === '')
      const accepted = sockets.filter((s) => s.received !== '')

      // The 30 beyond the maximum are closed with nothing written to them, and before any
      // accepted one: they were not kept until a timeout.
      expect(beyond).toHaveLength(30)
      expect(Math.max(...beyond.map((s) => s.closedAt!))).toBeLessThanOrEqual(Math.min(...accepted.map((s) => s.closedAt!)))

      // The accepted ones sent nothing: the server drops them itself, each told why.
      expect(accepted).toHaveLength(MAX_CONNECTIONS)
      for (const socket of accepted) {
        const { statusLine, body } = parseResponse(socket.received)
        expect(statusLine).toBe('HTTP/1.1 408 Request Timeout')
        expect(body).toEqual({
          error: 'Request Timeout',
          message: 'La petición no ha llegado completa a tiempo; la conexión se cierra',
          requestId: expect.any(String),
        })
      }

      const ready = await fetch(`http://127.0.0.1:${port}/readyz`)
      expect(ready.status).toBe(200)
      expect(await ready.json()).toEqual({ status: 'ready' })
    } finally {
      for (const { socket } of sockets) socket.destroy()
    }
  }, 120_000)

  it('answers a body sent too slowly with 408 in the error shape within the request timeout, and charges nothing', async ({ gateway: app, port, account }) => {
    const body = JSON.stringify(singleLetter(account))
    const watched = await open(port)
    const startedAt = Date.now()
    watched.socket.write(
      `POST /single HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-KEY: ${account.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
    )
    // One byte every 100 ms: the body would take half a minute to arrive.
    let sent = 0
    const drip = setInterval(() => {
      if (watched.socket.writable && sent < body.length - 1) watched.socket.write(body[sent++]!)
    }, 100)
    try {
      await until('the slow request’s socket closed', () => watched.closedAt !== undefined, { timeoutMs: REQUEST_TIMEOUT_MS + 10_000, everyMs: 25 })
    } finally {
      clearInterval(drip)
      watched.socket.destroy()
    }
    expect(watched.closedAt, 'the server kept the slow request open').toBeDefined()
    // The request timeout, plus Node's check interval (1 s here) and room for a loaded machine.
    expect(watched.closedAt! - startedAt).toBeLessThan(REQUEST_TIMEOUT_MS + 1000 + 3000)
    const { statusLine, body: error } = parseResponse(watched.received)
    expect(statusLine).toBe('HTTP/1.1 408 Request Timeout')
    expect(error).toEqual({
      error: 'Request Timeout',
      message: 'La petición no ha llegado completa a tiempo; la conexión se cierra',
      requestId: expect.any(String),
    })

    const state = await moneyState(app.db, account.id)
    expect(state.balance).toBe(10)
    expect(state.letters).toHaveLength(0)
  })

  it('closes a keep-alive connection left idle after HTTP_KEEP_ALIVE_TIMEOUT_MS', async ({ port }) => {
    const watched = await open(port)
    watched.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
    await until('the first answer', () => watched.received.includes('"status":"ok"'), { timeoutMs: 5000, everyMs: 25 })
    expect(watched.received).toMatch(/^HTTP\/1\.1 200 OK/)
    const answeredAt = Date.now()
    await until('the idle socket closed', () => watched.closedAt !== undefined, { timeoutMs: KEEP_ALIVE_TIMEOUT_MS + 10_000, everyMs: 25 })
    watched.socket.destroy()
    expect(watched.closedAt, 'the idle keep-alive socket stayed open').toBeDefined()
    expect(watched.closedAt! - answeredAt).toBeGreaterThanOrEqual(KEEP_ALIVE_TIMEOUT_MS - 100)
  })
})
