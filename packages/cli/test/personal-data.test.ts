import { describe, expect } from 'vitest'
import { eq } from 'drizzle-orm'
import { letters, type LetterStatus } from '@letters/db'
import type { App } from '@letters/gateway/server'
import { singleLetter } from '@letters/test/support/factories'
import { it as base } from '@letters/test/support/fixtures'
import type { Account } from '@letters/test/support/gateway'
import { runCli } from './commands.js'

/** The CLI's commands (run in this process, as its entry point runs them) against a gateway listening on 127.0.0.1. */
const it = base.extend('cli', { scope: 'file' }, async ({ gateway }) => {
  const lettersUrl = await gateway.listen({ port: 0, host: '127.0.0.1' })
  /** A command line of the CLI, run in this process (runCli). */
  return (args: string[]) => runCli(args, lettersUrl)
})

it.override({ gatewayOptions: { isolate: 'clierase' } })

/** A line of a table starting with these cells, whatever the column widths. */
const row = (...cells: Array<string | number>) => new RegExp(`^${cells.map(String).join(' {2,}')}(?: {2,}.*)?$`, 'm')

/** A letter of the account, set to `status` as the workers would have left it. */
async function letterIn(app: App, account: Account, status: LetterStatus) {
  const response = await app.inject({
    method: 'POST',
    url: '/single',
    headers: { 'x-api-key': account.apiKey },
    payload: singleLetter(account, { name: 'Remedios', surname: 'Olabarrieta' }),
  })
  expect(response.statusCode, response.body).toBe(200)
  const id = response.json<{ cardId: string }>().cardId
  await app.db.update(letters).set({ status }).where(eq(letters.id, id))
  return id
}

describe('npm run admin -- accounts erase-personal-data <account>', () => {
  it('erases the printed letters, says how many were left unprinted, and shows an erased letter without its recipient', async ({
    gateway: app,
    account,
    cli,
  }) => {
    const printed = await letterIn(app, account, 'printed')
    await letterIn(app, account, 'mailed')
    await letterIn(app, account, 'received')

    const result = await cli(['accounts', 'erase-personal-data', account.id])
    expect(result, result.stderr).toMatchObject({ code: 0, stderr: '' })
    expect(result.stdout).toMatch(row('erased', 2))
    expect(result.stdout).toMatch(row('left', 1))
    expect(result.stdout).toMatch(row('remaining', 0))
    expect(result.stdout).toContain('Queda 1 carta sin imprimir: no se ha tocado; cancélala o repite la orden cuando esté impresa.')

    const shown = await cli(['letters', 'show', printed])
    expect(shown, shown.stderr).toMatchObject({ code: 0, stderr: '' })
    expect(shown.stdout).toMatch(/recipient +\(borrado el \d{4}-\d\d-\d\dT[\d:.]+Z\), ES/)
    expect(shown.stdout).not.toContain('Remedios')
  })

  it("prints the admin API's JSON with --json, and again nothing more is erased", async ({ gateway: app, account, cli }) => {
    await letterIn(app, account, 'cancelled')
    const first = await cli(['accounts', 'erase-personal-data', account.id, '--json'])
    expect(first, first.stderr).toMatchObject({ code: 0 })
    expect(JSON.parse(first.stdout)).toEqual({ erased: 1, left: 0, remaining: 0 })
    const again = await cli(['accounts', 'erase-personal-data', account.id, '--json'])
    expect(JSON.parse(again.stdout)).toEqual({ erased: 0, left: 0, remaining: 0 })
  })

  it('exits 1 with the API’s message for an unknown account', async ({ cli }) => {
    const result = await cli(['accounts', 'erase-personal-data', '00000000-0000-4000-8000-000000000000'])
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 1, stdout: '' })
    expect(result.stderr).toContain('Error 404: La cuenta no existe')
  })
})
