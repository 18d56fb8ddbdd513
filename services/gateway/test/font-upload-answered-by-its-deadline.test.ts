// A font upload is read by a child process before it is stored. When that reading outlasts the
// request's deadline, the client is answered 503 ("nothing stored, retry"), and that must stay
// true: the upload never stores its version afterwards. A reader that cannot start is our fault,
// told as a 503 with nothing stored, not as a 500.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { describe, expect } from 'vitest'
import { FONT_READERS } from '@letters/artwork'
import { ADMIN_TOKEN } from '@letters/test/support/context'
import { it as test } from '@letters/test/support/fixtures'
import { processAlive, processTree } from '@letters/test/support/processes'
import { until } from '@letters/test/support/wait'
import { fontFileCount } from './helpers.js'
import { requestDeadlineMessage } from '../src/common/deadline-messages.js'

/** Long enough for an upload to be read and stored well within it on a loaded machine (its deadline is 7.5 s). */
const REQUEST_TIMEOUT_MS = 10_000
/** A font reader spends some 0.2 s of CPU or more loading its modules before it asks for the file. */
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

/** The font reader this process has started, once there is one. */
const fontReader = () =>
  until('a font reader to start', async () => (await processTree(process.pid)).find((proc) => proc.args.includes('font-child'))?.pid, { everyMs: 5 })

/** Stops a process where it is; false if it had ended already (its read was done before it could be caught). */
function stopped(pid: number): boolean {
  try {
    process.kill(pid, 'SIGSTOP')
    return true
  } catch {
    return false
  }
}

/** A process's CPU time so far, in ms (utime + stime from /proc, in clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

describe('a font upload whose reading outlasts its deadline', () => {
  it('is answered 503 with Retry-After, its reader is ended, and its version is never stored', async ({ gateway: app, account, base }) => {
    await newFont(base, account.id)
    let caught: { reader: number; answer: Awaited<ReturnType<typeof upload>> } | undefined
    let accepted = 0
    // A reader that ended before it could be stopped (a slow poll on a busy machine) read its
    // font in time: that upload is accepted, and another is tried.
    for (let attempt = 0; attempt < 5 && caught === undefined; attempt++) {
      const pending = upload(base, account.id)
      const reader = await fontReader()
      const held = stopped(reader)
      const answer = await pending
      if (held) caught = { reader, answer }
      else if (answer.status === 200) accepted++
    }
    expect(caught, 'a reader stopped while it read').toBeDefined()
    const { reader, answer } = caught!
    expect(answer.status, answer.text).toBe(503)
    expect(answer.retryAfter).toBe('2')
    expect(answer.message).toBe(requestDeadlineMessage)
    // Nobody waits for that read any more: the reader is ended long before its own 60 s limit to start.
    await until('the stopped reader to be ended', async () => !(await processAlive(reader)), { timeoutMs: 20_000 })
    expect(await fontFileCount(app, account.id)).toBe(accepted)
    const next = await upload(base, account.id)
    expect(next.status, next.text).toBe(200)
    expect(JSON.parse(next.text)).toMatchObject({ file: { version: accepted + 1 } })
  }, 90_000)
})

describe('font uploads waiting for a reader when their deadline comes', () => {
  it('are all answered 503, every reader is ended, and nothing is stored', async ({ gateway: app, account, base }) => {
    await newFont(base, account.id)
    // Every reader is stopped as soon as it appears, so the readers there are stay busy.
    let watching = true
    const stopEach = (async () => {
      while (watching) {
        for (const proc of await processTree(process.pid)) if (proc.args.includes('font-child')) stopped(proc.pid)
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
    })()
    let answers: Array<Awaited<ReturnType<typeof upload>>>
    try {
      answers = await Promise.all(Array.from({ length: FONT_READERS + 2 }, () => upload(base, account.id)))
      await until('the stopped readers to be ended', async () => (await processTree(process.pid)).every((proc) => !proc.args.includes('font-child')), {
        timeoutMs: 20_000,
      })
    } finally {
      watching = false
      await stopEach
    }
    expect(answers.map((answer) => answer.status)).toEqual(Array.from({ length: FONT_READERS + 2 }, () => 503))
    expect(await fontFileCount(app, account.id)).toBe(0)
  }, 60_000)
})

describe('a font reader that dies before it asks for the file', () => {
  it('is answered 503, not 500, with nothing stored; the same upload then succeeds', async ({ gateway: app, account, base }) => {
    await newFont(base, account.id)
    let answer: Awaited<ReturnType<typeof upload>> | undefined
    let accepted = 0
    // A reader caught after it had loaded (a slow poll on a busy machine) is let go, and another
    // upload is tried: only one killed while loading says what this test is about.
    for (let attempt = 0; attempt < 5 && answer === undefined; attempt++) {
      const pending = upload(base, account.id)
      const reader = await fontReader()
      const held = stopped(reader)
      const loading = held && cpuMs(reader) < SURELY_NOT_LOADED_CPU_MS
      if (loading) process.kill(reader, 'SIGKILL')
      else if (held) process.kill(reader, 'SIGCONT')
      const settled = await pending
      if (loading) answer = settled
      else if (settled.status === 200) accepted++
    }
    expect(answer, 'a reader killed while it was still loading').toBeDefined()
    expect(answer!.status, answer!.text).toBe(503)
    expect(answer!.retryAfter).not.toBeNull()
    expect(answer!.message).toMatch(/nuestro lector de fuentes no arrancó\. No se ha guardado nada/)
    expect(await fontFileCount(app, account.id)).toBe(accepted)
    const again = await upload(base, account.id)
    expect(again.status, again.text).toBe(200)
    expect(await fontFileCount(app, account.id)).toBe(accepted + 1)
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
    expect(await fontFileCount(app, account.id)).toBe(0)
  })
})
