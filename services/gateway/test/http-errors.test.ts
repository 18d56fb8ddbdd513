import { connect } from 'node:net'
import { describe, expect } from 'vitest'
import { ADMIN_TOKEN } from '@letters/test/support/context'
import { it as base } from '@letters/test/support/fixtures'
import { expectError } from './helpers.js'

/** The gateway listening on a real port, for requests no client library would send. */
const it = base.extend('port', { scope: 'file' }, async ({ gateway }) => {
  await gateway.listen({ host: '127.0.0.1', port: 0 })
  return (gateway.server.address() as { port: number }).port
})

/** Sends bytes as they are (no client library would send these) and reads the answer until the server closes. */
function rawExchange(port: number, request: string): Promise<{ statusLine: string; headers: string; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request))
    let received = ''
    socket.setEncoding('utf8')
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer within 10 s')))
    socket.on('data', (chunk: string) => (received += chunk))
    socket.on('error', reject)
    socket.on('close', () => {
      const [head = '', body = ''] = received.split('\r\n\r\n')
      try {
        resolve({ statusLine: head.split('\r\n')[0] ?? '', headers: head, body: JSON.parse(body) as Record<string, unknown> })
      } catch {
        reject(new Error(`not a JSON answer: ${received}`))
      }
    })
  })
}

describe('errors raised before a route runs answer { error, message, requestId } in Spanish', () => {
  it('answers a path with broken percent-encoding with 400', async ({ gateway: app }) => {
    const response = await app.inject({ method: 'GET', url: '/cards/%E0%A4%A' })
    const body = expectError(response, 400, 'Bad Request', 'La URL no es válida: contiene una secuencia % que no codifica ningún carácter')
    expect(body).toEqual({ error: 'Bad Request', message: expect.any(String), requestId: expect.any(String) })
    expect(response.body).not.toMatch(/FST_ERR|is not a valid url/)
  })

  it('answers headers over the size limit with 431', async ({ port }) => {
    const response = await rawExchange(port, `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ${'a'.repeat(20 * 1024)}\r\n\r\n`)
    expect(response.statusLine).toBe('HTTP/1.1 431 Request Header Fields Too Large')
    expect(response.headers).toMatch(/content-type: application\/json/i)
    expect(response.body).toEqual({
      error: 'Request Header Fields Too Large',
      message: 'Las cabeceras de la petición (o su URL) son demasiado grandes',
      requestId: expect.any(String),
    })
  })

  it('answers a URL longer than the header limit with 431, not a bare 400', async ({ port }) => {
    const response = await rawExchange(port, `GET /cards?cursor=${'a'.repeat(20 * 1024)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`)
    expect(response.statusLine).toBe('HTTP/1.1 431 Request Header Fields Too Large')
    expect(response.body).toMatchObject({ error: 'Request Header Fields Too Large', requestId: expect.any(String) })
  })

  it.for([
    ['an unknown method token', 'BREW@ / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'],
    ['a header without a colon', 'GET /healthz HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n'],
    ['a garbage request line', 'hola\r\n\r\n'],
    [
      'a chunked body with a broken chunk size',
      `POST /admin/accounts HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
    ],
  ] as const)('answers %s with 400', async ([_name, request], { port }) => {
    const response = await rawExchange(port, request)
    expect(response.statusLine).toBe('HTTP/1.1 400 Bad Request')
    expect(response.body).toEqual({ error: 'Bad Request', message: 'La petición HTTP está mal formada', requestId: expect.any(String) })
  })
})

describe('a file missing under a route that serves files', () => {
  it('answers 404 without Allow, not a 405 naming the very method it was asked with', async ({ gateway }) => {
    for (const method of ['GET', 'HEAD'] as const) {
      const response = await gateway.inject({ method, url: '/docs/static/no-existe.js' })
      expect(response.statusCode, response.body).toBe(404)
      expect(response.headers.allow).toBeUndefined()
    }
    expectError(await gateway.inject({ method: 'GET', url: '/docs/static/no-existe.js' }), 404, 'Not Found', 'La ruta GET /docs/static/no-existe.js no existe')
    // The same path asked with a method no route of it has is still a 405 with the methods it has.
    const other = await gateway.inject({ method: 'DELETE', url: '/docs/static/no-existe.js' })
    expect(other.statusCode).toBe(405)
    expect(other.headers.allow).toBe('GET, HEAD')
  })
})
