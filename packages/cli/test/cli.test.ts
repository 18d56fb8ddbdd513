import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect } from 'vitest'
import { eq, sql } from 'drizzle-orm'
import { apiKeys, cardDesigns, envelopeDesigns, ledgerEntries, letters } from '@letters/db'
import type { App } from '@letters/gateway/server'
import { cardSvg, logoSvg, pdfOf, pngOf, signatureSvg } from '@letters/test/support/artwork'
import { ADMIN_TOKEN } from '@letters/test/support/context'
import { it as base } from '@letters/test/support/fixtures'
import type { Account } from '@letters/test/support/gateway'
import { adminAccount } from '@letters/test/support/accounts'
import { BUILT_CONDITION } from '@letters/test/support/processes'
import { freePort } from '@letters/test/support/processes'
import { DashboardBrowser } from '@letters/test/support/dashboard'
import { runCli, spawnCli, type CliEnv } from './commands.js'

/**
 * The CLI against a real gateway listening on 127.0.0.1 with a database of its own (the lists
 * show every account): its commands run in this process through the entry point's own `run`,
 * and the entry point itself, through npm and node, where that is what a test is about.
 */
const it = base
  .extend('lettersUrl', { scope: 'file' }, ({ gateway }) => gateway.listen({ port: 0, host: '127.0.0.1' }))
  /** Spawned as an operator runs it: `npm run admin -- …` (npm's header included), or `node --conditions=letters-dist packages/cli/dist/main.js …`. */
  .extend('run', { scope: 'file' }, ({ lettersUrl }) => {
    return (command: string, args: string[], env: CliEnv = {}) => spawnCli(command, args, lettersUrl, env)
  })
  /** A command line of the CLI, run in this process (runCli). */
  .extend('cli', { scope: 'file' }, ({ lettersUrl }) => {
    return (args: string[], env: CliEnv = {}) => runCli(args, lettersUrl, env)
  })
  /** A command that succeeded, its JSON output parsed: the whole of stdout. */
  .extend('cliJson', { scope: 'file' }, ({ cli }) => {
    return async <T>(args: string[]): Promise<T> => {
      const result = await cli([...args, '--json'])
      expect(result, result.stderr).toMatchObject({ code: 0 })
      return JSON.parse(result.stdout) as T
    }
  })
  /** A command that succeeded, its table. */
  .extend('cliTable', { scope: 'file' }, ({ cli }) => {
    return async (args: string[]): Promise<string> => {
      const result = await cli(args)
      expect(result, result.stderr).toMatchObject({ code: 0, stderr: '' })
      return result.stdout
    }
  })
  /** A command that failed with `code`, saying `message` on stderr and nothing on stdout. */
  .extend('cliFails', { scope: 'file' }, ({ cli }) => {
    return async (args: string[], code: number, message: string | RegExp, env: Record<string, string | undefined> = {}) => {
      const result = await cli(args, env)
      expect({ code: result.code, stdout: result.stdout }, result.stderr).toEqual({ code, stdout: '' })
      expect(result.stderr).toMatch(message)
      return result
    }
  })
  /** The admin API's answer, as the CLI's --json must print it. */
  .extend('apiText', { scope: 'file' }, ({ gateway }) => {
    return async (url: string) => {
      const response = await gateway.inject({ method: 'GET', url, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
      expect(response.statusCode, response.body).toBe(200)
      return response.body
    }
  })

it.override({ gatewayOptions: { isolate: 'cli', env: { RECONCILE_AFTER_MS: '60000' } } })

let scratch: string
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'letters-cli-'))
})
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true })
})

/** A line of a table starting with these cells, whatever the column widths (two spaces at least between columns). */
const row = (...cells: Array<string | number>) =>
  new RegExp(`^${cells.map((cell) => String(cell).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join(' {2,}')}(?: {2,}.*)?$`, 'm')

type CreatedAccount = { id: string; name: string; balance: number; apiKey: string }

describe('npm run admin -- accounts create --name X --credits 10 --json (done means)', () => {
  it('prints the new account with its key as JSON, after npm’s own header', async ({ gateway: app, run, apiText }) => {
    const result = await run('npm', ['run', 'admin', '--', 'accounts', 'create', '--name', 'X', '--credits', '10', '--json'])
    expect(result.code, result.stderr).toBe(0)
    // npm echoes the script it runs ("> admin", "> tsx …") before the command's output.
    const output = result.stdout.split('\n').filter((line) => line !== '' && !line.startsWith('> '))
    expect(output).toHaveLength(1)
    const account = JSON.parse(output[0]!) as CreatedAccount
    expect(account).toEqual({ id: expect.any(String), name: 'X', balance: 10, apiKey: expect.stringMatching(/^lk_live_[A-Za-z0-9_-]{49}$/) })
    expect(await app.apiKeyAuth.identify(account.apiKey)).toEqual({ accountId: account.id, keyId: expect.any(String), livemode: true })
    expect(JSON.parse(await apiText(`/admin/accounts/${account.id}`))).toEqual({ id: account.id, name: 'X', balance: 10 })
  })

  it('prints only the JSON with npm run -s, for scripts', async ({ run }) => {
    const result = await run('npm', ['run', '-s', 'admin', '--', 'accounts', 'create', '--name', 'Y', '--json'])
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout)).toMatchObject({ name: 'Y', balance: 0, apiKey: expect.stringMatching(/^lk_live_/) })
  })
})

describe('accounts', () => {
  it('create prints a table with the key and a warning that it is shown once', async ({ cliTable }) => {
    const table = await cliTable(['accounts', 'create', '--name', 'Papelería Luna', '--credits', '300'])
    expect(table).toMatch(row('name', 'Papelería Luna'))
    expect(table).toMatch(row('balance', 300))
    expect(table).toMatch(/^apiKey +lk_live_[A-Za-z0-9_-]{49}$/m)
    expect(table).toContain('Guarda la API key ahora: no se vuelve a mostrar.')
  })

  it('create without --name is a usage error (exit 2), opening nothing', async ({ cliFails, apiText }) => {
    const before = await apiText('/admin/accounts?limit=100')
    await cliFails(['accounts', 'create', '--credits', '5'], 2, "error: required option '--name <name>' not specified")
    expect(await apiText('/admin/accounts?limit=100')).toBe(before)
  })

  it('create with credits the API refuses exits 1 with its Spanish message', async ({ cliFails }) => {
    await cliFails(['accounts', 'create', '--name', 'Z', '--credits', '-3'], 1, "Error 400: El campo 'credits' debe ser mayor o igual que 0")
  })

  it('show prints the API’s JSON as it is, or a table', async ({ cli, cliJson, cliTable, apiText }) => {
    const account = await cliJson<CreatedAccount>(['accounts', 'create', '--name', 'Mostrador', '--credits', '7'])
    const json = await cli(['accounts', 'show', account.id, '--json'])
    expect(json.stdout).toBe(`${await apiText(`/admin/accounts/${account.id}`)}\n`)
    const table = await cliTable(['accounts', 'show', account.id])
    expect(table).toMatch(row('id', account.id))
    expect(table).toMatch(row('name', 'Mostrador'))
    expect(table).toMatch(row('balance', 7))
  })

  it('list prints every account newest first, a page at a time, as JSON or a table', async ({ cli, cliJson, cliTable, apiText }) => {
    const newest = await cliJson<CreatedAccount>(['accounts', 'create', '--name', 'La más nueva', '--credits', '42'])
    const json = await cli(['accounts', 'list', '--json'])
    expect(json.stdout).toBe(`${await apiText('/admin/accounts')}\n`)
    const table = await cliTable(['accounts', 'list'])
    expect(table.split('\n')[0]).toMatch(row('id', 'name', 'balance', 'createdAt'))
    expect(table.split('\n')[1]).toMatch(row(newest.id, 'La más nueva', 42))

    const first = await cliTable(['accounts', 'list', '--limit', '1'])
    expect(first).toMatch(row(newest.id, 'La más nueva', 42))
    const cursor = /Hay más: repite la orden con --cursor (\S+)/.exec(first)?.[1]
    expect(cursor).toBeDefined()
    const second = await cli(['accounts', 'list', '--limit', '1', '--cursor', cursor!, '--json'])
    expect(second.stdout).toBe(`${await apiText(`/admin/accounts?limit=1&cursor=${cursor}`)}\n`)
    expect(JSON.parse(second.stdout).data[0].id).not.toBe(newest.id)
  })

  it('list with a bad cursor exits 1 with the API’s message', async ({ cliFails }) => {
    await cliFails(['accounts', 'list', '--cursor', 'nada'], 1, "Error 400: El parámetro 'cursor' no es válido: usa el 'nextCursor' de la página anterior")
  })
})

describe('users', () => {
  it('invite prints a one-time dashboard link for an account, owner unless told otherwise, and the link signs the person in', async ({
    gateway: app,
    cliJson,
    cliTable,
    cliFails,
  }) => {
    const account = await cliJson<CreatedAccount>(['accounts', 'create', '--name', 'Equipo'])
    const invited = await cliJson<{ id: string; email: string; role: string; invitationUrl: string; emailed: boolean }>([
      'users',
      'invite',
      account.id,
      '--email',
      'Ana@Example.com',
    ])
    expect(invited).toEqual({
      id: expect.any(String),
      email: 'ana@example.com',
      role: 'owner',
      invitationUrl: expect.stringMatching(/\/dashboard\/invitacion#/),
      emailed: false,
    })
    expect(await new DashboardBrowser(app).accept(invited)).toMatchObject({ role: 'owner' })

    const table = await cliTable(['users', 'invite', account.id, '--email', 'luis@example.com', '--role', 'viewer'])
    expect(table).toMatch(row('role', 'viewer'))
    expect(table).toMatch(/^invitationUrl +http:\/\/\S+\/dashboard\/invitacion#[A-Za-z0-9_-]{43}$/m)
    expect(table).toMatch(/Pásale el enlace: sirve una vez y caduca en 72 horas\.$/m)
    await cliFails(['users', 'invite', account.id, '--email', 'eva@example.com', '--role', 'jefe'], 1, "El campo 'role' debe ser 'owner', 'member' o 'viewer'")
    await cliFails(['users', 'invite', account.id, '--email', 'ana@example.com'], 1, 'Ya hay un usuario con el correo ana@example.com')
  })
})

describe('keys', () => {
  it('issue prints a live key, or a test key with --test', async ({ gateway: app, cliJson, cliTable }) => {
    const account = await cliJson<CreatedAccount>(['accounts', 'create', '--name', 'Llaves'])
    const test = await cliJson<{ id: string; apiKey: string; mode: string }>(['keys', 'issue', account.id, '--test'])
    expect(test).toEqual({ id: expect.any(String), apiKey: expect.stringMatching(/^lk_test_/), mode: 'test' })
    expect(await app.apiKeyAuth.identify(test.apiKey)).toMatchObject({ accountId: account.id, livemode: false })
    const table = await cliTable(['keys', 'issue', account.id])
    expect(table).toMatch(row('mode', 'live'))
    expect(table).toMatch(/^apiKey +lk_live_/m)
  })

  it('revoke stops a key at once: no output with --json (the API answers 204), a line without', async ({ gateway: app, cli, cliJson, cliTable }) => {
    const account = await cliJson<CreatedAccount>(['accounts', 'create', '--name', 'Revocada'])
    const first = await cliJson<{ id: string; apiKey: string }>(['keys', 'issue', account.id])
    const revoked = await cli(['keys', 'revoke', first.id, '--json'])
    expect(revoked).toMatchObject({ code: 0, stdout: '' })
    expect(await app.apiKeyAuth.identify(first.apiKey)).toBeNull()
    const second = await cliJson<{ id: string; apiKey: string }>(['keys', 'issue', account.id])
    expect(await cliTable(['keys', 'revoke', second.id])).toBe('API key revocada.\n')
    expect(await app.apiKeyAuth.identify(second.apiKey)).toBeNull()
    expect(await app.apiKeyAuth.identify(account.apiKey)).not.toBeNull()
  })

  it('find lists the keys a leaked key names, with their account; revoke takes the leaked key itself', async ({
    gateway: app,
    cliJson,
    cliTable,
    cliFails,
  }) => {
    const account = await cliJson<CreatedAccount>(['accounts', 'create', '--name', 'Filtrada'])
    const other = await cliJson<{ id: string; apiKey: string }>(['keys', 'issue', account.id])
    const found = await cliJson<{ data: Array<{ id: string; accountId: string; accountName: string; revokedAt: string | null }> }>([
      'keys',
      'find',
      account.apiKey,
    ])
    expect(found.data).toEqual([expect.objectContaining({ accountId: account.id, accountName: 'Filtrada', revokedAt: null })])
    expect(await cliTable(['keys', 'find', account.apiKey.slice(0, 14)])).toMatch(
      row(found.data[0]!.id, account.apiKey.slice(0, 14), 'live', account.id, 'Filtrada'),
    )

    const id = found.data[0]!.id
    expect(await cliTable(['keys', 'revoke', account.apiKey])).toBe(`API key revocada: ${id} (${account.apiKey.slice(0, 14)}…), de Filtrada (${account.id}).\n`)
    expect(await app.apiKeyAuth.identify(account.apiKey)).toBeNull()
    expect(await app.apiKeyAuth.identify(other.apiKey)).not.toBeNull()
    // Once revoked, the same key names no live key.
    await cliFails(['keys', 'revoke', account.apiKey], 1, `Ninguna API key sin revocar empieza por ${account.apiKey.slice(0, 14)}.`)
    await cliFails(['keys', 'find', 'lk_live_'], 1, "Error 400: El parámetro 'prefix' debe ser el principio visible de una API key")
    await cliFails(['keys', 'revoke', account.apiKey.slice(0, 12)], 1, 'Para revocar por la key hacen falta sus 14 primeros caracteres')
  })

  it('revoke by a start two live keys share refuses, listing them, and revokes neither', async ({ gateway: app, cliJson, cliFails }) => {
    const account = await cliJson<CreatedAccount>(['accounts', 'create', '--name', 'Gemelas'])
    // Another key whose visible start is the same (a coincidence the random part makes rare, not impossible).
    const [twin] = await app.db
      .insert(apiKeys)
      .values({ accountId: account.id, keyHash: 'f'.repeat(64), displayPrefix: account.apiKey.slice(0, 14) })
      .returning({ id: apiKeys.id })
    await cliFails(
      ['keys', 'revoke', account.apiKey.slice(0, 14)],
      1,
      `Varias API keys sin revocar empiezan por ${account.apiKey.slice(0, 14)}: revoca una por su id.`,
    )
    expect(await app.apiKeyAuth.identify(account.apiKey)).not.toBeNull()
    const [row] = await app.db.select({ revokedAt: apiKeys.revokedAt }).from(apiKeys).where(eq(apiKeys.id, twin!.id))
    expect(row?.revokedAt).toBeNull()
  })

  it('revoke of an unknown key exits 1 with the API’s message', async ({ cliFails }) => {
    await cliFails(['keys', 'revoke', '00000000-0000-4000-8000-000000000000'], 1, 'Error 404: La API key no existe')
  })
})

describe('credits add', () => {
  it('tops up, and takes credits away with a negative amount, each a ledger entry with its reason', async ({ gateway: app, cliJson, cliTable }) => {
    const account = await cliJson<CreatedAccount>(['accounts', 'create', '--name', 'Saldo', '--credits', '10'])
    expect(await cliJson(['credits', 'add', account.id, '15', '--reason', 'pedido 881'])).toEqual({ balance: 25 })
    const table = await cliTable(['credits', 'add', account.id, '-5', '--reason', 'corrección'])
    expect(table).toMatch(row('balance', 20))
    // The option before the negative amount, too.
    expect(await cliJson(['credits', 'add', '--reason', 'otra', account.id, '-1'])).toEqual({ balance: 19 })
    const entries = await app.db.select().from(ledgerEntries).where(eq(ledgerEntries.accountId, account.id)).orderBy(ledgerEntries.id)
    expect(entries.map((entry) => [entry.kind, entry.amount, entry.balanceAfter, entry.reason])).toEqual([
      ['top_up', 10, 10, 'créditos iniciales'],
      ['top_up', 15, 25, 'pedido 881'],
      ['adjustment', -5, 20, 'corrección'],
      ['adjustment', -1, 19, 'otra'],
    ])
  })

  it('refuses what the API refuses with its Spanish message, and a non-number as a usage error; nothing moves', async ({ cliJson, cliFails, apiText }) => {
    const account = await cliJson<CreatedAccount>(['accounts', 'create', '--name', 'Sin saldo', '--credits', '4'])
    await cliFails(['credits', 'add', account.id, '-5'], 1, 'Error 409: No se pueden restar 5 créditos: el saldo de la cuenta es 4')
    await cliFails(['credits', 'add', account.id, '0'], 1, "Error 400: El campo 'amount' debe ser un número entero distinto de 0 (negativo para un ajuste)")
    await cliFails(
      ['credits', 'add', account.id, 'cinco'],
      2,
      "error: command-argument value 'cinco' is invalid for argument 'amount'. El importe debe ser un número entero.",
    )
    await cliFails(['credits', 'add', account.id, '-5x'], 2, "error: unknown option '-5x'")
    expect(JSON.parse(await apiText(`/admin/accounts/${account.id}`))).toMatchObject({ balance: 4 })
  })
})

describe('designs, senders, signatures and campaigns', () => {
  it('designs add --kind picks the card or the envelope designs', async ({ gateway: app, cliJson, cliTable, account }) => {
    const card = await cliJson<{ id: string; name: string }>(['designs', 'add', account.id, '--kind', 'card', '--name', 'Tarjeta navidad'])
    // Without the product's options, the API's defaults: an A6 printed on blank stock.
    expect(card).toEqual({
      id: expect.any(String),
      name: 'Tarjeta navidad',
      format: 'A6',
      size: { width: 148, height: 105 },
      production: 'printed',
      stockCode: null,
      artwork: null,
      qrPlacement: null,
    })
    expect(await app.db.select({ accountId: cardDesigns.accountId }).from(cardDesigns).where(eq(cardDesigns.id, card.id))).toEqual([{ accountId: account.id }])
    const table = await cliTable(['designs', 'add', account.id, '--kind', 'envelope', '--name', 'Sobre kraft'])
    expect(table).toMatch(row('name', 'Sobre kraft'))
    expect(table).toMatch(row('format', 'C6'))
    expect(table).toMatch(row('size', '162 × 114 mm'))
    const id = /^id +(\S+)$/m.exec(table)?.[1]
    expect(await app.db.select({ accountId: envelopeDesigns.accountId }).from(envelopeDesigns).where(eq(envelopeDesigns.id, id!))).toEqual([
      { accountId: account.id },
    ])
  })

  it('designs add refuses a kind other than card or envelope, and a missing --kind, as usage errors', async ({ cliFails, account }) => {
    await cliFails(
      ['designs', 'add', account.id, '--kind', 'sobre', '--name', 'X'],
      2,
      "error: option '--kind <kind>' argument 'sobre' is invalid. Allowed choices are card, envelope.",
    )
    await cliFails(['designs', 'add', account.id, '--name', 'X'], 2, "error: required option '--kind <kind>' not specified")
  })

  it('senders add and signatures add, as JSON or a table', async ({ cliJson, cliTable, account }) => {
    expect(await cliJson(['senders', 'add', account.id, '--name', 'Lucía de Papelería Luna'])).toEqual({
      id: expect.any(String),
      name: 'Lucía de Papelería Luna',
      returnAddress: null,
    })
    expect(await cliTable(['senders', 'add', account.id, '--name', 'Javier'])).toMatch(row('name', 'Javier'))
    expect(await cliJson(['signatures', 'add', account.id, '--name', 'Firma azul'])).toEqual({ id: expect.any(String), name: 'Firma azul', artwork: null })
    expect(await cliTable(['signatures', 'add', account.id, '--name', 'Firma negra'])).toMatch(row('name', 'Firma negra'))
  })

  it('designs add takes the product: format, production, stock code and, for an envelope, the paper colour', async ({ cliJson, cliTable, account }) => {
    const card = await cliJson([
      'designs',
      'add',
      account.id,
      '--kind',
      'card',
      '--name',
      'Clásica A5',
      '--format',
      'A5',
      '--production',
      'preprinted',
      '--stock-code',
      'CLASICA-A5',
    ])
    expect(card).toEqual({
      id: expect.any(String),
      name: 'Clásica A5',
      format: 'A5',
      size: { width: 210, height: 148 },
      production: 'preprinted',
      stockCode: 'CLASICA-A5',
      artwork: null,
      qrPlacement: null,
    })
    // The colour without its #, as it can be typed unquoted in a shell; the API writes it in capitals.
    const table = await cliTable([
      'designs',
      'add',
      account.id,
      '--kind',
      'envelope',
      '--name',
      'Kraft DL',
      '--format',
      'DL',
      '--stock-code',
      'DL-KRAFT',
      '--paper-color',
      'c8a27a',
    ])
    expect(table).toMatch(row('format', 'DL'))
    expect(table).toMatch(row('size', '220 × 110 mm'))
    expect(table).toMatch(row('stockCode', 'DL-KRAFT'))
    expect(table).toMatch(row('paperColor', '#C8A27A'))
    expect(table).not.toMatch(/^production/m)
    expect(await cliJson(['designs', 'add', account.id, '--kind', 'card', '--name', '5x7', '--format', '5x7'])).toMatchObject({
      size: { width: 177.8, height: 127 },
    })
    expect(await cliTable(['designs', 'add', account.id, '--kind', 'card', '--name', '5x7', '--format', '5x7'])).toMatch(row('size', '177,8 × 127 mm'))
  })

  it('designs add refuses what the API refuses with its Spanish message, and the other kind’s options before sending anything', async ({
    cliFails,
    account,
  }) => {
    await cliFails(
      ['designs', 'add', account.id, '--kind', 'card', '--name', 'X', '--format', 'C6'],
      1,
      "Error 400: El campo 'format' de una tarjeta debe ser uno de: A6, A5, 5x7",
    )
    await cliFails(
      ['designs', 'add', account.id, '--kind', 'card', '--name', 'X', '--production', 'preprinted'],
      1,
      "Error 400: Un diseño 'preprinted' necesita 'stockCode'",
    )
    await cliFails(
      ['designs', 'add', account.id, '--kind', 'envelope', '--name', 'X', '--paper-color', 'kraft'],
      1,
      "Error 400: El campo 'paperColor' debe ser un color #RRGGBB",
    )
    // Refused by the CLI itself: with no gateway to reach, the message is still the CLI's own.
    const nobody = { LETTERS_URL: `http://127.0.0.1:${await freePort()}` }
    await cliFails(
      ['designs', 'add', account.id, '--kind', 'envelope', '--name', 'X', '--production', 'printed'],
      2,
      /^La opción --production solo vale para diseños de tarjeta \(--kind card\)\n$/,
      nobody,
    )
    await cliFails(
      ['designs', 'add', account.id, '--kind', 'card', '--name', 'X', '--paper-color', '#FFFFFF'],
      2,
      /^La opción --paper-color solo vale para diseños de sobre \(--kind envelope\)\n$/,
      nobody,
    )
    await cliFails(
      ['designs', 'add', account.id, '--kind', 'card', '--name', 'X', '--production', 'offset'],
      2,
      "error: option '--production <production>' argument 'offset' is invalid. Allowed choices are printed, preprinted.",
    )
  })

  it('designs update changes only what it is given, and --no-stock-code / --no-paper-color clear', async ({ cliJson, cliTable, cliFails, account }) => {
    const card = await cliJson<{ id: string }>(['designs', 'add', account.id, '--kind', 'card', '--name', 'Por cambiar', '--format', 'A5'])
    expect(await cliJson(['designs', 'update', account.id, card.id, '--kind', 'card', '--name', 'Cambiada'])).toMatchObject({
      id: card.id,
      name: 'Cambiada',
      format: 'A5',
      production: 'printed',
    })
    const table = await cliTable(['designs', 'update', account.id, card.id, '--kind', 'card', '--production', 'preprinted', '--stock-code', 'CLASICA-A5'])
    expect(table).toMatch(row('production', 'preprinted'))
    expect(table).toMatch(row('stockCode', 'CLASICA-A5'))
    expect(table).toMatch(row('name', 'Cambiada'))
    await cliFails(['designs', 'update', account.id, card.id, '--kind', 'card', '--no-stock-code'], 1, "Error 400: Un diseño 'preprinted' necesita 'stockCode'")
    expect(await cliJson(['designs', 'update', account.id, card.id, '--kind', 'card', '--production', 'printed', '--no-stock-code'])).toMatchObject({
      production: 'printed',
      stockCode: null,
    })

    const envelope = await cliJson<{ id: string }>(['designs', 'add', account.id, '--kind', 'envelope', '--name', 'Blanco', '--paper-color', '#ffffff'])
    expect(await cliJson(['designs', 'update', account.id, envelope.id, '--kind', 'envelope', '--no-paper-color'])).toMatchObject({
      id: envelope.id,
      name: 'Blanco',
      paperColor: null,
    })

    await cliFails(['designs', 'update', account.id, card.id, '--kind', 'card'], 2, /^Indica qué cambiar: --name, --format, --production/)
    // The design is looked for among the kind's designs: a card's id is no envelope design.
    await cliFails(['designs', 'update', account.id, card.id, '--kind', 'envelope', '--name', 'X'], 1, 'Error 404: El diseño de sobre no existe')
    await cliFails(
      ['designs', 'update', account.id, '00000000-0000-4000-8000-000000000000', '--kind', 'card', '--name', 'X'],
      1,
      'Error 404: El diseño de tarjeta no existe',
    )
  })

  it("designs --qr places a card's QR code, --no-qr puts it back in its default place, and a malformed or refused place is an error", async ({
    cliJson,
    cliTable,
    cliFails,
    account,
  }) => {
    const card = await cliJson<{ id: string }>(['designs', 'add', account.id, '--kind', 'card', '--name', 'Con QR', '--qr', 'top-left:20'])
    expect(card).toMatchObject({ qrPlacement: { corner: 'top-left', sizeMm: 20 } })
    expect(await cliTable(['designs', 'update', account.id, card.id, '--kind', 'card', '--qr', 'bottom-left:15.5'])).toMatch(
      row('qrPlacement', 'bottom-left, 15.5 mm'),
    )
    expect(await cliJson(['designs', 'update', account.id, card.id, '--kind', 'card', '--no-qr'])).toMatchObject({ qrPlacement: null })
    await cliFails(['designs', 'update', account.id, card.id, '--kind', 'card', '--qr', 'arriba'], 2, /Escribe el sitio del código QR como rincón:milímetros/)
    await cliFails(['designs', 'update', account.id, card.id, '--kind', 'card', '--qr', 'top-left:10'], 1, /^Error 400: .*sizeMm/)
    await cliFails(
      ['designs', 'add', account.id, '--kind', 'envelope', '--name', 'X', '--qr', 'top-left:20'],
      2,
      'La opción --qr solo vale para diseños de tarjeta (--kind card)',
    )
  })

  it('designs artwork uploads the file as it is, typed by its extension, a new version each time', async ({ cliJson, cliTable, account }) => {
    const card = await cliJson<{ id: string }>(['designs', 'add', account.id, '--kind', 'card', '--name', 'Con arte'])
    const svg = Buffer.from(cardSvg('A6'))
    const svgFile = join(scratch, 'frente.svg')
    await writeFile(svgFile, svg)
    expect(await cliJson(['designs', 'artwork', account.id, card.id, svgFile, '--kind', 'card'])).toMatchObject({
      id: card.id,
      artwork: { contentType: 'image/svg+xml', bytes: svg.length, sha256: createHash('sha256').update(svg).digest('hex'), version: 1 },
    })
    // A PDF of the card's size with bleed; the extension in capitals is the same type.
    const pdf = await pdfOf(154, 111)
    const pdfFile = join(scratch, 'FRENTE.PDF')
    await writeFile(pdfFile, pdf)
    const table = await cliTable(['designs', 'artwork', account.id, card.id, pdfFile, '--kind', 'card'])
    expect(table).toMatch(/^artwork +v2 application\/pdf [\d,]+ KB$/m)
    expect(table).toMatch(row('sha256', createHash('sha256').update(pdf).digest('hex')))

    const envelope = await cliJson<{ id: string }>(['designs', 'add', account.id, '--kind', 'envelope', '--name', 'Con logo'])
    const logoFile = join(scratch, 'logo.png')
    await writeFile(logoFile, await pngOf(600, 240, { alpha: true }))
    expect(await cliJson(['designs', 'artwork', account.id, envelope.id, logoFile, '--kind', 'envelope'])).toMatchObject({
      id: envelope.id,
      artwork: { contentType: 'image/png', version: 1 },
    })
    const logoSvgFile = join(scratch, 'logo.svg')
    await writeFile(logoSvgFile, logoSvg)
    expect(await cliTable(['designs', 'artwork', account.id, envelope.id, logoSvgFile, '--kind', 'envelope'])).toMatch(/^artwork +v2 image\/svg\+xml \d+ B$/m)
  })

  it('designs artwork refuses a file of another type, missing or too large before sending it, and says what the API refuses', async ({
    cliJson,
    cliFails,
    account,
  }) => {
    const card = await cliJson<{ id: string }>(['designs', 'add', account.id, '--kind', 'card', '--name', 'Sin arte'])
    const nobody = { LETTERS_URL: `http://127.0.0.1:${await freePort()}` }
    const jpeg = join(scratch, 'foto.jpg')
    await writeFile(jpeg, 'no importa')
    await cliFails(
      ['designs', 'artwork', account.id, card.id, jpeg, '--kind', 'card'],
      1,
      `El fichero '${jpeg}' no es .svg, .pdf ni .png: el arte de un diseño se sube como SVG, PDF o PNG (el tipo se deduce de la extensión)`,
      nobody,
    )
    const missing = join(scratch, 'no-existe.svg')
    await cliFails(['designs', 'artwork', account.id, card.id, missing, '--kind', 'card'], 1, `No existe el fichero '${missing}'`, nobody)
    const folder = join(scratch, 'carpeta.png')
    await mkdir(folder, { recursive: true })
    await cliFails(['designs', 'artwork', account.id, card.id, folder, '--kind', 'card'], 1, `'${folder}' es una carpeta, no un fichero`, nobody)
    // 21 MB without writing them: a sparse file.
    const large = join(scratch, 'enorme.png')
    await writeFile(large, '')
    await truncate(large, 21 * 1024 * 1024)
    await cliFails(['designs', 'artwork', account.id, card.id, large, '--kind', 'card'], 1, `El fichero '${large}' ocupa 21 MB: el máximo es 20 MB`, nobody)
    await cliFails(['designs', 'artwork', account.id, card.id, jpeg], 2, "error: required option '--kind <kind>' not specified")

    // The API judges the file itself: its proportions, and whether its bytes are what its extension says.
    const square = join(scratch, 'cuadrada.svg')
    await writeFile(square, '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100"><rect width="100" height="100"/></svg>')
    await cliFails(['designs', 'artwork', account.id, card.id, square, '--kind', 'card'], 1, /^Error 400: El SVG tiene una proporción \(ancho\/alto\) de 1,00/)
    const disguised = join(scratch, 'en-realidad-png.svg')
    await writeFile(disguised, await pngOf(1748, 1240))
    await cliFails(['designs', 'artwork', account.id, card.id, disguised, '--kind', 'card'], 1, /^Error 400: /)
    expect(await cliJson(['designs', 'update', account.id, card.id, '--kind', 'card', '--name', 'Sigue sin arte'])).toMatchObject({ artwork: null })
  })

  it('senders add and update take a return address, checked and normalized by the API', async ({ cliJson, cliTable, cliFails, account }) => {
    const address = [
      '--return-name',
      'Papelería Luna',
      '--return-address',
      'calle sierpes 4',
      '--return-zip',
      '41004',
      '--return-city',
      'sevilla',
      '--return-country',
      'es',
    ]
    const sender = await cliJson<{ id: string }>(['senders', 'add', account.id, '--name', 'Lucía', ...address])
    expect(sender).toEqual({
      id: expect.any(String),
      name: 'Lucía',
      returnAddress: {
        name: 'Papelería Luna',
        company: null,
        address: 'Calle Sierpes 4',
        zip: '41004',
        city: 'Sevilla',
        province: 'Sevilla',
        country: 'ES',
        countryName: 'España',
      },
    })
    const table = await cliTable([
      'senders',
      'update',
      account.id,
      sender.id,
      '--name',
      'Lucía G.',
      ...address,
      '--return-company',
      'Luna SL',
      '--return-province',
      'Sevilla',
    ])
    expect(table).toMatch(row('name', 'Lucía G.'))
    expect(table).toMatch(row('returnAddress', 'Papelería Luna, Luna SL, Calle Sierpes 4, 41004 Sevilla, Sevilla, España'))
    expect(await cliJson(['senders', 'update', account.id, sender.id, '--name', 'Lucía'])).toMatchObject({
      name: 'Lucía',
      returnAddress: { company: 'Luna SL' },
    })
    expect(await cliJson(['senders', 'update', account.id, sender.id, '--no-return-address'])).toEqual({ id: sender.id, name: 'Lucía', returnAddress: null })

    await cliFails(
      ['senders', 'add', account.id, '--name', 'X', '--return-zip', '41004', '--return-country', 'ES'],
      2,
      'La dirección de remite está incompleta: faltan --return-name, --return-address y --return-city (se necesitan --return-name, --return-address, --return-zip, --return-city y --return-country; --return-company y --return-province son opcionales)',
    )
    await cliFails(
      ['senders', 'update', account.id, sender.id, '--no-return-address', '--return-zip', '41004'],
      2,
      '--no-return-address quita la dirección de remite: no se puede dar junto con --return-zip',
    )
    await cliFails(['senders', 'update', account.id, sender.id], 2, 'Indica qué cambiar: --name, la dirección de remite (--return-…) o --no-return-address')
    await cliFails(
      ['senders', 'add', account.id, '--name', 'X', ...address.slice(0, 4), '--return-zip', '99999', ...address.slice(6)],
      1,
      /^Error 400: La dirección de remite no es válida: /,
    )
    await cliFails(['senders', 'update', account.id, '00000000-0000-4000-8000-000000000000', '--name', 'X'], 1, 'Error 404: El remitente no existe')
  })

  it('signatures artwork uploads an SVG of paths or a PNG, and refuses a PDF before sending it', async ({ cliJson, cliTable, cliFails, account }) => {
    const signature = await cliJson<{ id: string }>(['signatures', 'add', account.id, '--name', 'Firma de Ana'])
    const svgFile = join(scratch, 'firma.svg')
    await writeFile(svgFile, signatureSvg)
    expect(await cliJson(['signatures', 'artwork', account.id, signature.id, svgFile])).toEqual({
      id: signature.id,
      name: 'Firma de Ana',
      artwork: {
        contentType: 'image/svg+xml',
        bytes: Buffer.byteLength(signatureSvg),
        sha256: createHash('sha256').update(signatureSvg).digest('hex'),
        version: 1,
      },
    })
    const pngFile = join(scratch, 'firma.png')
    await writeFile(pngFile, await pngOf(600, 200, { alpha: true }))
    expect(await cliTable(['signatures', 'artwork', account.id, signature.id, pngFile])).toMatch(/^artwork +v2 image\/png [\d,]+ KB$/m)

    const pdfFile = join(scratch, 'firma.pdf')
    await writeFile(pdfFile, await pdfOf(60, 20))
    await cliFails(
      ['signatures', 'artwork', account.id, signature.id, pdfFile],
      1,
      `El fichero '${pdfFile}' no es .svg ni .png: una firma se sube como SVG de trazos o PNG (el tipo se deduce de la extensión)`,
      { LETTERS_URL: `http://127.0.0.1:${await freePort()}` },
    )
    const lettered = join(scratch, 'firma-texto.svg')
    await writeFile(lettered, '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 120 40"><text x="10" y="30">Ana</text></svg>')
    await cliFails(['signatures', 'artwork', account.id, signature.id, lettered], 1, /^Error 400: La firma contiene un elemento <text>/)
    await cliFails(['signatures', 'artwork', account.id, '00000000-0000-4000-8000-000000000000', svgFile], 1, 'Error 404: La firma no existe')
  })

  it('fonts add, file and list create an account font, upload its file typed by its extension, and show both', async ({
    cliJson,
    cliTable,
    cliFails,
    account,
  }) => {
    expect(await cliJson(['fonts', 'add', account.id, '--name', 'mi-letra', '--family', 'Mi Letra', '--plotter-font', 'kalam'])).toEqual({
      name: 'mi-letra',
      family: 'Mi Letra',
      plotterFont: 'kalam',
      file: null,
    })
    const woff2 = await readFile(createRequire(import.meta.url).resolve('@fontsource/patrick-hand/files/patrick-hand-latin-400-normal.woff2'))
    const fontFile = join(scratch, 'MiLetra.WOFF2')
    await writeFile(fontFile, woff2)
    const table = await cliTable(['fonts', 'file', account.id, 'mi-letra', fontFile])
    expect(table).toMatch(/^file +v1 font\/woff2 [\d,]+ KB$/m)
    expect(table).toMatch(row('sha256', createHash('sha256').update(woff2).digest('hex')))
    expect(await cliTable(['fonts', 'list', account.id])).toMatch(/^mi-letra +Mi Letra +kalam +v1 font\/woff2 [\d,]+ KB$/m)
    const zipFile = join(scratch, 'letra.zip')
    await writeFile(zipFile, 'no importa')
    await cliFails(
      ['fonts', 'file', account.id, 'mi-letra', zipFile],
      1,
      `El fichero '${zipFile}' no es .ttf, .otf, .woff ni .woff2: una fuente se sube como TTF, OTF, WOFF o WOFF2 (el tipo se deduce de la extensión)`,
      { LETTERS_URL: `http://127.0.0.1:${await freePort()}` },
    )
    const notAFont = join(scratch, 'rota.ttf')
    await writeFile(notAFont, 'esto no es una fuente')
    await cliFails(['fonts', 'file', account.id, 'mi-letra', notAFont], 1, /^Error 400: /)
    await cliFails(['fonts', 'add', account.id, '--name', 'caveat', '--family', 'X'], 1, /^Error 400: El nombre 'caveat' es el de una letra incluida/)
  })

  it('campaigns add reads the body from the file, as JSON or a table', async ({ cliJson, cliTable, account }) => {
    const [cardDesign, envelopeDesign, sender] = await Promise.all([
      cliJson<{ id: string }>(['designs', 'add', account.id, '--kind', 'card', '--name', 'T']),
      cliJson<{ id: string }>(['designs', 'add', account.id, '--kind', 'envelope', '--name', 'S']),
      cliJson<{ id: string }>(['senders', 'add', account.id, '--name', 'R']),
    ])
    const body = {
      name: 'Otoño',
      cardDesignId: cardDesign.id,
      envelopeDesignId: envelopeDesign.id,
      senderId: sender.id,
      message: 'Hola {{nombre}}, tu cupón es {{cupon}}.',
      variables: [
        { name: 'nombre', maxSize: 40, defaultValue: 'amigo', example: 'Lucía' },
        { name: 'cupon', maxSize: 10, defaultValue: null, example: 'OTONO10' },
      ],
    }
    const file = join(scratch, 'campaign.json')
    await writeFile(file, JSON.stringify(body))
    const campaign = await cliJson<{ id: string; name: string; active: boolean; variables: unknown[] }>(['campaigns', 'add', account.id, '--file', file])
    expect(campaign).toEqual({ id: expect.any(String), name: 'Otoño', active: true, variables: body.variables, trackingUrl: null })
    const table = await cliTable(['campaigns', 'add', account.id, '--file', file])
    expect(table).toMatch(row('name', 'Otoño'))
    expect(table).toMatch(row('nombre', 40, 'amigo', 'Lucía'))
  })

  it('campaigns add says what is wrong with a missing file, bad JSON or a body the API refuses', async ({ cliFails, account }) => {
    const missing = join(scratch, 'no-existe.json')
    await cliFails(['campaigns', 'add', account.id, '--file', missing], 1, `No existe el fichero '${missing}'`)
    const broken = join(scratch, 'rota.json')
    await writeFile(broken, '{"name": "Otoño",')
    await cliFails(['campaigns', 'add', account.id, '--file', broken], 1, `El fichero '${broken}' no es un JSON válido: `)
    await cliFails(['campaigns', 'add', account.id, '--file', scratch], 1, `'${scratch}' es una carpeta, no un fichero JSON`)
    const incomplete = join(scratch, 'incompleta.json')
    await writeFile(incomplete, JSON.stringify({ name: 'Otoño' }))
    await cliFails(['campaigns', 'add', account.id, '--file', incomplete], 1, /^Error 400: El campo '\w+' es obligatorio/)
    await cliFails(['campaigns', 'add', account.id], 2, "error: required option '--file <file>' not specified")
  })
})

describe('letters', () => {
  /** A letter sent through the public API, put in `status` by hand (no worker runs here). */
  async function letterIn(app: App, owner: Account, status: 'received' | 'printed' | 'failed') {
    const response = await app.inject({
      method: 'POST',
      url: '/single',
      headers: { 'x-api-key': owner.apiKey },
      payload: {
        cardDesignId: owner.cardDesignId,
        envelopeDesignId: owner.envelopeDesignId,
        senderId: owner.senderId,
        message: 'Gracias',
        name: 'Lucía',
        surname: 'García',
        address: 'Calle Mayor 1',
        zip: '28013',
        city: 'Madrid',
        country: 'ES',
      },
    })
    expect(response.statusCode, response.body).toBe(200)
    const id = response.json<{ cardId: string }>().cardId
    if (status !== 'received') await app.db.update(letters).set({ status }).where(eq(letters.id, id))
    return id
  }

  it('show prints any account’s letter, as the API’s JSON or as tables with its history', async ({ gateway: app, cli, cliTable, apiText, account: owner }) => {
    const id = await letterIn(app, owner, 'received')
    const json = await cli(['letters', 'show', id, '--json'])
    expect(json.stdout).toBe(`${await apiText(`/admin/cards/${id}`)}\n`)
    const table = await cliTable(['letters', 'show', id])
    expect(table).toMatch(row('accountId', owner.id))
    expect(table).toMatch(row('status', 'received'))
    expect(table).toMatch(row('recipient', 'Lucía García, Calle Mayor 1, 28013 Madrid, ES'))
    expect(table).toMatch(row('status', 'at', 'detail'))
  })

  it('show of an unknown letter exits 1 with the API’s message', async ({ cliFails }) => {
    await cliFails(['letters', 'show', '00000000-0000-4000-8000-000000000000'], 1, 'Error 404: La carta no existe')
  })

  it('mailed marks a printed letter mailed, and a second time says why not', async ({ gateway: app, cliJson, cliTable, cliFails, account: owner }) => {
    const id = await letterIn(app, owner, 'printed')
    expect(await cliJson(['letters', 'mailed', id])).toMatchObject({ id, status: 'mailed' })
    await cliFails(['letters', 'mailed', id], 1, 'Error 409: La carta ya se marcó como enviada el ')
    const other = await letterIn(app, owner, 'printed')
    expect(await cliTable(['letters', 'mailed', other])).toMatch(row('status', 'mailed'))
  })

  it('stuck lists the letters that need ops, and retry sends a failed one back to production once', async ({
    gateway: app,
    cli,
    cliJson,
    cliTable,
    cliFails,
    apiText,
    account: owner,
  }) => {
    const failed = await letterIn(app, owner, 'failed')
    const stuck = await cli(['letters', 'stuck', '--json'])
    // The API's JSON as it is (one line), but for the age, which grows between the two reads.
    const list = JSON.parse(stuck.stdout) as { data: Array<{ id: string; stuckForSeconds: number }> }
    expect(stuck.stdout).toBe(`${JSON.stringify(list)}\n`)
    const ageless = (page: typeof list) => ({ ...page, data: page.data.map((letter) => ({ ...letter, stuckForSeconds: 0 })) })
    expect(ageless(list)).toEqual(ageless(JSON.parse(await apiText('/admin/stuck-letters')) as typeof list))
    expect(list.data.map((letter) => letter.id)).toContain(failed)
    expect(await cliTable(['letters', 'stuck'])).toMatch(row(failed, owner.id, 'live', 'failed'))

    expect(await cliJson(['letters', 'retry', failed])).toMatchObject({ id: failed, accountId: owner.id, status: 'ready_for_print' })
    await cliFails(
      ['letters', 'retry', failed],
      1,
      'Error 409: La carta está en la cola de producción y no está atascada: no hay nada que reintentar (se considera atascada tras 1 min sin avanzar)',
    )
    expect(await cliTable(['letters', 'stuck'])).not.toContain(failed)

    const another = await letterIn(app, owner, 'failed')
    const table = await cliTable(['letters', 'retry', another])
    expect(table).toMatch(row('status', 'ready_for_print'))
    expect(table).toMatch(/^ready_for_print +\S+ +Reintento de producción pedido por operaciones$/m)
  })

  it('stuck says so when no letter is stuck', async ({ gateway: app, cliTable }) => {
    await app.db.execute(sql`UPDATE letters SET status = 'mailed' WHERE status = 'failed'`)
    expect(await cliTable(['letters', 'stuck'])).toBe('No hay cartas atascadas.\n')
  })

  type ListedLetter = { id: string; accountId: string; livemode: boolean; status: string; campaignId: string | null; createdAt: string }
  type LetterPage = { data: ListedLetter[]; nextCursor: string | null }

  it('list shows every account’s letters newest first, and each of --account, --mode, --status, --campaign, --from and --to narrows it', async ({
    gateway: app,
    cli,
    cliJson,
    cliTable,
    apiText,
    account: owner,
    campaign,
  }) => {
    /** A letter of `owner` created at `createdAt`, in `status`, and `changes` put in by hand. */
    const letterAt = async (createdAt: string, status: 'received' | 'printed' | 'failed', changes: Partial<typeof letters.$inferInsert> = {}) => {
      const id = await letterIn(app, owner, status)
      await app.db
        .update(letters)
        .set({ createdAt: new Date(createdAt), ...changes })
        .where(eq(letters.id, id))
      return id
    }
    const january = await letterAt('2026-01-10T10:00:00Z', 'received')
    const february = await letterAt('2026-02-10T10:00:00Z', 'failed', { type: 'campaign', campaignId: campaign })
    const march = await letterAt('2026-03-10T10:00:00Z', 'printed', { livemode: false })
    const other = await adminAccount(app, 10)
    const others = await letterIn(app, other, 'received')

    const ids = async (args: string[]) => (await cliJson<LetterPage>(['letters', 'list', ...args])).data.map((letter) => letter.id)
    expect(await ids(['--account', owner.id])).toEqual([march, february, january])
    expect(await ids(['--account', owner.id, '--mode', 'live'])).toEqual([february, january])
    expect(await ids(['--account', owner.id, '--mode', 'test'])).toEqual([march])
    expect(await ids(['--account', owner.id, '--status', 'failed'])).toEqual([february])
    expect(await ids(['--campaign', campaign])).toEqual([february])
    // Bounds with an offset, its + sent encoded: [from, to).
    expect(await ids(['--account', owner.id, '--from', '2026-02-10T11:00:00+01:00', '--to', '2026-03-10T10:00:00Z'])).toEqual([february])
    expect(await ids(['--account', owner.id, '--from', '2026-02-10T10:00:00.001Z'])).toEqual([march])
    expect(await ids(['--account', owner.id, '--to', '2026-02-10T10:00:00Z'])).toEqual([january])
    expect(await ids(['--account', owner.id, '--status', 'failed', '--mode', 'test'])).toEqual([])

    // Without --account, every account's: the other account's newer letter first.
    const all = await cliJson<LetterPage>(['letters', 'list', '--limit', '100'])
    expect(all.data.map((letter) => letter.id)).toEqual(expect.arrayContaining([others, march, february, january]))
    expect(all.data.map((letter) => letter.id).indexOf(others)).toBeLessThan(all.data.map((letter) => letter.id).indexOf(march))
    const instants = all.data.map((letter) => Date.parse(letter.createdAt))
    expect(instants).toEqual([...instants].sort((a, b) => b - a))
    expect(all.data.find((letter) => letter.id === february)).toMatchObject({ accountId: owner.id, livemode: true, status: 'failed', campaignId: campaign })

    // --json is the admin API's JSON as it is, one document.
    const json = await cli(['letters', 'list', '--account', owner.id, '--status', 'failed', '--json'])
    expect(json).toEqual({ code: 0, stdout: `${await apiText(`/admin/cards?accountId=${owner.id}&status=failed`)}\n`, stderr: '' })

    const table = await cliTable(['letters', 'list', '--account', owner.id])
    expect(table.split('\n')[0]).toMatch(row('id', 'accountId', 'mode', 'status', 'recipient', 'campaignId', 'createdAt'))
    expect(table).toMatch(row(february, owner.id, 'live', 'failed', 'Lucía García, Madrid', campaign, '2026-02-10T10:00:00.000Z'))
    expect(table).toMatch(row(march, owner.id, 'test', 'printed', 'Lucía García, Madrid', '2026-03-10T10:00:00.000Z'))
    expect(table).not.toContain(others)
    expect(await cliTable(['letters', 'list', '--account', other.id, '--status', 'failed'])).toBe('No hay cartas que mostrar.\n')
  })

  it('list goes a page at a time with --limit, the table saying how to ask for the next one', async ({ gateway: app, cliJson, cliTable, account: owner }) => {
    const sent = [await letterIn(app, owner, 'received'), await letterIn(app, owner, 'received'), await letterIn(app, owner, 'received')]
    const first = await cliJson<LetterPage>(['letters', 'list', '--account', owner.id, '--limit', '2'])
    expect(first.data).toHaveLength(2)
    expect(first.nextCursor).toEqual(expect.any(String))
    expect(await cliTable(['letters', 'list', '--account', owner.id, '--limit', '2'])).toContain(`Hay más: repite la orden con --cursor ${first.nextCursor}`)
    const second = await cliJson<LetterPage>(['letters', 'list', '--account', owner.id, '--limit', '2', '--cursor', first.nextCursor!])
    expect(second.nextCursor).toBeNull()
    expect([...first.data, ...second.data].map((letter) => letter.id).sort()).toEqual([...sent].sort())
  })

  it('list refuses a status that is none, in Spanish and before asking the API, and a date the API does not take', async ({ cliFails }) => {
    const refused = await cliFails(['letters', 'list', '--status', 'enviada'], 2, "error: option '--status <status>' argument 'enviada' is invalid.")
    expect(refused.stderr).toContain('El estado debe ser uno de: scheduled (programada), received (recibida), ready_for_print (lista para imprimir),')
    await cliFails(
      ['letters', 'list', '--from', 'ayer'],
      1,
      /^Error 400: El parámetro 'from' debe ser una fecha y hora ISO 8601 con zona horaria; 'ayer' no lo es\n$/,
    )
    await cliFails(
      ['letters', 'list', '--to', '2026-11-01'],
      1,
      /^Error 400: El parámetro 'to' debe ser una fecha y hora ISO 8601 con zona horaria; '2026-11-01' no lo es\n$/,
    )
    await cliFails(['letters', 'list', '--to', '2026-13-01T00:00:00Z', '--json'], 1, /^Error 400: El parámetro 'to' /)
    await cliFails(['letters', 'list', '--limit', 'diez'], 2, '--limit debe ser un número entero.')
    await cliFails(['letters', 'list', '--limit', '99999999999999999999999'], 2, '--limit es demasiado grande: 99999999999999999999999.')
    await cliFails(['letters', 'list', '--mode', 'real'], 2, "error: option '--mode <mode>' argument 'real' is invalid. Allowed choices are live, test.")
  })
})

describe('errors', () => {
  it('an unknown account: the API’s Spanish message on stderr, exit 1', async ({ cliFails }) => {
    await cliFails(['accounts', 'show', '00000000-0000-4000-8000-000000000000'], 1, /^Error 404: La cuenta no existe\n$/)
    await cliFails(['credits', 'add', '00000000-0000-4000-8000-000000000000', '5', '--json'], 1, /^Error 404: La cuenta no existe\n$/)
  })

  it('a wrong token: the API’s 401 message, exit 1', async ({ cliFails }) => {
    await cliFails(['accounts', 'list'], 1, /^Error 401: El token de administración no es válido o no se ha enviado/, {
      ADMIN_TOKEN: 'otro-token-cualquiera-123',
    })
  })

  it('no ADMIN_TOKEN: says to export it, exit 1, without calling the gateway', async ({ cliFails }) => {
    await cliFails(['accounts', 'list'], 1, /^Falta ADMIN_TOKEN: exporta el token de administración del gateway/, { ADMIN_TOKEN: undefined })
  })

  it('the gateway down: says it cannot reach it and where, exit 1', async ({ cliFails }) => {
    const nobody = `http://127.0.0.1:${await freePort()}`
    await cliFails(['accounts', 'list'], 1, `No se puede conectar con el gateway en ${nobody} (ECONNREFUSED): ¿está en marcha? Revisa LETTERS_URL`, {
      LETTERS_URL: nobody,
    })
  })

  it('a LETTERS_URL that is not an http(s) URL is refused by its declaration, as a service refuses a malformed variable, exit 1', async ({ cliFails }) => {
    for (const malformed of ['gateway:3000', 'no es una url', 'ftp://127.0.0.1:3000']) {
      const message = `Invalid configuration: LETTERS_URL=${malformed}: must be an http:// or https:// URL (e.g. http://127.0.0.1:3000)\n`
      const refused = await cliFails(['accounts', 'list'], 1, message, { LETTERS_URL: malformed })
      expect(refused.stderr).toBe(message)
    }
  })

  it('an ADMIN_TOKEN shorter than any gateway takes is refused without printing it, exit 1', async ({ cliFails }) => {
    await cliFails(['accounts', 'list'], 1, /^Invalid configuration: ADMIN_TOKEN=\(not shown\): must be at least 16 characters long\n$/, {
      ADMIN_TOKEN: 'short-secret',
    })
  })

  it('a malformed DATABASE_URL is refused for migrate, by its declaration and by the loader’s rules past it, exit 1', async ({ cliFails }) => {
    const only = { LETTERS_URL: undefined, ADMIN_TOKEN: undefined }
    await cliFails(
      ['migrate', '--status'],
      1,
      /^Invalid configuration: DATABASE_URL=mysql:\/\/db\/letters: must be a postgres:\/\/ or postgresql:\/\/ URL\n$/,
      {
        ...only,
        DATABASE_URL: 'mysql://db/letters',
      },
    )
    await cliFails(['migrate', '--status'], 1, /^Invalid configuration: DATABASE_URL: its \?max= is not read; set the pool size with DATABASE_POOL_MAX\n$/, {
      ...only,
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/letters?max=5',
    })
  })

  it('migrate runs with DATABASE_URL alone: LETTERS_URL and ADMIN_TOKEN unset are no error', async ({ gateway, cli }) => {
    const result = await cli(['migrate', '--status'], { LETTERS_URL: undefined, ADMIN_TOKEN: undefined, DATABASE_URL: gateway.config.databaseUrl })
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' })
    expect(result.stdout).toMatch(/^pending +ninguna$/m)
  })

  it('an unknown command is a usage error, exit 2', async ({ cliFails }) => {
    await cliFails(['accounts', 'borrar'], 2, "error: unknown command 'borrar'")
    await cliFails([], 2, /Usage: admin \[options\] \[command\]/)
  })

  it('an unknown command names itself and the commands there are, exit 2, instead of a help page', async ({ cliFails }) => {
    await cliFails(
      ['letters', 'frobnicate'],
      2,
      /^error: unknown command 'frobnicate'\nThe commands of admin letters: list, show, mailed, returned, stuck, retry, reconcile\n\(add --help for usage\)\n$/,
    )
    await cliFails(
      ['frobnicate'],
      2,
      /^error: unknown command 'frobnicate'\nThe commands of admin: accounts, users, keys, credits, designs, senders, signatures, fonts, campaigns, letters, suppressions, migrate\n/,
    )
    await cliFails(['suppressions', 'lst'], 2, /^error: unknown command 'lst'\n\(Did you mean list\?\)\nThe commands of admin suppressions: list, lift\n/)
    // A command's own usage errors do not list its group's commands.
    await cliFails(['letters', 'show'], 2, /^error: missing required argument 'letter'\n\(add --help for usage\)\n$/)
  })

  // The compiled entry point, as npm run admin runs it once built (scripts/admin.mjs).
  it(
    'the entry point, in a process of its own: its environment read and a malformed variable refused, 0, 1 and 2 as its exit codes, messages on stderr only',
    { timeout: 60_000 },
    async ({ run }) => {
      const entry = (args: string[], env: CliEnv = {}) => run(process.execPath, [`--conditions=${BUILT_CONDITION}`, 'packages/cli/dist/main.js', ...args], env)
      // Each reads only, so they run side by side.
      const [listed, unknown, tokenless, malformed, usage, subcommand] = await Promise.all([
        entry(['accounts', 'list', '--json']),
        entry(['accounts', 'show', '00000000-0000-4000-8000-000000000000']),
        entry(['accounts', 'list'], { ADMIN_TOKEN: undefined }),
        entry(['accounts', 'list'], { LETTERS_URL: 'gateway:3000' }),
        entry(['accounts', 'borrar']),
        entry(['letters', 'frobnicate']),
      ])
      expect({ code: listed.code, stderr: listed.stderr }).toEqual({ code: 0, stderr: '' })
      expect(JSON.parse(listed.stdout)).toMatchObject({ data: expect.any(Array) })
      expect(unknown).toEqual({ code: 1, stdout: '', stderr: 'Error 404: La cuenta no existe\n' })
      expect(tokenless).toMatchObject({ code: 1, stdout: '', stderr: expect.stringMatching(/^Falta ADMIN_TOKEN/) })
      expect(malformed).toEqual({
        code: 1,
        stdout: '',
        stderr: 'Invalid configuration: LETTERS_URL=gateway:3000: must be an http:// or https:// URL (e.g. http://127.0.0.1:3000)\n',
      })
      expect(usage).toMatchObject({ code: 2, stdout: '', stderr: expect.stringContaining("error: unknown command 'borrar'") })
      expect(subcommand).toMatchObject({
        code: 2,
        stdout: '',
        stderr: expect.stringContaining("error: unknown command 'frobnicate'\nThe commands of admin letters: list,"),
      })
    },
  )
})

describe('--help', () => {
  it('lists the commands, without needing a token', async ({ cli }) => {
    const result = await cli(['--help'], { ADMIN_TOKEN: undefined })
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/^Usage: admin \[options\] \[command\]/)
    for (const group of ['accounts', 'keys', 'credits', 'designs', 'senders', 'signatures', 'campaigns', 'letters'])
      expect(result.stdout).toMatch(new RegExp(`^  ${group} `, 'm'))
  })

  it.for<[string[], string[]]>([
    [
      ['accounts', '--help'],
      ['create [options]', 'show [options] <account>', 'list [options]'],
    ],
    [
      ['accounts', 'create', '--help'],
      ['--name <name>', '--credits <credits>', '--json'],
    ],
    [
      ['credits', 'add', '--help'],
      ['<account> <amount>', 'negative for an', '--reason <reason>', 'credits add <account> -5'],
    ],
    [
      ['designs', 'add', '--help'],
      [
        '--kind <kind>',
        'choices: "card", "envelope"',
        '--name <name>',
        '--format <format>',
        'choices: "printed", "preprinted"',
        '--stock-code <code>',
        '--paper-color <color>',
      ],
    ],
    [
      ['designs', 'update', '--help'],
      ['<account> <design>', '--no-stock-code', '--no-paper-color', 'designs update <account> <design> --kind card'],
    ],
    [
      ['designs', 'artwork', '--help'],
      ['<account> <design> <file>', '.svg, .pdf or .png', '154 × 111 mm', '--kind <kind>'],
    ],
    [
      ['senders', 'add', '--help'],
      ['--name <name>', '--return-name <name>', '--return-address <street>', '--return-zip <zip>', '--return-city <city>', '--return-country <country>'],
    ],
    [
      ['senders', 'update', '--help'],
      ['<account> <sender>', '--no-return-address', 'replaced whole'],
    ],
    [
      ['signatures', 'artwork', '--help'],
      ['<account> <signature> <file>', '.svg or .png'],
    ],
    [
      ['letters', 'retry', '--help'],
      ['<letter>', 'send a failed letter back to production', '--json'],
    ],
    [
      ['accounts', 'list', '--help'],
      ['--limit <n>', 'accounts per page (1-100, default 20)', '--cursor <cursor>', 'the next page, as the previous one said', '--json'],
    ],
    [
      ['letters', 'stuck', '--help'],
      ['--limit <n>', 'letters per page (1-100, default 20)', '--cursor <cursor>', 'the next page, as the previous one said', '--json'],
    ],
    [
      ['suppressions', 'list', '--help'],
      ['--mode <mode>', '--limit <n>', 'entries per page (1-100, default 20)', '--cursor <cursor>', 'the next page, as the previous one said', '--json'],
    ],
    [
      ['help', 'letters'],
      ['list [options]', 'show [options] <letter>', 'mailed [options] <letter>', 'stuck [options]', 'retry [options] <letter>'],
    ],
    [
      ['letters', 'list', '--help'],
      [
        '--account <account>',
        '--mode <mode>',
        '--status <status>',
        'address_rejected',
        '--campaign <campaign>',
        '--from <date>',
        '--to <date>',
        '--limit <n>',
        'letters per page (1-100, default 20)',
        '--cursor <cursor>',
        'the next page, as the previous one said',
        '--json',
      ],
    ],
  ])('%j shows its usage', async ([args, expected], { cli }) => {
    const result = await cli(args, { ADMIN_TOKEN: undefined })
    expect(result.code, result.stderr).toBe(0)
    for (const text of expected) expect(result.stdout).toContain(text)
  })
})
