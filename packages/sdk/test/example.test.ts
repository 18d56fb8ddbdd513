import { execFile, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { createInterface } from 'node:readline'
import { promisify } from 'node:util'
import { describe, expect } from 'vitest'
import { Webhook } from 'standardwebhooks'
import { it as base } from '@letters/test/support/fixtures'

const EXAMPLE = new URL('../examples/send-card.ts', import.meta.url)
const RECEIVER = new URL('../examples/webhook-receiver.ts', import.meta.url)
// The API guide shows both examples; these tests keep it from drifting from the files that run.
const API_GUIDE = new URL('../../../docs/api-guide.md', import.meta.url)

/**
 * How the examples run inside the repository: through tsx, `@letters/sdk` read from its sources
 * (its default export is the compiled dist/, which a checkout has not built).
 */
const RUN_FROM_SOURCE = ['--conditions=letters-source', '--import', 'tsx']

/** The gateway listening on 127.0.0.1, as a client of the SDK reaches it. */
const it = base.extend('baseUrl', { scope: 'file' }, ({ gateway }) => gateway.listen({ host: '127.0.0.1', port: 0 }))

it.override({ accountCredits: 10 })

describe('the API guide example (examples/send-card.ts)', () => {
  it('is the file the API guide shows', async () => {
    const example = await readFile(EXAMPLE, 'utf8')
    expect(await readFile(API_GUIDE, 'utf8')).toContain('```ts\n' + example + '```')
  })

  it('sends a card, run as a client runs it, against a gateway on a port', async ({ baseUrl, account }) => {
    const { stdout } = await promisify(execFile)(process.execPath, [...RUN_FROM_SOURCE, EXAMPLE.pathname, baseUrl, account.apiKey], {
      cwd: new URL('..', import.meta.url).pathname,
    })
    expect(stdout).toMatch(/^[0-9a-f-]{36} received\n$/)
  })
})

describe('the API guide webhook receiver (examples/webhook-receiver.ts)', () => {
  it('is the file the API guide shows', async () => {
    const example = await readFile(RECEIVER, 'utf8')
    expect(await readFile(API_GUIDE, 'utf8')).toContain('```ts\n' + example + '```')
  })

  it('accepts a delivery signed with its secret and refuses a forged one', async () => {
    const secret = `whsec_${randomBytes(32).toString('base64')}`
    const port = 20_000 + Math.floor(Math.random() * 20_000)
    const receiver = spawn(process.execPath, [...RUN_FROM_SOURCE, RECEIVER.pathname, String(port), secret], {
      cwd: new URL('..', import.meta.url).pathname,
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    try {
      const lines = createInterface({ input: receiver.stdout })[Symbol.asyncIterator]()
      expect((await lines.next()).value).toBe(`listening on ${port}`)
      const body = JSON.stringify({ type: 'letter.printed', timestamp: new Date().toISOString(), data: { id: 'c1', status: 'printed' } })
      const at = new Date()
      const headers = {
        'content-type': 'application/json',
        'webhook-id': 'msg_1',
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': new Webhook(secret).sign('msg_1', at, body),
      }
      const accepted = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers, body })
      expect(accepted.status).toBe(204)
      expect((await lines.next()).value).toBe('msg_1 letter.printed c1')
      const forged = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers, body: body.replace('printed', 'mailed') })
      expect(forged.status).toBe(400)
    } finally {
      receiver.kill()
    }
  })
})
