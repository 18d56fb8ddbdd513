import { describe, expect } from 'vitest'
import { eq } from 'drizzle-orm'
import { letters } from '@letters/db'
import type { App } from '@letters/gateway/server'
import { ADMIN_TOKEN } from '@letters/test/support/context'
import { singleLetter } from '@letters/test/support/factories'
import { it as base } from '@letters/test/support/fixtures'
import type { Account } from '@letters/test/support/gateway'
import { runCli, spawnCli } from './commands.js'

/** The CLI's return and suppression commands against a gateway listening on 127.0.0.1 (no workers: letters are put in `mailed` by hand). */
const it = base
  .extend('lettersUrl', { scope: 'file' }, ({ gateway }) => gateway.listen({ port: 0, host: '127.0.0.1' }))
  /** A command line of the CLI, run in this process (runCli). */
  .extend(
    'cli',
    { scope: 'file' },
    ({ lettersUrl }) =>
      (args: string[]) =>
        runCli(args, lettersUrl),
  )

/** A line of a table starting with these cells, whatever the column widths (two spaces at least between columns). */
const row = (...cells: Array<string | number>) =>
  new RegExp(`^${cells.map((cell) => String(cell).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join(' {2,}')}(?: {2,}.*)?$`, 'm')

/** A letter of the account (a test one with `testKey`) to the address given, set to mailed as the floor's scanner would have left it. */
async function mailedLetter(app: App, account: Account, recipient: Record<string, string> = {}, apiKey = account.apiKey) {
  const response = await app.inject({
    method: 'POST',
    url: '/single',
    headers: { 'x-api-key': apiKey },
    payload: singleLetter(account, { name: 'Remedios', surname: 'Olabarrieta', ...recipient }),
  })
  expect(response.statusCode, response.body).toBe(200)
  const id = response.json<{ cardId: string }>().cardId
  await app.db.update(letters).set({ status: 'mailed' }).where(eq(letters.id, id))
  return id
}

/** The admin API's answer, as the CLI's --json must print it. */
async function apiText(app: App, url: string) {
  const response = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
  expect(response.statusCode, response.body).toBe(200)
  return response.body
}

type SuppressionPage = { data: Array<{ id: string; reason: string; zip: string; country: string; createdAt: string }>; nextCursor: string | null }

describe('npm run admin -- letters returned <letter> --reason <reason>', () => {
  it('returns a mailed letter as refused without suppressing its address, and as moved with an entry that suppressions list shows and lift removes', async ({
    gateway: app,
    account,
    cli,
  }) => {
    const refused = await mailedLetter(app, account, { address: 'Calle de Toledo 12', zip: '28005' })
    const first = await cli(['letters', 'returned', refused, '--reason', 'refused'])
    expect(first, first.stderr).toMatchObject({ code: 0, stderr: '' })
    expect(first.stdout).toMatch(row('status', 'returned'))
    expect(first.stdout).toMatch(row('returnReason', 'refused (Rehusado)'))
    expect(first.stdout).toMatch(/^returnedAt +\d{4}-\d\d-\d\dT[\d:.]+Z$/m)
    expect(first.stdout).toMatch(/^returned +\S+ +Devuelta por correos: Rehusado$/m)
    expect(first.stdout).toContain('Rehusada: la rechazó el destinatario, no la dirección, que no se añade a la lista de supresión.')
    const empty = await cli(['suppressions', 'list', account.id])
    expect(empty, empty.stderr).toEqual({ code: 0, stdout: 'La lista de supresión está vacía.\n', stderr: '' })

    const moved = await mailedLetter(app, account, { address: 'Avenida de América 3', zip: '28002' })
    const second = await cli(['letters', 'returned', moved, '--reason', 'moved', '--json'])
    expect(second, second.stderr).toMatchObject({ code: 0, stderr: '' })
    const answer = JSON.parse(second.stdout) as { card: { id: string; status: string; returnReason: string }; suppressionId: string }
    expect(answer).toMatchObject({ card: { id: moved, status: 'returned', returnReason: 'moved' }, suppressionId: expect.any(String) })

    const listed = await cli(['suppressions', 'list', account.id])
    expect(listed, listed.stderr).toMatchObject({ code: 0, stderr: '' })
    expect(listed.stdout.split('\n')[0]).toMatch(row('id', 'zip', 'country', 'createdAt', 'reason'))
    expect(listed.stdout).toMatch(new RegExp(`^${answer.suppressionId} +28002 +ES +\\S+ +moved \\(Se ha mudado\\)$`, 'm'))
    // One entry, and no street: the list keeps only its hash.
    expect(listed.stdout.trim().split('\n')).toHaveLength(2)
    expect(listed.stdout).not.toContain('América')
    const json = await cli(['suppressions', 'list', account.id, '--json'])
    expect(json.stdout).toBe(`${await apiText(app, `/admin/accounts/${account.id}/suppressions`)}\n`)

    const lifted = await cli(['suppressions', 'lift', account.id, answer.suppressionId])
    expect(lifted).toEqual({ code: 0, stdout: 'Entrada quitada de la lista de supresión: las cartas a esa dirección vuelven a enviarse.\n', stderr: '' })
    expect((await cli(['suppressions', 'list', account.id])).stdout).toBe('La lista de supresión está vacía.\n')
    const again = await cli(['suppressions', 'lift', account.id, answer.suppressionId])
    expect({ code: again.code, stdout: again.stdout }).toEqual({ code: 1, stdout: '' })
    expect(again.stderr).toBe('Error 404: La entrada no existe en la lista de direcciones suprimidas de la cuenta\n')
  })

  it('refuses a reason that is not one of the six, naming them in Spanish, with exit 2 and nothing sent; without --reason too', async ({
    gateway: app,
    account,
    cli,
  }) => {
    const id = await mailedLetter(app, account)
    const wrong = await cli(['letters', 'returned', id, '--reason', 'perdida'])
    expect({ code: wrong.code, stdout: wrong.stdout }).toEqual({ code: 2, stdout: '' })
    expect(wrong.stderr).toContain(
      "error: option '--reason <reason>' argument 'perdida' is invalid. El motivo debe ser uno de: unknown_recipient (Desconocido), " +
        'bad_address (Dirección incorrecta o incompleta), refused (Rehusado), moved (Se ha mudado), deceased (Fallecido), other (Otro motivo).',
    )
    const missing = await cli(['letters', 'returned', id])
    expect({ code: missing.code, stdout: missing.stdout }).toEqual({ code: 2, stdout: '' })
    expect(missing.stderr).toContain("error: required option '--reason <reason>' not specified")
    const [letter] = await app.db.select({ status: letters.status }).from(letters).where(eq(letters.id, id))
    expect(letter?.status).toBe('mailed')
  })

  it('says why not, exit 1, for a letter returned already, one not mailed and an unknown one', async ({ gateway: app, account, cli }) => {
    const id = await mailedLetter(app, account)
    expect((await cli(['letters', 'returned', id, '--reason', 'unknown_recipient'])).code).toBe(0)
    const twice = await cli(['letters', 'returned', id, '--reason', 'unknown_recipient'])
    expect(twice).toEqual({ code: 1, stdout: '', stderr: 'Error 409: La carta ya se marcó como devuelta\n' })
    // Another address: the first one is on the suppression list now.
    const received = await app.inject({
      method: 'POST',
      url: '/single',
      headers: { 'x-api-key': account.apiKey },
      payload: singleLetter(account, { address: 'Calle Alcalá 20' }),
    })
    expect(received.statusCode, received.body).toBe(200)
    const early = await cli(['letters', 'returned', received.json<{ cardId: string }>().cardId, '--reason', 'other'])
    expect(early.stderr).toBe('Error 409: Solo una carta enviada puede marcarse como devuelta; esta está en estado «recibida» (received)\n')
    const unknown = await cli(['letters', 'returned', '00000000-0000-4000-8000-000000000000', '--reason', 'other'])
    expect(unknown).toEqual({ code: 1, stdout: '', stderr: 'Error 404: La carta no existe\n' })
  })

  it(
    'the entry point, in a process of its own, exits non-zero with the reasons on stderr for an invalid reason',
    { timeout: 60_000 },
    async ({ gateway: app, account, lettersUrl }) => {
      const id = await mailedLetter(app, account)
      const result = await spawnCli(
        process.execPath,
        ['--import', 'tsx', 'packages/cli/src/main.ts', 'letters', 'returned', id, '--reason', 'lost'],
        lettersUrl,
      )
      expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 2, stdout: '' })
      expect(result.stderr).toContain("argument 'lost' is invalid. El motivo debe ser uno de: unknown_recipient (Desconocido)")
    },
  )
})

describe('npm run admin -- suppressions list|lift <account> [--mode test]', () => {
  it('keeps the test list apart: --mode test lists and lifts a test letter’s entry, which the live list neither shows nor lifts', async ({
    gateway: app,
    account,
    testKey,
    cli,
  }) => {
    const id = await mailedLetter(app, account, { address: 'Rúa do Franco 8', zip: '15702' }, testKey)
    const returned = await cli(['letters', 'returned', id, '--reason', 'deceased', '--json'])
    const { suppressionId } = JSON.parse(returned.stdout) as { suppressionId: string }
    expect((await cli(['suppressions', 'list', account.id])).stdout).toBe('La lista de supresión está vacía.\n')
    expect((await cli(['suppressions', 'list', account.id, '--mode', 'test'])).stdout).toMatch(
      new RegExp(`^${suppressionId} +15702 +ES +\\S+ +deceased \\(Fallecido\\)$`, 'm'),
    )
    const live = await cli(['suppressions', 'lift', account.id, suppressionId])
    expect(live).toMatchObject({ code: 1, stderr: 'Error 404: La entrada no existe en la lista de direcciones suprimidas de la cuenta\n' })
    expect((await cli(['suppressions', 'lift', account.id, suppressionId, '--mode', 'test'])).code).toBe(0)
    expect((await cli(['suppressions', 'list', account.id, '--mode', 'test'])).stdout).toBe('La lista de supresión está vacía.\n')
    const badMode = await cli(['suppressions', 'list', account.id, '--mode', 'prueba'])
    expect(badMode).toMatchObject({ code: 2, stdout: '', stderr: expect.stringContaining("argument 'prueba' is invalid. Allowed choices are live, test.") })
  })

  it('pages with --limit and --cursor, newest first, and says how to ask for the next page', async ({ gateway: app, account, cli }) => {
    const older = await mailedLetter(app, account, { address: 'Calle Larios 5', zip: '29005', city: 'Málaga' })
    const newer = await mailedLetter(app, account, { address: 'Calle Mayor 40', zip: '28013' })
    const first = JSON.parse((await cli(['letters', 'returned', older, '--reason', 'bad_address', '--json'])).stdout) as { suppressionId: string }
    const second = JSON.parse((await cli(['letters', 'returned', newer, '--reason', 'other', '--json'])).stdout) as { suppressionId: string }

    const page = JSON.parse((await cli(['suppressions', 'list', account.id, '--limit', '1', '--json'])).stdout) as SuppressionPage
    expect(page.data.map((entry) => entry.id)).toEqual([second.suppressionId])
    const table = await cli(['suppressions', 'list', account.id, '--limit', '1'])
    expect(table.stdout).toMatch(row(second.suppressionId, '28013', 'ES'))
    expect(table.stdout).toContain(`Hay más: repite la orden con --cursor ${page.nextCursor}`)
    const next = await cli(['suppressions', 'list', account.id, '--limit', '1', '--cursor', page.nextCursor!])
    expect(next.stdout).toMatch(row(first.suppressionId, '29005', 'ES'))
    expect(next.stdout).not.toContain('Hay más')

    const badLimit = await cli(['suppressions', 'list', account.id, '--limit', 'muchas'])
    expect(badLimit).toMatchObject({ code: 2, stderr: expect.stringContaining('--limit debe ser un número entero.') })
    const unknown = await cli(['suppressions', 'list', '00000000-0000-4000-8000-000000000000'])
    expect(unknown).toEqual({ code: 1, stdout: '', stderr: 'Error 404: La cuenta no existe\n' })
  })

  it('--help shows the commands and the reasons with their Spanish names, without needing a token', async ({ lettersUrl }) => {
    const help = async (args: string[]) => {
      const result = await runCli(args, lettersUrl, { ADMIN_TOKEN: undefined })
      expect(result.code, result.stderr).toBe(0)
      return result.stdout
    }
    expect(await help(['suppressions', '--help'])).toMatch(/list \[options\] <account>[\s\S]*lift \[options\] <account> <suppression>/)
    const returned = await help(['letters', 'returned', '--help'])
    for (const text of ['<letter>', '--reason <reason>', 'bad_address', 'Rehusado', 'letters returned <letter> --reason refused'])
      expect(returned).toContain(text)
    expect(await help(['suppressions', 'list', '--help'])).toContain('choices: "live",')
  })
})
