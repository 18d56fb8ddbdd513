// A pooled keep-alive client (undici, Node's fetch) or a proxy (ingress-nginx) sends its next
// request on a connection it still believes open. Were it closed by the gateway meanwhile, the
// request fails unanswered: "other side closed" for the client, a 502 from the proxy, and a POST
// is not retried by either. So the gateway keeps an idle connection longer than they do (75 s;
// the proxies in front keep theirs 60 s), and closes it only with `Connection: close` when it stops.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFile } from 'node:fs/promises'
import type { IncomingMessage } from 'node:http'
import { connect, type AddressInfo, type Socket } from 'node:net'
import { join } from 'node:path'
import { describe, expect } from 'vitest'
import { parseAllDocuments } from 'yaml'
import { loadConfig } from '@letters/config'
import { adminAccount } from '@letters/test/support/accounts'
import { singleLetter } from '@letters/test/support/factories'
import { it as base } from '@letters/test/support/fixtures'
import { ADMIN_TOKEN } from '@letters/test/support/context'
import { openGateway } from '@letters/test/support/gateway'
import { moneyState } from '@letters/test/support/ledger'
import { freePort, repositoryRoot, startGatewayProcess } from '@letters/test/support/processes'
import type { App } from '../src/app.js'

/** The reliability run's setting: a 3 s request timeout, so 3 s of silence while a request is under way closes its socket. */
const RUN_ENV = { HTTP_REQUEST_TIMEOUT_MS: '3000' }
/** Node's own default keep-alive, under which a busy pooled client sends on a connection the gateway closed. */
const NODE_DEFAULT_KEEP_ALIVE_MS = 5000
/** How long the client's event loop is busy between two requests: past Node's default keep-alive and the second Node adds to it, with room for a late timer. */
const BUSY_MS = 9000
/** What an ES letter costs (LETTER_COSTS' default). */
const COST = 3

/** The gateway listening on 127.0.0.1, and its base URL. */
const it = base.extend('url', { scope: 'file' }, async ({ gateway }) => listen(gateway))

it.override({ gatewayOptions: { env: RUN_ENV } })

async function listen(app: App): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
}

/** What the gateway's server saw of connections and requests while a test ran. */
function watchServer(app: App) {
  const seen = { connections: 0, posts: 0, idleClosedAt: [] as number[] }
  const onConnection = (socket: Socket) => {
    seen.connections++
    // The socket's own timer: on an idle keep-alive connection, the keep-alive's (Node's http
    // server destroys the socket when it fires).
    socket.on('timeout', () => seen.idleClosedAt.push(Date.now()))
  }
  const onRequest = (request: IncomingMessage) => {
    if (request.method === 'POST') seen.posts++
  }
  app.server.on('connection', onConnection)
  app.server.on('request', onRequest)
  const stop = () => {
    app.server.off('connection', onConnection)
    app.server.off('request', onRequest)
  }
  return { seen, stop }
}

interface ClientRun {
  /** The Keep-Alive header of the first answer. */
  keepAlive: string | null
  /** When the first answer had been read, and when the POST was handed to fetch (epoch ms). */
  answeredAt: number
  sentAt: number
  status?: number
  connection?: string | null
  body?: { cardId?: string }
  error?: string
  code?: string
}

// The client, in a process of its own (its busy thread must not stop the gateway's): Node's fetch,
// whose pool keeps the connection of the first request for the next.
const CLIENT = `
const { url, apiKey, letter, busyMs, idempotencyKey } = JSON.parse(process.env.KEEP_ALIVE_CLIENT)
const first = await fetch(url + '/healthz')
await first.arrayBuffer()
// The pool takes the connection back once the answer is over, a turn of the event loop later.
await new Promise((resolve) => setTimeout(resolve, 200))
const run = { keepAlive: first.headers.get('keep-alive'), answeredAt: Date.now() }
// Busy: nothing else runs on this thread meanwhile, not the pool's own timers either. Held by
// Atomics.wait rather than a loop that spins: the thread is as stopped, without a core of the
// machine the tests share.
const held = new Int32Array(new SharedArrayBuffer(4))
for (let left = busyMs; left > 0; left = run.answeredAt + busyMs - Date.now()) Atomics.wait(held, 0, 0, left)
run.sentAt = Date.now()
try {
  const headers = { 'x-api-key': apiKey, 'content-type': 'application/json', ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) }
  const response = await fetch(url + '/single', { method: 'POST', headers, body: JSON.stringify(letter) })
  Object.assign(run, { status: response.status, connection: response.headers.get('connection'), body: await response.json() })
} catch (error) {
  Object.assign(run, { error: String(error.cause?.message ?? error.message), code: error.cause?.code })
}
process.stdout.write(JSON.stringify(run))
`

/** A GET, then `busyMs` of a busy event loop, then POST /single of `letter` on the pooled connection. */
async function busyClient(url: string, apiKey: string, letter: unknown, options: { busyMs: number; idempotencyKey?: string }): Promise<ClientRun> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', CLIENT], {
    env: { PATH: process.env.PATH, KEEP_ALIVE_CLIENT: JSON.stringify({ url, apiKey, letter, ...options }) },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
  const [code] = (await once(child, 'exit')) as [number | null]
  expect(code, output).toBe(0)
  return JSON.parse(output) as ClientRun
}

describe('a pooled client whose event loop was busy for 9 s before its POST', () => {
  it(
    'gets its answer on the connection it kept, idle longer than the request and headers timeouts, and is charged once',
    { timeout: 60_000 },
    async ({ gateway, url }) => {
      const account = await adminAccount(gateway, 10)
      const watch = watchServer(gateway)
      let run: ClientRun
      try {
        run = await busyClient(url, account.apiKey, singleLetter(account), { busyMs: BUSY_MS })
      } finally {
        watch.stop()
      }
      expect({ error: run.error, code: run.code }, 'the POST went unanswered').toEqual({ error: undefined, code: undefined })
      expect(run.status).toBe(200)
      // The gateway advertises what it keeps: longer than the 60 s of the proxies in front.
      expect(run.keepAlive).toBe('timeout=75')
      // One connection, idle for BUSY_MS between the two requests: longer than 3 s of silence
      // (HTTP_REQUEST_TIMEOUT_MS) and than the headers timeout, neither of which cuts an idle one.
      expect(watch.seen.connections).toBe(1)
      expect(watch.seen.idleClosedAt).toEqual([])
      expect(run.sentAt - run.answeredAt).toBeGreaterThanOrEqual(BUSY_MS)

      const state = await moneyState(gateway.db, account.id)
      expect(state.letters.map((letter) => letter.id)).toEqual([run.body?.cardId])
      expect(state.balance).toBe(10 - COST)
      expect(state.charges).toHaveLength(1)
    },
  )

  it(
    "with a 5 s keep-alive (Node's default), sends on a socket the gateway had closed: no answer, nothing charged, and the keyed retry is stored once",
    { timeout: 90_000 },
    async () => {
      const short = await openGateway({ env: { ...RUN_ENV, HTTP_KEEP_ALIVE_TIMEOUT_MS: String(NODE_DEFAULT_KEEP_ALIVE_MS) } })
      try {
        const url = await listen(short.app)
        const account = await adminAccount(short.app, 10)
        const letter = singleLetter(account)
        const idempotencyKey = `keep-alive-${account.id}`
        const watch = watchServer(short.app)
        let run: ClientRun
        try {
          run = await busyClient(url, account.apiKey, letter, { busyMs: BUSY_MS, idempotencyKey })
        } finally {
          watch.stop()
        }
        expect(run.keepAlive).toBe('timeout=5')
        // The cause: the gateway's own idle timer closed the connection (the keep-alive and the
        // second Node adds), and the client, busy, learned of it only once it had sent its POST there.
        expect(run.status, 'the POST was answered: a 5 s keep-alive no longer closes under a busy client').toBeUndefined()
        expect({ error: run.error, code: run.code }).toEqual({ error: 'other side closed', code: 'UND_ERR_SOCKET' })
        expect(watch.seen.idleClosedAt).toHaveLength(1)
        const closedAfter = watch.seen.idleClosedAt[0]! - run.answeredAt
        expect(closedAfter).toBeGreaterThanOrEqual(NODE_DEFAULT_KEEP_ALIVE_MS)
        expect(watch.seen.idleClosedAt[0]!).toBeLessThan(run.sentAt)
        // The request never reached the gateway: nothing was stored or charged.
        expect(watch.seen.posts).toBe(0)
        const before = await moneyState(short.app.db, account.id)
        expect({ balance: before.balance, letters: before.letters.length }).toEqual({ balance: 10, letters: 0 })

        // Its retry with the same key, on a new connection, is the one that is stored.
        const retry = await fetch(`${url}/single`, {
          method: 'POST',
          headers: { 'x-api-key': account.apiKey, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
          body: JSON.stringify(letter),
        })
        expect(retry.status).toBe(200)
        const after = await moneyState(short.app.db, account.id)
        expect(after.letters.map((stored) => stored.id)).toEqual([((await retry.json()) as { cardId: string }).cardId])
        expect(after.balance).toBe(10 - COST)
      } finally {
        await short.close()
      }
    },
  )
})

describe('a stopping gateway', () => {
  it(
    'answers a request still arriving when it stops with Connection: close, and stops within its drain time despite the long keep-alive',
    { timeout: 60_000 },
    async () => {
      const stopping = await openGateway()
      let socket: Socket | undefined
      let stopped: Promise<number> | undefined
      try {
        const url = new URL(await listen(stopping.app))
        // An admin's write, not a creation: its work does not stop with the request's deadline, so
        // it is answered whenever its body arrives.
        const body = JSON.stringify({ name: 'Papelería Luna', credits: 5 })
        const arrived = once(stopping.app.server, 'request')
        socket = connect(Number(url.port), '127.0.0.1')
        let received = ''
        socket.setEncoding('utf8')
        socket.on('data', (chunk: string) => (received += chunk))
        socket.on('error', () => {})
        const serverClosed = once(socket, 'close')
        socket.write(
          `POST /admin/accounts HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
        )
        await arrived

        // The stop begins while the body is on its way; the body arrives after the stop's grace
        // for the requests in hand (3 s), once the server has closed its idle connections, so the
        // answer is written on a connection the server no longer ends by itself.
        const stopAsked = Date.now()
        stopped = stopping.app.close().then(() => Date.now() - stopAsked)
        await new Promise((resolve) => setTimeout(resolve, 4000))
        socket.write(body)

        // The gateway ends the connection after its answer, as the answer says.
        const closed = await Promise.race([serverClosed.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5000))])
        const [head = ''] = received.split('\r\n\r\n')
        expect(head).toMatch(/^HTTP\/1\.1 201 Created\r\n/)
        expect(head.toLowerCase()).toContain('\r\nconnection: close')
        expect(closed, 'the connection stayed open after the answer').toBe(true)
        // 10 s: the gateway's drain time (drainTimeMs), after which its process exits anyway.
        const stopMs = await Promise.race([stopped, new Promise<number>((resolve) => setTimeout(() => resolve(Infinity), 10_000))])
        expect(stopMs).toBeLessThan(10_000)
      } finally {
        socket?.destroy()
        await (stopped ?? stopping.close())
      }
    },
  )
})

describe('settings under which a connection would close before the keep-alive it advertises', () => {
  it('stop the gateway at start, naming the variable and why', { timeout: 60_000 }, async ({ gateway }) => {
    // A gateway that did start anyway is stopped at once, and fails the test.
    const started = startGatewayProcess(gateway.config, await freePort(), { HTTP_KEEP_ALIVE_TIMEOUT_MS: '3000000000' }).then(async (running) => {
      await running.kill()
      return running
    })
    await expect(started).rejects.toThrow(
      /exited with 1 before it was ready[\s\S]*Invalid configuration: HTTP_KEEP_ALIVE_TIMEOUT_MS=3000000000: must be at most 2147483647 ms \(24\.8 days\), the longest timer Node keeps; past it Node cuts the connection's timer short, and an idle connection would close sooner than this keep-alive, which its answers advertise \(Keep-Alive: timeout=3000000\)/,
    )
  })
})

describe('the Kubernetes base', () => {
  it("keeps the gateway's connections longer than the proxy in front of its Service keeps them idle", async () => {
    const read = async (file: string) =>
      parseAllDocuments(await readFile(join(repositoryRoot, 'infra/k8s', file), 'utf8')).map(
        (document) => document.toJS() as { kind: string; metadata: { name: string; annotations?: Record<string, string> }; data?: Record<string, string> },
      )
    const configMap = (await read('config.yaml')).find((manifest) => manifest.kind === 'ConfigMap')!
    const service = (await read('gateway.yaml')).find((manifest) => manifest.kind === 'Service' && manifest.metadata.name === 'gateway')!
    const proxyIdleSeconds = Number(service.metadata.annotations?.['letters.example/proxy-idle-timeout-seconds'])
    expect(proxyIdleSeconds).toBeGreaterThan(0)
    const { keepAliveTimeoutMs } = loadConfig(configMap.data).http
    expect(keepAliveTimeoutMs).toBeGreaterThan(proxyIdleSeconds * 1000)
    expect(configMap.data?.HTTP_KEEP_ALIVE_TIMEOUT_MS).toBe(String(keepAliveTimeoutMs))
  })
})
