import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { testConfig } from '@letters/test/support/context'
import { isDriverError } from '@letters/db'

const fixture = fileURLToPath(new URL('./fixtures/guarded-process.ts', import.meta.url))
let child: ChildProcess | undefined

afterEach(() => {
  child?.kill('SIGKILL')
  child = undefined
})

/** Starts the fixture; `lines` fills with what it prints, `waitFor` resolves on a matching line. */
function startGuarded(mode: 'driver' | 'bug') {
  const started = spawn(process.execPath, ['--import', 'tsx', fixture, mode], {
    env: { ...process.env, DATABASE_URL: testConfig().databaseUrl },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  child = started
  const lines: string[] = []
  let pending = ''
  started.stdout.on('data', (chunk: Buffer) => {
    pending += chunk.toString()
    const complete = pending.split('\n')
    pending = complete.pop()!
    lines.push(...complete)
  })
  const exited = once(started, 'exit').then(([code]) => code as number | null)
  const waitFor = (pattern: RegExp) => expect.poll(() => lines.find((line) => pattern.test(line)), { timeout: 15_000, interval: 50 }).toBeDefined()
  return { started, lines, exited, waitFor }
}

describe('the process guard every entry point installs', () => {
  it('logs a dropped connection the driver reports to no one, and keeps the process running until SIGTERM', async () => {
    const guarded = startGuarded('driver')
    await guarded.waitFor(/^still running: 1$/)
    const logged = guarded.lines
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: number; msg: string; err?: { code?: string } })
    expect(logged).toEqual([
      expect.objectContaining({
        level: 50,
        msg: expect.stringContaining('the Postgres driver failed'),
        err: expect.objectContaining({ code: expect.stringMatching(/^(CONNECTION_CLOSED|57P01)$/) }),
      }),
    ])
    guarded.started.kill('SIGTERM')
    expect(await guarded.exited).toBe(0)
    expect(guarded.lines).toContain('closing SIGTERM')
  })

  it('shuts down gracefully, exit code 1, on any other uncaught error', async () => {
    const guarded = startGuarded('bug')
    expect(await guarded.exited).toBe(1)
    expect(guarded.lines).toContain('closing a bug of ours')
  })
})

describe('isDriverError', () => {
  it('tells a dropped Postgres connection from everything else', () => {
    const thrownInDriver = new TypeError("Cannot read properties of null (reading 'write')")
    thrownInDriver.stack = `TypeError: Cannot read properties of null (reading 'write')\n    at Immediate.nextWrite (file:///srv/app/node_modules/postgres/src/connection.js:255:22)\n    at process.processImmediate (node:internal/timers:483:21)`
    const reset = Object.defineProperty(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), 'query', { value: 'SELECT 1' })
    const wrapped = new Error('Failed query: SELECT 1', {
      cause: Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
    })
    expect([thrownInDriver, reset, wrapped, Object.assign(new Error('closed'), { code: 'CONNECTION_CLOSED' })].map(isDriverError)).toEqual([
      true,
      true,
      true,
      true,
    ])

    const ours = new TypeError("Cannot read properties of undefined (reading 'id')")
    const redisReset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })
    const constraint = Object.assign(new Error('duplicate key'), { code: '23505' })
    expect([ours, redisReset, constraint, 'a string', undefined].map(isDriverError)).toEqual([false, false, false, false, false])
  })
})
