// A font upload is read by a child process before it is stored. When that reading outlasts the
// request's deadline, the client is answered 503 ("nothing stored, retry"), and that must stay
// true: the upload never stores its version afterwards. A reader that cannot start is our fault,
// told as a 503 with nothing stored, not as a 500.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { describe, expect } from 'vitest'
import { count, eq } from 'drizzle-orm'
import { accountFontFiles, accountFonts } from '@letters/db'
import { ADMIN_TOKEN } from '@letters/test/support/context'
import { it as test } from '@letters/test/support/fixtures'
import { processAlive, processTree } from '@letters/test/support/processes'
import { until } from '@letters/test/support/wait'
import type { App } from '../src/app.js'
import { requestDeadlineMessage } from '../src/common/deadline-messages.js'

const REQUEST_TIMEOUT_MS = 3000
/** The CPU a font reader spends loading its modules before it asks for the file is several times this (0.4 s and more). */
const SURELY_NOT_LOADED_CPU_MS = 100

const woff2 = readFileSync(createRequire(import.meta.url).resolve('@fontsource/patrick-hand/files/patrick-hand-latin-400-normal.woff2'))

/** The file's gateway listens: its uploads come over HTTP, so that its deadline answers them. */
const it = test.extend('base', { scope: 'file' }, async ({ gateway }) => {
  await gateway.listen({ host: '127.0.0.1', port: 0 })
  return `http://127.0.0.1:${(gateway.server.address() as AddressInfo).port}`
})
it.override({ gatewayOptions: { env: { HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS) } } })

async function upload(base: string, accountId: string, contentType = 'font/woff2', body: Buffer = woff2) {
  const response = await fetch(`${base}/admin/accounts/${accountId}/fonts/mi-letra/file`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': contentType },
    body,
  })
  const text = await response.text()
  return { status: response.status, retryAfter: response.headers.get('retry-after'), message: (JSON.parse(text) as { message?: string }).message, text }
}

async function newFont(base: string, accountId: string) {
  const response = await fetch(`${base}/admin/accounts/${accountId}/fonts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'mi-letra', family: 'Mi Letra' }),
  })
  expect(response.status, await response.text()).toBe(201)
}

const versions = async (app: App, accountId: string) =>
  (
    await app.db
      .select({ n: count() })
      .from(accountFontFiles)
      .innerJoin(accountFonts, eq(accountFonts.id, accountFontFiles.fontId))
      .where(eq(accountFonts.accountId, accountId))
  )[0]!.n

/** The font reader this process has started, once there is one. */
const fontReader = () =>
  until('a font reader to start', async () => (await processTree(process.pid)).find((proc) => proc.args.includes('font-child'))?.pid, { everyMs: 2 })

/** A process's CPU time so far, in ms (utime + stime from /proc, in clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

describe('a font upload whose reading outlasts its deadline', () => {
  it('is answered 503 with Retry-After, and its version is never stored, not even once the reading ends', async ({ gateway: app, account, base }) => {
    await newFont(base, account.id)
    const pending = upload(base, account.id)
    const reader = await fontReader()
    process.kill(reader, 'SIGSTOP')
    let answer: Awaited<typeof pending>
    try {
      answer = await pending
    } finally {
      process.kill(reader, 'SIGCONT')
    }
    expect(answer.status, answer.text).toBe(503)
    expect(answer.retryAfter).not.toBeNull()
    expect(answer.message).toBe(requestDeadlineMessage)
    // The reading goes on to its end once resumed; what it read must not be stored.
    await until('the stopped reader to end', async () => !(await processAlive(reader)))
    // A second upload, read after the first was: had the first stored its version, this one would be 2.
    const second = await upload(base, account.id)
    expect(second.status, second.text).toBe(200)
    expect(JSON.parse(second.text)).toMatchObject({ file: { version: 1 } })
    expect(await versions(app, account.id)).toBe(1)
  }, 60_000)
})

describe('a font reader that dies before it asks for the file', () => {
  it('is answered 503, not 500, with nothing stored; the same upload then succeeds', async ({ gateway: app, account, base }) => {
    await newFont(base, account.id)
    let answer: Awaited<ReturnType<typeof upload>> | undefined
    // A reader caught after it loaded (a slow poll on a busy machine) is let go, and tried again.
    for (let attempt = 0; attempt < 5 && answer === undefined; attempt++) {
      const pending = upload(base, account.id)
      const reader = await fontReader()
      process.kill(reader, 'SIGSTOP')
      if (cpuMs(reader) < SURELY_NOT_LOADED_CPU_MS) process.kill(reader, 'SIGKILL')
      else process.kill(reader, 'SIGCONT')
      const settled = await pending
      if (settled.status !== 200) answer = settled
    }
    expect(answer, 'a reader killed while it was still loading').toBeDefined()
    expect(answer!.status, answer!.text).toBe(503)
    expect(answer!.message).toMatch(/nuestro lector de fuentes no arrancó\. No se ha guardado nada/)
    const stored = await versions(app, account.id)
    const again = await upload(base, account.id)
    expect(again.status, again.text).toBe(200)
    expect(await versions(app, account.id)).toBe(stored + 1)
  }, 60_000)
})

describe('a font upload whose Content-Type the framework cannot parse', () => {
  it("is answered 415 with the font route's own message, for an empty type and for a list of types", async ({ gateway: app, account, base }) => {
    await newFont(base, account.id)
    for (const contentType of ['', 'font/ttf, font/woff2', 'font/woff2, application/json']) {
      const answer = await upload(base, account.id, contentType)
      expect(answer.status, `${JSON.stringify(contentType)}: ${answer.text}`).toBe(415)
      expect(answer.message).toMatch(/El archivo de la fuente debe enviarse tal cual, con Content-Type font\/ttf/)
    }
    expect(await versions(app, account.id)).toBe(0)
  })
})
